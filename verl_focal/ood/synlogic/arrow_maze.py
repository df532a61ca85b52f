r"""SynLogic ``arrow_maze``: fill every blank "X" of the grid (``metadata["maze"]``) with an arrow
(↑ ↓ ← → ↖ ↗ ↘ ↙) so that each number equals the total length of the arrow rays leaving it (a
ray from a number in direction d is the run of cells holding the arrow pointing in d), and every
arrow lies on some number's ray.  Numbers and pre-filled arrows must be kept.

Answer: a list-of-lists literal in the last fenced code block, else the last ``[[...]]`` in the
answer text; cells are strings.
"""

from __future__ import annotations

from verl_focal.ood.synlogic._common import code_block, grid_of, last_bracketed, parse_literal

REQUIRED_METADATA = ("maze",)
ARROWS = {"↑": (-1, 0), "↓": (1, 0), "←": (0, -1), "→": (0, 1),
          "↖": (-1, -1), "↗": (-1, 1), "↘": (1, 1), "↙": (1, -1)}


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    maze = metadata["maze"]
    n, m = len(maze), len(maze[0])
    src = code_block(text, None)
    grid = grid_of(parse_literal(src), n, m) if src is not None else None
    if grid is None:
        src = last_bracketed(text)
        grid = grid_of(parse_literal(src), n, m)
    if grid is None or not all(isinstance(v, str) for row in grid for v in row):
        return False, src or ""
    for i in range(n):
        for j in range(m):
            q, a = str(maze[i][j]), grid[i][j]
            if q == "X":
                if a not in ARROWS:
                    return False, src
            elif a != q:  # numbers and pre-filled arrows stay
                return False, src
    covered = set()
    for i in range(n):
        for j in range(m):
            if not grid[i][j].isdigit():
                continue
            total = 0
            for sym, (di, dj) in ARROWS.items():
                r, c = i + di, j + dj
                while 0 <= r < n and 0 <= c < m and grid[r][c] == sym:
                    covered.add((r, c))
                    total += 1
                    r, c = r + di, c + dj
            if total != int(grid[i][j]):
                return False, src
    ok = all((i, j) in covered for i in range(n) for j in range(m) if grid[i][j] in ARROWS)
    return ok, src
