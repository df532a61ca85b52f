r"""SynLogic ``skyscraper_puzzle``: fill an n x n grid with heights 1..n, each once per row and
column, so that the number of buildings visible from each side matches the clues
(``metadata["top"|"bottom"|"left"|"right"]``; a building is visible when taller than all before
it).

Answer: an n x n list literal in the last fenced ``python`` block (``#`` comments allowed).
Correct when it is a Latin square of 1..n meeting all four clue lists.
"""

from __future__ import annotations

import re

from verl_focal.ood.synlogic._common import code_block, grid_of, parse_literal

REQUIRED_METADATA = ("n", "top", "bottom", "left", "right")


def visible(heights: list[int]) -> int:
    """Buildings seen from the start of ``heights``: each taller than all before it."""
    seen, tallest = 0, 0
    for h in heights:
        if h > tallest:
            seen, tallest = seen + 1, h
    return seen


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    n = int(metadata["n"])
    src = code_block(text)
    if src is None:
        return False, ""
    grid = grid_of(parse_literal(re.sub(r"#[^\n]*", "", src)), n, n)
    if grid is None or not all(type(v) is int and 1 <= v <= n for row in grid for v in row):
        return False, src
    cols = [[grid[i][j] for i in range(n)] for j in range(n)]
    if any(len(set(r)) != n for r in grid) or any(len(set(c)) != n for c in cols):
        return False, src
    ok = ([visible(c) for c in cols] == list(metadata["top"])
          and [visible(c[::-1]) for c in cols] == list(metadata["bottom"])
          and [visible(r) for r in grid] == list(metadata["left"])
          and [visible(r[::-1]) for r in grid] == list(metadata["right"]))
    return ok, src
