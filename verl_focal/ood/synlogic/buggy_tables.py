r"""SynLogic ``buggy_tables``: repair a corrupted table and compute a statistic, reported with
exactly two decimals.

Answer: the last number with exactly two decimals (``-12.34``) in the answer text.  Correct when
it equals, as text, the last such number of the gold answer (a gold answer without one must be
matched as exact text).
"""

from __future__ import annotations

import re

NEEDS_ANSWER = True
_TWO_DEC = re.compile(r"-?\d+\.\d{2}\b")


def normalized(s: str) -> str:
    found = _TWO_DEC.findall(s)
    return found[-1] if found else s.strip()


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    got = _TWO_DEC.findall(text)
    gold = normalized(str(answer))
    if not got:
        return text.strip() == gold, ""
    return got[-1] == gold, got[-1]
