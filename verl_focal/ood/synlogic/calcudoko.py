r"""SynLogic ``calcudoko`` (KenKen): fill an n x n grid with 1..n, each once per row and column,
so that each cage (``metadata["regions"]``: ``{"cells": ["(r,c)", ...], "target": t,
"operator": "+" | "-" | "*" | "/"}``, 1-based cells) combines to its target: sum, product, or
for two-cell cages the absolute difference / the larger-over-smaller quotient (exact).  Cells of
one cage must differ.

Answer: the last ``[[...]]`` in the answer text, rows separated by commas and numbers by spaces
(``[[1 2, 2 1]]``), or an n x n list literal.  Unlike the authors' parser, a short or missing
row is not padded: it fails.
"""

from __future__ import annotations

import re
from fractions import Fraction
from math import prod

from verl_focal.ood.synlogic._common import grid_of, last_bracketed, parse_literal

REQUIRED_METADATA = ("regions",)
_DOUBLE = re.compile(r"\[\[([^\[\]]+)\]\]")
_CELL = re.compile(r"\(?\s*(\d+)\s*,\s*(\d+)\s*\)?")


def read_grid(text: str, n: int) -> list[list[int]] | None:
    found = _DOUBLE.findall(text)
    if found:
        rows = [[int(x) for x in re.findall(r"-?\d+", r)] for r in found[-1].replace("，", ",").split(",")]
        if len(rows) == n and all(len(r) == n for r in rows):
            return rows
    grid = grid_of(parse_literal(last_bracketed(text)), n, n)
    if grid is not None and all(type(v) is int for row in grid for v in row):
        return grid
    return None


def cell_of(spec) -> tuple[int, int] | None:
    if isinstance(spec, str):
        m = _CELL.fullmatch(spec.strip())
        return (int(m.group(1)) - 1, int(m.group(2)) - 1) if m else None
    if isinstance(spec, (list, tuple)) and len(spec) == 2:
        return int(spec[0]) - 1, int(spec[1]) - 1
    return None


def cage_ok(values: list[int], target, op: str) -> bool:
    if op == "+":
        return sum(values) == target
    if op in ("*", "×", "x"):
        return prod(values) == target
    if len(values) != 2:
        return False
    a, b = values
    if op in ("-", "−"):
        return abs(a - b) == target
    if op in ("/", "÷"):
        return b != 0 and a != 0 and Fraction(max(a, b), min(a, b)) == Fraction(str(target))
    return False


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    n = int(metadata.get("grid_size", 4))
    grid = read_grid(text, n)
    if grid is None:
        return False, ""
    full = set(range(1, n + 1))
    if any(set(r) != full for r in grid) or any({grid[i][j] for i in range(n)} != full for j in range(n)):
        return False, str(grid)
    for region in metadata["regions"]:
        cells = [cell_of(c) for c in region["cells"]]
        if any(c is None or not (0 <= c[0] < n and 0 <= c[1] < n) for c in cells):
            return False, str(grid)
        values = [grid[r][c] for r, c in cells]
        if len(set(values)) != len(values) or not cage_ok(values, region["target"], str(region["operator"])):
            return False, str(grid)
    return True, str(grid)
