r"""SynLogic ``dyck_language_errors``: position of the first closing error in a bracket
sequence, or -1 when the sequence is valid.

Answer: the answer text (or its last ``\boxed{}``) must be one integer; a text that instead
says the sequence is valid ("valid", "correct", "合法") reads as -1.  Correct when it equals
``metadata["first_error_pos"]``, or -1 when ``metadata["is_valid"]``.
"""

from __future__ import annotations

import re

from verl_focal.ood.synlogic._common import boxed

REQUIRED_METADATA = ("is_valid",)
_INT = re.compile(r"[-+]?\d+")


def read(text: str) -> int | None:
    b = boxed(text)
    s = (b if b is not None else text).strip().rstrip(".。")
    if _INT.fullmatch(s):
        return int(s)
    if re.search(r"合法|\bvalid\b|\bcorrect\b", s.lower()) and not re.search(r"\d", s):
        return -1
    return None


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    got = read(text)
    gold = -1 if metadata["is_valid"] else int(metadata["first_error_pos"])
    return got is not None and got == gold, "" if got is None else str(got)
