r"""SynLogic ``cryptarithm``: replace letters by digits so that the equation holds; the answer is
the numeric equation.

Answer: the last ``\boxed{}`` if it holds an equation, else the last equation
``n op n ... = n`` (ops ``+ - *``) in the answer text.  Correct when it equals the gold
equation with all spaces removed.
"""

from __future__ import annotations

import re

from verl_focal.ood.synlogic._common import boxed

NEEDS_ANSWER = True
_EQ = re.compile(r"\d+(?:\s*[+\-*]\s*\d+)+\s*=\s*-?\d+")


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    b = boxed(text)
    found = _EQ.findall(b) if b is not None else []
    if not found:
        found = _EQ.findall(text)
    if not found:
        return False, ""
    got = re.sub(r"\s+", "", found[-1])
    return got == re.sub(r"\s+", "", str(answer)), got
