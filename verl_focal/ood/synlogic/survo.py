r"""SynLogic ``survo``: fill the zero cells of an n x n matrix (``metadata["original_matrix"]``)
with the candidate numbers so that each of the first n-1 rows sums (over its first n-1 cells)
to its last cell, and each of the first n-1 columns to its last cell.

Answer: a matrix literal in the last fenced ``python`` block, else the last fenced block, else
the last ``[[...]]`` in the answer text.  Correct when it keeps every non-zero given, the
filled numbers are exactly ``metadata["candidate_numbers"]`` (as a multiset), and all sums hold.
"""

from __future__ import annotations

from verl_focal.ood.synlogic._common import code_block, grid_of, last_bracketed, parse_literal

REQUIRED_METADATA = ("original_matrix", "candidate_numbers")


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    orig = metadata["original_matrix"]
    n = len(orig)
    src = code_block(text)
    if src is None:
        src = code_block(text, None)
    if src is None:
        src = last_bracketed(text)
    grid = grid_of(parse_literal(src), n, n)
    if grid is None or not all(type(v) is int for row in grid for v in row):
        return False, src or ""
    filled = []
    for i in range(n):
        for j in range(n):
            if int(orig[i][j]) != 0:
                if grid[i][j] != int(orig[i][j]):
                    return False, src
            else:
                filled.append(grid[i][j])
    if sorted(filled) != sorted(int(c) for c in metadata["candidate_numbers"]):
        return False, src
    rows_ok = all(sum(grid[i][:n - 1]) == grid[i][n - 1] for i in range(n - 1))
    cols_ok = all(sum(grid[i][j] for i in range(n - 1)) == grid[n - 1][j] for j in range(n - 1))
    return rows_ok and cols_ok, src
