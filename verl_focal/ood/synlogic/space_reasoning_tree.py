r"""SynLogic ``space_reasoning_tree``: which items satisfy a spatial condition.  Answer: a
comma-separated list in the last ``\boxed{}``; correct when its set of items (spaces dropped,
full-width commas read as commas) equals the gold set."""

from __future__ import annotations

from verl_focal.ood.synlogic._common import boxed

NEEDS_ANSWER = True


def items(s: str) -> set[str]:
    return {t for t in s.replace("，", ",").replace(" ", "").split(",") if t}


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    b = boxed(text)
    if b is None:
        return False, ""
    got = items(b)
    return bool(got) and got == items(str(answer)), b
