r"""SynLogic ``kukurasu``: mark cells of an n x m grid with "1" (filled) or "X" (empty) so that
each row's filled cells, weighted by column number (1-based), sum to the row clue, and each
column's, weighted by row number, to the column clue.

Answer: the last list of lists in the answer text (e.g. ``[["1","X"],["X","1"]]``).  Correct
when it has the metadata's shape, only "1"/"X" cells, and meets every clue.
"""

from __future__ import annotations

from verl_focal.ood.synlogic._common import grid_of, last_bracketed, parse_literal

REQUIRED_METADATA = ("row_sums", "col_sums", "n", "m")


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    n, m = int(metadata["n"]), int(metadata["m"])
    span = last_bracketed(text)
    grid = grid_of(parse_literal(span), n, m)
    if grid is None or any(c not in ("1", "X") for row in grid for c in row):
        return False, span or ""
    rows = [sum(j + 1 for j, c in enumerate(row) if c == "1") for row in grid]
    cols = [sum(i + 1 for i in range(n) if grid[i][j] == "1") for j in range(m)]
    return rows == list(metadata["row_sums"]) and cols == list(metadata["col_sums"]), span
