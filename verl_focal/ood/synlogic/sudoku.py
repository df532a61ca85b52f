r"""SynLogic ``sudoku``: solve a 9 x 9 sudoku (``metadata["original_sudoku"]``, blanks 0 or "X").

Answer: a 9 x 9 literal (tuples or lists) in the last fenced ``python`` block, else the last
``((...))``/``[[...]]`` in the answer text.  Correct when every row, column and 3 x 3 box holds
1..9 once and every given digit is kept.
"""

from __future__ import annotations

from verl_focal.ood.synlogic._common import as_int, code_block, grid_of, last_bracketed, parse_literal

REQUIRED_METADATA = ("original_sudoku",)
_ALL = set(range(1, 10))


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    src = code_block(text)
    if src is None:
        src = last_bracketed(text, "(") or last_bracketed(text, "[")
    grid = grid_of(parse_literal(src), 9, 9)
    if grid is None or not all(type(v) is int for row in grid for v in row):
        return False, src or ""
    units = [row for row in grid] + [[grid[i][j] for i in range(9)] for j in range(9)]
    units += [[grid[r + i][c + j] for i in range(3) for j in range(3)] for r in (0, 3, 6) for c in (0, 3, 6)]
    if any(set(u) != _ALL for u in units):
        return False, src
    orig = metadata["original_sudoku"]
    for i in range(9):
        for j in range(9):
            g = as_int(orig[i][j])
            if g not in (None, 0) and grid[i][j] != g:
                return False, src
    return True, src
