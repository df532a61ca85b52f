r"""SynLogic ``dyck_language_reasoning_errors``: which numbered thoughts of a bracket-matching
trace are wrong?

Answer: the last ``\boxed{}``, else the whole answer text, else the last fenced block, else the
last line after an "answer is:" / "Final answer:" / "答案：" prefix (``The answer is: **3, 7**``),
optionally bold or in one pair of quotes, is either a comma-separated list of thought numbers
(``3, 7``, ``"3,7"``; full-width commas accepted) or, for a trace without errors, the empty answer
the prompt asks for (``""``, ``<answer></answer>``, ``\boxed{}``) or a plain "no error(s)" / "no
mistakes" / "all correct" / "none" / "无错误" / "无问题".
Correct when the set of numbers equals ``metadata["error_indices"]`` (empty for "no error").
Hedges ("unclear", "不确定") fail, and so does a response with no answer at all.
"""

from __future__ import annotations

import re

from verl_focal.ood.synlogic._common import boxed, code_block, unquote

REQUIRED_METADATA = ("error_indices",)
ACCEPTS_EMPTY_ANSWER = True  # the prompt: "if there are no mistakes, output an empty string"
_LIST = re.compile(r"\d+(?:\s*[,，]\s*\d+)*")
_NONE = {"", "no", "none", "no error", "no errors", "no mistakes", "all correct", "无错误", "无问题"}


_PREFIX = re.compile(r"^(?:\*\*)?(?:(?:the\s+)?(?:final\s+)?answer(?:\s+is)?|答案是?)\s*[:：]?\s*", re.IGNORECASE)


def _one(s: str) -> set[int] | None:
    s = s.strip().rstrip(".。").strip()
    if s.startswith("**") and s.endswith("**") and len(s) >= 4:
        s = s[2:-2].strip()
    s = unquote(s)
    if s.lower() in _NONE:
        return set()
    if _LIST.fullmatch(s):
        return {int(x) for x in re.findall(r"\d+", s)}
    return None


def read(text: str) -> set[int] | None:
    """The set of thought numbers the answer names: the last ``\boxed{}``, else the whole answer
    text, else the last fenced block, else the last line after an "answer is:" prefix; each may be
    bold or quoted.  A bare "answer:" with nothing after it is not an empty answer."""
    b = boxed(text)
    if b is not None:
        return _one(b)
    got = _one(text)
    if got is not None:
        return got
    block = code_block(text, None)
    if block is not None and block.strip():
        return _one(block)
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if len(lines) > 1 or _PREFIX.match(text.strip()):
        last = _PREFIX.sub("", lines[-1].strip())
        if last.strip().rstrip(".。*").strip():
            return _one(last)
    return None


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    got = read(text)
    if got is None:
        return False, ""
    return got == {int(i) for i in metadata["error_indices"]}, ",".join(map(str, sorted(got)))
