r"""SynLogic ``star_placement_puzzle``: place stars in an n x n grid split into regions
(``metadata["region_grid"]``) so that every row, column and region holds exactly k stars
(``metadata["k"]``) and no two stars touch, diagonals included.

Answer: a dict literal ``{region: [(row, col), ...]}`` with 1-based coordinates in the last
fenced ``python`` block (``name = {...}`` accepted).  Correct when the set of all listed cells
meets every count and the no-touching rule (the region labels of the dict are not trusted: the
region of a cell is read from ``region_grid``).
"""

from __future__ import annotations

import re

from verl_focal.ood.synlogic._common import code_block, parse_literal

REQUIRED_METADATA = ("n", "k", "region_grid")
_DICT = re.compile(r"\{[^{}]*\}", re.DOTALL)


def stars(text: str, n: int) -> set[tuple[int, int]] | None:
    src = code_block(text)
    if src is None:
        return None
    found = _DICT.findall(src)
    obj = parse_literal(found[-1]) if found else None
    if not isinstance(obj, dict):
        return None
    cells = set()
    for coords in obj.values():
        if not isinstance(coords, (list, tuple)):
            return None
        for rc in coords:
            if not (isinstance(rc, (list, tuple)) and len(rc) == 2 and all(type(v) is int for v in rc)):
                return None
            r, c = rc[0] - 1, rc[1] - 1
            if not (0 <= r < n and 0 <= c < n):
                return None
            cells.add((r, c))
    return cells


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    n, k, regions = int(metadata["n"]), int(metadata["k"]), metadata["region_grid"]
    cells = stars(text, n)
    if not cells:
        return False, ""
    pred = str(sorted((r + 1, c + 1) for r, c in cells))
    if any(sum((r, c) in cells for c in range(n)) != k for r in range(n)):
        return False, pred
    if any(sum((r, c) in cells for r in range(n)) != k for c in range(n)):
        return False, pred
    per_region: dict = {}
    for r in range(n):
        for c in range(n):
            per_region.setdefault(regions[r][c], 0)
            per_region[regions[r][c]] += (r, c) in cells
    if any(v != k for v in per_region.values()):
        return False, pred
    touching = any((r + dr, c + dc) in cells for r, c in cells for dr in (-1, 0, 1) for dc in (-1, 0, 1)
                   if (dr, dc) != (0, 0))
    return not touching, pred
