r"""SynLogic ``wordscapes``: fill the letter cells "X" of a crossword grid (``metadata["grid"]``;
"0" is a blocked cell) so that every word of ``metadata["across_words"]`` reads along some row
and every word of ``metadata["down_words"]`` down some column.

Answer: the last list of lists in the answer text, as a literal (``[["C", "A", "T"], ...]``) or
with the quoted letters of a row separated by blanks (``[["C" "A" "T"], ...]``: the prompt asks for
"letters in quotes" with "spaces between them"); a blocked cell is ``""``, ``" "`` or ``"0"``.
Correct when the shape matches, letter cells hold one letter each, blocked cells are empty, and
every word appears (case-insensitive) in the joined letters of a row / column, as in the authors'
check.
"""

from __future__ import annotations

import re

from verl_focal.ood.synlogic._common import MAX_LITERAL_CHARS, grid_of, last_bracketed, parse_literal

REQUIRED_METADATA = ("grid", "across_words", "down_words")


_ROW = re.compile(r"\[([^\[\]]*)\]")
_QUOTED = re.compile(r"\"([^\"]*)\"|'([^']*)'")


def quoted_rows(span: str | None) -> list[list[str]] | None:
    """The rows of ``[["C" "A" "T"], ["D" "O" "G"]]``: quoted cells separated by blanks or commas,
    as the prompt's "letters in quotes with spaces between them" allows (not a Python literal:
    adjacent strings would be joined); None when anything else stands between the cells."""
    if span is None or len(span) > MAX_LITERAL_CHARS:
        return None
    rows = []
    for body in _ROW.findall(span[1:-1]):
        if _QUOTED.sub("", body).strip(" ,\t\n"):
            return None
        rows.append([a or b for a, b in _QUOTED.findall(body)])
    return rows or None


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    grid = metadata["grid"]
    n, m = len(grid), len(grid[0])
    span = last_bracketed(text)
    got = grid_of(parse_literal(span), n, m) or grid_of(quoted_rows(span), n, m)
    if got is None or not all(isinstance(v, str) for row in got for v in row):
        return False, span or ""
    cells = [["" if v.strip() in ("", "0") else v.strip() for v in row] for row in got]
    for i in range(n):
        for j in range(m):
            want_letter = str(grid[i][j]) == "X"
            v = cells[i][j]
            if want_letter != (v != "") or (v and not (len(v) == 1 and v.isalpha())):
                return False, span
    rows = ["".join(r).lower() for r in cells]
    cols = ["".join(cells[i][j] for i in range(n)).lower() for j in range(m)]
    ok = (all(any(w.lower() in r for r in rows) for w in metadata["across_words"] if w)
          and all(any(w.lower() in c for c in cols) for w in metadata["down_words"] if w))
    return ok, span
