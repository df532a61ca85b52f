r"""SynLogic ``space_reasoning``: a spatial relation question.  Answer: the last ``\boxed{}``;
correct when it equals the gold answer ignoring case and surrounding spaces."""

from __future__ import annotations

from verl_focal.ood.synlogic._common import boxed

NEEDS_ANSWER = True


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    b = boxed(text)
    if b is None:
        return False, ""
    return b.lower() == str(answer).strip().lower(), b
