r"""SynLogic ``number_wall`` (Nurikabe-like): turn cells of an n x n grid into walls "A" so that
every island (orthogonally connected non-wall cells) holds exactly one number equal to its size,
no 2 x 2 block is all walls, and islands never meet diagonally across two walls.

Answer: the last n x n list of lists in the answer text; cells are numbers (as ints or digit
strings), "X" (island cell) or "A" (wall).  The numbers of ``metadata["grid"]`` must be kept.
"""

from __future__ import annotations

from verl_focal.ood.synlogic._common import as_int, grid_of, last_bracketed, parse_literal

REQUIRED_METADATA = ("grid", "n")


def islands(grid: list[list]) -> dict[tuple[int, int], int]:
    """Island id of every non-wall cell (orthogonal connectivity)."""
    n = len(grid)
    ids: dict[tuple[int, int], int] = {}
    for i in range(n):
        for j in range(n):
            if grid[i][j] == "A" or (i, j) in ids:
                continue
            k, stack = len(set(ids.values())), [(i, j)]
            ids[(i, j)] = k
            while stack:
                r, c = stack.pop()
                for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
                    q = (r + dr, c + dc)
                    if 0 <= q[0] < n and 0 <= q[1] < n and grid[q[0]][q[1]] != "A" and q not in ids:
                        ids[q] = k
                        stack.append(q)
    return ids


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    n = int(metadata["n"])
    span = last_bracketed(text)
    raw = grid_of(parse_literal(span), n, n)
    if raw is None:
        return False, span or ""
    grid = [[as_int(v) if as_int(v) is not None else v for v in row] for row in raw]
    if not all(type(v) is int or v in ("X", "A") for row in grid for v in row):
        return False, span
    orig = metadata["grid"]
    for i in range(n):
        for j in range(n):
            g = as_int(orig[i][j])
            if g is not None and grid[i][j] != g:
                return False, span
    if any(grid[i][j] == grid[i][j + 1] == grid[i + 1][j] == grid[i + 1][j + 1] == "A"
           for i in range(n - 1) for j in range(n - 1)):
        return False, span
    ids = islands(grid)
    members: dict[int, list] = {}
    for cell, k in ids.items():
        members.setdefault(k, []).append(cell)
    for cells in members.values():
        numbers = [grid[r][c] for r, c in cells if type(grid[r][c]) is int]
        if len(numbers) != 1 or numbers[0] != len(cells):
            return False, span
    for i in range(n - 1):
        for j in range(n - 1):
            a, b, c, d = (i, j), (i, j + 1), (i + 1, j), (i + 1, j + 1)
            if a in ids and d in ids and b not in ids and c not in ids and ids[a] != ids[d]:
                return False, span
            if b in ids and c in ids and a not in ids and d not in ids and ids[b] != ids[c]:
                return False, span
    return True, span
