r"""SynLogic ``numbrix``: fill an n x n grid with 1..n² so that consecutive numbers are
orthogonal neighbours, keeping the given numbers (``metadata["grid"]``, blanks "X").

Answer: the last list of lists of integers (or digit strings) in the answer text.  Correct when
it is n x n, a permutation of 1..n², agrees with every given number, and each k, k+1 are adjacent.
"""

from __future__ import annotations

from verl_focal.ood.synlogic._common import as_int, grid_of, last_bracketed, parse_literal

REQUIRED_METADATA = ("grid",)


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    given = metadata["grid"]
    n = len(given)
    span = last_bracketed(text)
    grid = grid_of(parse_literal(span), n, n)
    if grid is not None:  # digit strings ("12") read as numbers, as in the authors' parser
        grid = [[as_int(v) for v in row] for row in grid]
    if grid is None or not all(type(v) is int for row in grid for v in row):
        return False, span or ""
    if sorted(v for row in grid for v in row) != list(range(1, n * n + 1)):
        return False, span
    for i in range(n):
        for j in range(n):
            g = as_int(given[i][j])
            if g is not None and grid[i][j] != g:
                return False, span
    where = {grid[i][j]: (i, j) for i in range(n) for j in range(n)}
    ok = all(abs(where[k][0] - where[k + 1][0]) + abs(where[k][1] - where[k + 1][1]) == 1 for k in range(1, n * n))
    return ok, span
