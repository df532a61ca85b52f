r"""SynLogic ``object_properties``: how many objects have given properties.  Answer: an integer
in the last ``\boxed{}``; correct when it equals the gold count."""

from __future__ import annotations

from verl_focal.ood.synlogic.object_counting import verify as _count_verify

NEEDS_ANSWER = True


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    return _count_verify(text, answer, metadata)
