r"""SynLogic ``goods_exchange``: after a series of swaps, who owns what?

Answer: a tuple of ``(person, item)`` pairs in the last fenced ``python`` block, e.g.
``(("Alice", "pen"), ("Bob", "cup"))``.  Correct when it assigns every person of the gold
``metadata["owns_after"]`` (same format) the same item, names compared ignoring case and
surrounding spaces, with no extra or repeated people.
"""

from __future__ import annotations

from verl_focal.ood.synlogic._common import code_block, parse_literal

REQUIRED_METADATA = ("owns_after",)


def ownership(obj) -> dict[str, str] | None:
    if isinstance(obj, str):
        obj = parse_literal(obj)
    if not isinstance(obj, (list, tuple)) or not obj:
        return None
    out: dict[str, str] = {}
    for pair in obj:
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
            return None
        person = pair[0].strip().lower()
        if person in out:
            return None
        out[person] = pair[1].strip().lower()
    return out


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    src = code_block(text)
    if src is None:
        return False, ""
    got = ownership(src)
    gold = ownership(metadata["owns_after"])
    return got is not None and gold is not None and got == gold, src
