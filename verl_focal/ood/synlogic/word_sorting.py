r"""SynLogic ``word_sorting``: sort words.  Answer: the sorted words, comma-separated, in the
last ``\boxed{}``; correct when the sequence equals the gold one (spaces dropped, full-width
commas read as commas; order matters)."""

from __future__ import annotations

from verl_focal.ood.synlogic._common import boxed

NEEDS_ANSWER = True


def words(s: str) -> list[str]:
    return [w for w in s.replace("，", ",").replace(" ", "").split(",")]


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    b = boxed(text)
    if b is None:
        return False, ""
    return words(b) == words(str(answer)), b
