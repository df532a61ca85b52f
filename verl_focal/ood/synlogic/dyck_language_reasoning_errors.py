r"""SynLogic ``dyck_language_reasoning_errors``: which numbered thoughts of a bracket-matching
trace are wrong?

Answer: the answer text (or its last ``\boxed{}``), optionally in one pair of quotes, is either a
comma-separated list of thought numbers (``3, 7``, ``"3,7"``; full-width commas accepted) or, for
a trace without errors, the empty answer the prompt asks for (``""``, ``<answer></answer>``,
``\boxed{}``) or a plain "no error(s)" / "no mistakes" / "all correct" / "none" / "无错误" / "无问题".
Correct when the set of numbers equals ``metadata["error_indices"]`` (empty for "no error").
Hedges ("unclear", "不确定") fail, and so does a response with no answer at all.
"""

from __future__ import annotations

import re

from verl_focal.ood.synlogic._common import boxed, unquote

REQUIRED_METADATA = ("error_indices",)
ACCEPTS_EMPTY_ANSWER = True  # the prompt: "if there are no mistakes, output an empty string"
_LIST = re.compile(r"\d+(?:\s*[,，]\s*\d+)*")
_NONE = {"", "no", "none", "no error", "no errors", "no mistakes", "all correct", "无错误", "无问题"}


def read(text: str) -> set[int] | None:
    b = boxed(text)
    s = unquote((b if b is not None else text).strip().rstrip(".。").strip())
    if s.lower() in _NONE:
        return set()
    if _LIST.fullmatch(s):
        return {int(x) for x in re.findall(r"\d+", s)}
    return None


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    got = read(text)
    if got is None:
        return False, ""
    return got == {int(i) for i in metadata["error_indices"]}, ",".join(map(str, sorted(got)))
