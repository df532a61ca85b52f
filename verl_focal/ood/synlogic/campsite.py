r"""SynLogic ``campsite`` (Tents): place tents "C" next to trees "T" in an n x m grid.

Rules checked: the trees are those of ``metadata["grid"]`` (no tree added or removed); each
row/column holds ``metadata["row_constraints"]``/``["col_constraints"]`` tents; no two tents
touch, diagonals included; tents and trees pair up one-to-one with each tent orthogonally next
to its tree (a perfect bipartite matching, found by augmenting paths).

Answer: the last list of lists of cell strings in the answer text.
"""

from __future__ import annotations

from verl_focal.ood.synlogic._common import grid_of, last_bracketed, parse_literal

REQUIRED_METADATA = ("grid", "row_constraints", "col_constraints", "n", "m")
_ORTHO = ((0, 1), (1, 0), (0, -1), (-1, 0))


def perfect_matching(tents: list, trees: set, n: int, m: int) -> bool:
    """True when every tent can be given its own orthogonally adjacent tree and no tree is left."""
    if len(tents) != len(trees):
        return False
    owner: dict = {}

    def augment(t, seen) -> bool:
        for dr, dc in _ORTHO:
            tree = (t[0] + dr, t[1] + dc)
            if tree in trees and tree not in seen:
                seen.add(tree)
                if tree not in owner or augment(owner[tree], seen):
                    owner[tree] = t
                    return True
        return False

    return all(augment(t, set()) for t in tents)


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    n, m = int(metadata["n"]), int(metadata["m"])
    span = last_bracketed(text)
    grid = grid_of(parse_literal(span), n, m)
    if grid is None or not all(isinstance(v, str) for row in grid for v in row):
        return False, span or ""
    orig = metadata["grid"]
    if any((orig[i][j] == "T") != (grid[i][j] == "T") for i in range(n) for j in range(m)):
        return False, span
    tents = [(i, j) for i in range(n) for j in range(m) if grid[i][j] == "C"]
    trees = {(i, j) for i in range(n) for j in range(m) if grid[i][j] == "T"}
    if [sum(v == "C" for v in row) for row in grid] != list(metadata["row_constraints"]):
        return False, span
    if [sum(grid[i][j] == "C" for i in range(n)) for j in range(m)] != list(metadata["col_constraints"]):
        return False, span
    tent_set = set(tents)
    if any((i + di, j + dj) in tent_set for i, j in tents for di in (-1, 0, 1) for dj in (-1, 0, 1)
           if (di, dj) != (0, 0)):
        return False, span
    return perfect_matching(tents, trees, n, m), span
