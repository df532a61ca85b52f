r"""SynLogic ``futoshiki``: fill an n x n grid with 1..n, each once per row and column, keeping
the given numbers and meeting every inequality between neighbouring cells.

Answer: the last ``[[...]]`` in the answer text, rows separated by commas and numbers by spaces
(``[[1 2 3, 3 1 2, 2 3 1]]``).  Correct when it is a Latin square of 1..n of size
``metadata["grid_size"]``, every constraint ``((r1, c1), (r2, c2), "<" | ">")`` of
``metadata["constraints"]`` holds, and the numbers given in the puzzle are kept.  The givens are
the cells ``metadata["prefilled_coords"]`` of the puzzle grid printed in the question after
"Current puzzle:" (the question travels in the ground truth for this task: ``NEEDS_QUESTION``).
"""

from __future__ import annotations

import re

REQUIRED_METADATA = ("grid_size", "prefilled_coords", "constraints")
NEEDS_QUESTION = True
_DOUBLE = re.compile(r"\[\[([^\[\]]+)\]\]")


def read_grid(text: str) -> list[list[int]] | None:
    found = _DOUBLE.findall(text)
    if not found:
        return None
    rows = [[int(x) for x in re.findall(r"\d+", r)] for r in found[-1].split(",")]
    return rows if rows and all(len(r) == len(rows) for r in rows) else None


def givens(question: str, coords) -> dict[tuple[int, int], int]:
    """(row, col) -> number of the prefilled cells, read from the printed puzzle grid."""
    lines, inside = [], False
    for line in question.split("\n"):
        if "Current puzzle:" in line:
            inside = True
            continue
        if inside and line.strip() and "X" in line:
            lines.append(line.split())
        elif inside and lines and line.strip():
            break
    out = {}
    for r, c in coords:
        if r < len(lines) and c < len(lines[r]) and lines[r][c].isdigit():
            out[(int(r), int(c))] = int(lines[r][c])
    return out


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    n = int(metadata["grid_size"])
    grid = read_grid(text)
    if grid is None or len(grid) != n:
        return False, ""
    full = set(range(1, n + 1))
    if any(set(r) != full for r in grid) or any({grid[i][j] for i in range(n)} != full for j in range(n)):
        return False, str(grid)
    for (r, c), v in givens(str(metadata.get("question", "")), metadata["prefilled_coords"]).items():
        if grid[r][c] != v:
            return False, str(grid)
    for (r1, c1), (r2, c2), sign in metadata["constraints"]:
        a, b = grid[r1][c1], grid[r2][c2]
        if (sign == ">" and not a > b) or (sign == "<" and not a < b):
            return False, str(grid)
    return True, str(grid)
