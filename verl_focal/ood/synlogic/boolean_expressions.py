r"""SynLogic ``boolean_expressions``: which of the lettered expressions are true.  Answer: the
option letters in the last ``\boxed{}`` ("A, C", "AC", ``\text{A}``); correct when its set of
letters equals the gold set (case-insensitive; LaTeX command names such as ``\text`` are
dropped first)."""

from __future__ import annotations

import re

from verl_focal.ood.synlogic._common import boxed

NEEDS_ANSWER = True
_COMMAND = re.compile(r"\\[A-Za-z]+")


def letters(s: str) -> set[str]:
    return {c.lower() for c in re.findall(r"[A-Za-z]", _COMMAND.sub("", s))}


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    b = boxed(text)
    if b is None:
        return False, ""
    got = letters(b)
    return bool(got) and got == letters(str(answer)), b
