r"""SynLogic ``minesweeper``: list the cells that must hold mines.

Answer: the last list of coordinate pairs in the answer text, either bracketed (``[(0, 1), (2,
3)]``, ``[[0, 1], [2, 3]]``, the prompt's example form) or a bare run of parenthesised pairs
(``The mines are at positions: (0,1), (2,3)``; commas, semicolons or "and" between them),
whichever ends later.  Correct when its set of cells equals ``metadata["current_mines"]``.
Loose numbers (``0,1 and 2,3``) are not read as pairs: the prompt asks for (row, column) tuples.
"""

from __future__ import annotations

import re

from verl_focal.ood.synlogic._common import last_bracketed, parse_literal

REQUIRED_METADATA = ("current_mines",)
_PAIR = r"\(\s*(\d{1,6})\s*,\s*(\d{1,6})\s*\)"
_RUN = re.compile(rf"{_PAIR}(?:\s*(?:,|;|and|&)?\s*{_PAIR})*")
_ONE = re.compile(_PAIR)


def _bracketed(text: str) -> tuple[int, set[tuple[int, int]]] | None:
    span = last_bracketed(text, "[", nested=False)
    if span is None:
        return None
    obj = parse_literal(span)
    if isinstance(obj, (list, tuple)) and all(isinstance(p, (list, tuple)) and len(p) == 2
                                              and all(type(v) is int for v in p) for p in obj):
        return text.rfind(span) + len(span), {(int(a), int(b)) for a, b in obj}
    return None


def _bare_run(text: str) -> tuple[int, set[tuple[int, int]]] | None:
    last = None
    for m in _RUN.finditer(text):
        last = m
    if last is None:
        return None
    return last.end(), {(int(a), int(b)) for a, b in _ONE.findall(last.group(0))}


def cells(text: str) -> set[tuple[int, int]] | None:
    found = [c for c in (_bracketed(text), _bare_run(text)) if c is not None]
    if not found:
        return None
    # a run inside the bracketed list ends before its "]": the list wins then
    return max(found, key=lambda c: c[0])[1]


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    got = cells(text)
    if got is None:
        return False, ""
    gold = {(int(a), int(b)) for a, b in metadata["current_mines"]}
    return got == gold, str(sorted(got))
