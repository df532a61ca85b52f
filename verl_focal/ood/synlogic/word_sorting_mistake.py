r"""SynLogic ``word_sorting_mistake``: find the first wrong step of a sorting trace, or say
there is none.  Answer: the last ``\boxed{}``; a number must equal the gold step number, any
other text must equal the gold text ignoring case (gold "No" when the gold answer is null)."""

from __future__ import annotations

from verl_focal.ood.synlogic._common import as_int, boxed


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    b = boxed(text)
    if b is None:
        return False, ""
    gold = "No" if answer is None else str(answer).strip()
    if b.isdigit():
        g = as_int(gold)
        return g is not None and int(b) == g, b
    return b.lower() == gold.lower(), b
