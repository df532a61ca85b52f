r"""SynLogic ``cipher``: encrypt or decrypt a text with a described cipher.

Answer: a Python literal ``[["text"]]`` in the last fenced ``python`` block (else the whole
answer text).  The gold answer is stored as ``[[text]]``; correct when the literal is exactly
``[[text]]`` with that text.
"""

from __future__ import annotations

from verl_focal.ood.synlogic._common import code_block, parse_literal

NEEDS_ANSWER = True


def gold_text(answer) -> str:
    s = str(answer).strip()
    if s.startswith("[[") and s.endswith("]]"):
        return s[2:-2]
    return s


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    body = code_block(text)
    obj = parse_literal(body if body is not None else text)
    ok = (isinstance(obj, list) and len(obj) == 1 and isinstance(obj[0], list) and len(obj[0]) == 1
          and isinstance(obj[0][0], str) and obj[0][0] == gold_text(answer))
    return ok, "" if obj is None else repr(obj)[:200]
