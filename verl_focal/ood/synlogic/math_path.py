r"""SynLogic ``math_path``: fill each ``?`` of an equation (``metadata["query_expr"]``) with one
digit so that it holds.

Answer: the content of the last ``[[...]]`` in the answer text, e.g. ``[[3+4*5=23]]``.
Correct when its digits equal the query's digits with each ``?`` replaced by one digit, its
operators (``+-*/%``) are the query's in order, and both sides of ``=`` have the same exact
value.
"""

from __future__ import annotations

import re

from verl_focal.ood.synlogic._common import ArithmeticError_, arith_value

REQUIRED_METADATA = ("query_expr",)
_DOUBLE = re.compile(r"\[\[(.*?)\]\]", re.DOTALL)
_OPS = "+-*/%"


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    found = _DOUBLE.findall(text)
    if not found:
        return False, ""
    expr = found[-1].replace(" ", "").strip()
    query = str(metadata["query_expr"]).replace(" ", "")
    q_digits = [c for c in query if c.isdigit() or c == "?"]
    a_digits = [c for c in expr if c.isdigit()]
    if len(q_digits) != len(a_digits) or any(q != "?" and q != a for q, a in zip(q_digits, a_digits)):
        return False, expr
    if [c for c in query if c in _OPS] != [c for c in expr if c in _OPS]:
        return False, expr
    if expr.count("=") != 1:
        return False, expr
    left, right = expr.split("=")
    try:
        return arith_value(left, _OPS)[0] == arith_value(right, _OPS)[0], expr
    except ArithmeticError_:
        return False, expr
