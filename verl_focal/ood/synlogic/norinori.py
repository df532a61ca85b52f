r"""SynLogic ``norinori``: shade cells of an n x n grid split into regions
(``metadata["region_grid"]``) so that the shaded cells form dominoes (1 x 2 or 2 x 1), no two
dominoes touch orthogonally, every region holds exactly two shaded cells, and every cell marked
"X" in the region grid is shaded.

Answer: the last list of dominoes ``[[(r1, c1), (r2, c2)], ...]`` (1-based) in the answer text.
The authors' verifier checks only the regions that got a shaded cell; we check every region.
"""

from __future__ import annotations

from verl_focal.ood.synlogic._common import last_bracketed, parse_literal

REQUIRED_METADATA = ("region_grid",)


def dominoes(text: str, n: int) -> list[tuple[tuple[int, int], tuple[int, int]]] | None:
    obj = parse_literal(last_bracketed(text))
    if not isinstance(obj, (list, tuple)) or not obj:
        return None
    out = []
    for d in obj:
        if not (isinstance(d, (list, tuple)) and len(d) == 2):
            return None
        cells = []
        for rc in d:
            if not (isinstance(rc, (list, tuple)) and len(rc) == 2 and all(type(v) is int for v in rc)):
                return None
            if not (1 <= rc[0] <= n and 1 <= rc[1] <= n):
                return None
            cells.append((rc[0] - 1, rc[1] - 1))
        out.append((cells[0], cells[1]))
    return out


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    regions = metadata["region_grid"]
    n = len(regions)
    doms = dominoes(text, n)
    if doms is None:
        return False, ""
    pred = str([[(a[0] + 1, a[1] + 1), (b[0] + 1, b[1] + 1)] for a, b in doms])
    owner: dict = {}
    for idx, (a, b) in enumerate(doms):
        if abs(a[0] - b[0]) + abs(a[1] - b[1]) != 1:
            return False, pred
        for cell in (a, b):
            if cell in owner:
                return False, pred
            owner[cell] = idx
    for (r, c), idx in owner.items():
        for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
            other = owner.get((r + dr, c + dc))
            if other is not None and other != idx:
                return False, pred
    count: dict = {}
    for r in range(n):
        for c in range(n):
            label = regions[r][c]
            if label == "X":
                if (r, c) not in owner:
                    return False, pred
                continue
            count[label] = count.get(label, 0) + ((r, c) in owner)
    return all(v == 2 for v in count.values()), pred
