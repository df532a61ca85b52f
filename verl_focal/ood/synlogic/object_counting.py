r"""SynLogic ``object_counting``: how many objects in total.  Answer: an integer in the last
``\boxed{}``; correct when it equals the gold count."""

from __future__ import annotations

from verl_focal.ood.synlogic._common import as_int, boxed

NEEDS_ANSWER = True


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    b = boxed(text)
    pred = as_int(b.replace(",", "")) if b is not None else None
    gold = as_int(str(answer))
    return (pred is not None and gold is not None and pred == gold), "" if b is None else b
