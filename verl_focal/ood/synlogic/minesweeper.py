r"""SynLogic ``minesweeper``: list the cells that must hold mines.

Answer: the last list of coordinate pairs in the answer text, e.g. ``[(0, 1), (2, 3)]`` or
``[[0, 1], [2, 3]]``.  Correct when its set of cells equals ``metadata["current_mines"]``.
"""

from __future__ import annotations

import re

from verl_focal.ood.synlogic._common import last_bracketed, parse_literal

REQUIRED_METADATA = ("current_mines",)
_PAIR = re.compile(r"[\(\[]\s*(\d+)\s*,\s*(\d+)\s*[\)\]]")


def cells(text: str) -> set[tuple[int, int]] | None:
    span = last_bracketed(text, "[", nested=False)
    if span is None:
        return None
    obj = parse_literal(span)
    if isinstance(obj, (list, tuple)) and all(isinstance(p, (list, tuple)) and len(p) == 2
                                              and all(type(v) is int for v in p) for p in obj):
        return {(int(a), int(b)) for a, b in obj}
    return None


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    got = cells(text)
    if got is None:
        return False, ""
    gold = {(int(a), int(b)) for a, b in metadata["current_mines"]}
    return got == gold, str(sorted(got))
