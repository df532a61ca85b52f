r"""SynLogic ``game_of_24`` (and ``mathador``): combine the given numbers into the target.

Answer: an arithmetic expression in the last fenced ``python`` block (else the last
``\boxed{}``).  Correct when the expression uses exactly the given numbers (as a multiset),
only the allowed operators (``metadata["operators"]``) and parentheses, and its exact value
(fractions, no rounding) equals ``metadata["result"]``.  The authors' verifier checks the
numbers and operators but not the value; we check all three.
"""

from __future__ import annotations

from collections import Counter

from verl_focal.ood.synlogic._common import ArithmeticError_, arith_value, boxed, code_block

REQUIRED_METADATA = ("numbers", "operators", "result")


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    expr = code_block(text)
    if expr is None:
        expr = boxed(text)
    if not expr:
        return False, ""
    ops = "".join(str(o) for o in metadata["operators"])
    try:
        value, used = arith_value(expr, allowed_ops=ops)
    except ArithmeticError_:
        return False, expr
    if Counter(used) != Counter(int(n) for n in metadata["numbers"]):
        return False, expr
    return value == metadata["result"], expr
