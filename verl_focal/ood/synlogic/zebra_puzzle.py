r"""SynLogic ``zebra_puzzle``: a logic-grid puzzle whose gold answer is a JSON object.

Answer: a JSON object in the last fenced ``json`` block (else the whole answer text; a Python
dict literal is accepted).  Correct when it equals the gold object exactly: the same keys,
lists of the same length and order, and equal leaves of the same type (``1`` is not ``"1"``
nor ``1.0``).  A gold answer that is not a JSON object must be matched as exact text.
"""

from __future__ import annotations

import json

from verl_focal.ood.synlogic._common import MAX_LITERAL_CHARS, code_block, parse_literal

NEEDS_ANSWER = True


def same(a, b) -> bool:
    """Structural equality with strict leaf types."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    body = code_block(text, ("json",))
    body = (body if body is not None else text).strip()
    gold = answer
    if isinstance(gold, str):
        try:
            gold = json.loads(gold)
        except json.JSONDecodeError:
            return body == answer.strip(), body[:200]
    if not isinstance(gold, dict):
        return body == (answer if isinstance(answer, str) else json.dumps(answer)).strip(), body[:200]
    if len(body) > MAX_LITERAL_CHARS:
        return False, ""
    try:
        got = json.loads(body)
    except json.JSONDecodeError:
        got = parse_literal(body)
    return isinstance(got, dict) and same(gold, got), body[:200]
