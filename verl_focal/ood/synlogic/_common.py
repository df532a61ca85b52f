"""Shared, bounded parsing helpers for the SynLogic verifiers (no ``eval`` anywhere).

Every helper works on at most :data:`MAX_ANSWER_CHARS` characters and parses literals only
when they are at most :data:`MAX_LITERAL_CHARS` long, so one verification is linear in a
bounded input: the time bound holds even where no alarm can be set (verl's reward threads).
"""

from __future__ import annotations

import ast
import operator
import re
from fractions import Fraction
from typing import Any

from verl_focal.grading.extract import last_boxed

MAX_ANSWER_CHARS = 20_000     # the tail of the answer region that the verifiers read
MAX_LITERAL_CHARS = 8_000     # longest list/tuple literal parsed
MAX_ABS_NUMBER = 10 ** 12     # larger numbers in arithmetic answers are rejected
MAX_EXPR_NODES = 200

_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_CODE_BLOCK = re.compile(r"```([A-Za-z0-9_+-]*)[ \t]*\n?(.*?)```", re.DOTALL)


def answer_text(solution_str: str) -> str:
    """The text a SynLogic verifier reads: after the last ``</think>`` (``""`` for an unclosed
    ``<think>``); inside the last ``<answer>...</answer>`` when there is one; its last
    :data:`MAX_ANSWER_CHARS` characters."""
    if "</think>" in solution_str:
        text = solution_str.rsplit("</think>", 1)[1]
    elif "<think>" in solution_str:
        return ""
    else:
        text = solution_str
    tags = _ANSWER_TAG.findall(text[-4 * MAX_ANSWER_CHARS:])
    if tags:
        text = tags[-1]
    return text.strip()[-MAX_ANSWER_CHARS:]


def explicit_empty_answer(solution_str: str) -> bool:
    """True when the response's answer is given and empty: its last ``<answer>...</answer>``
    (after the last ``</think>``) holds nothing but blanks.  A response without an answer tag is
    not an empty answer, it is no answer."""
    if "</think>" in solution_str:
        text = solution_str.rsplit("</think>", 1)[1]
    elif "<think>" in solution_str:
        return False
    else:
        text = solution_str
    tags = _ANSWER_TAG.findall(text[-4 * MAX_ANSWER_CHARS:])
    return bool(tags) and not tags[-1].strip()


_QUOTES = {'"': '"', "'": "'", "\u201c": "\u201d", "\u300c": "\u300d", "`": "`"}


def unquote(s: str) -> str:
    """``s`` without one pair of enclosing quotes (``"3,7"``, ``'3,7'``, curly or corner quotes, a
    backtick pair); ``""`` gives the empty string."""
    s = s.strip()
    if len(s) >= 2 and s[0] in _QUOTES and s[-1] == _QUOTES[s[0]]:
        return s[1:-1].strip()
    return s


def boxed(text: str) -> str | None:
    r"""Content of the last ``\boxed{...}`` (braces balanced), stripped; None when absent."""
    b = last_boxed(text)
    return None if b is None else b.strip()


def code_block(text: str, languages: tuple[str, ...] | None = ("python",)) -> str | None:
    """Body of the last fenced code block whose language tag is in ``languages`` (any tag, or
    none, when ``languages`` is None), stripped; None when there is none."""
    found = None
    for m in _CODE_BLOCK.finditer(text):
        if languages is None or m.group(1).lower() in languages:
            found = m.group(2)
    return None if found is None else found.strip()


_ASSIGN = re.compile(r"^\s*[A-Za-z_][A-Za-z0-9_]*\s*=(?!=)")


def parse_literal(s: str | None) -> Any:
    """``ast.literal_eval`` of ``s`` (a leading ``name =`` is dropped) when it is short enough;
    None on any failure."""
    if s is None or len(s) > MAX_LITERAL_CHARS:
        return None
    try:
        return ast.literal_eval(_ASSIGN.sub("", s, count=1).strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def last_bracketed(text: str, opener: str = "[", nested: bool = True) -> str | None:
    """The last balanced ``[...]`` (or ``(...)``) span of ``text`` that is not inside another one.

    With ``nested``, only spans whose first inner non-space character opens another bracket
    (a list of lists) qualify.
    """
    closer = {"[": "]", "(": ")"}[opener]
    spans, depth, start = [], 0, -1
    for i, c in enumerate(text):
        if c == opener:
            if depth == 0:
                start = i
            depth += 1
        elif c == closer and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start:i + 1])
    for span in reversed(spans):
        if not nested or span[1:].lstrip().startswith(opener):
            return span
    return None


def grid_of(obj: Any, rows: int | None = None, cols: int | None = None) -> list[list[Any]] | None:
    """``obj`` as a list of row lists (tuples accepted) of the given shape, else None."""
    if not isinstance(obj, (list, tuple)) or not obj:
        return None
    grid = []
    for row in obj:
        if not isinstance(row, (list, tuple)):
            return None
        grid.append(list(row))
    if rows is not None and len(grid) != rows:
        return None
    if cols is not None and any(len(r) != cols for r in grid):
        return None
    return grid


def as_int(x: Any) -> int | None:
    """An int from an int or a string of digits (optional sign); bools and others -> None."""
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return x
    if isinstance(x, str) and re.fullmatch(r"\s*[-+]?\d{1,18}\s*", x):
        return int(x)
    return None


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.Mod: operator.mod}
_OP_SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Mod: "%"}


class ArithmeticError_(ValueError):
    """An expression outside the allowed arithmetic."""


def arith_value(expr: str, allowed_ops: str = "+-*/") -> tuple[Fraction, list[int]]:
    """Exact value of an integer arithmetic expression and the integer literals it uses.

    Only non-negative integer literals, parentheses, unary minus and the binary operators in
    ``allowed_ops`` are accepted (``×``/``÷`` read as ``*``/``/``); division is exact
    (:class:`fractions.Fraction`).  Raises :class:`ArithmeticError_` otherwise, or on division
    by zero, on more than :data:`MAX_EXPR_NODES` nodes, or on numbers above
    :data:`MAX_ABS_NUMBER`.
    """
    expr = expr.replace("×", "*").replace("÷", "/").replace("\\times", "*").replace("\\div", "/")
    if len(expr) > 1000:
        raise ArithmeticError_("expression too long")
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as e:
        raise ArithmeticError_(f"not an expression: {e.msg}") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_EXPR_NODES:
        raise ArithmeticError_("expression too large")
    literals: list[int] = []

    def ev(node: ast.AST) -> Fraction:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and type(node.value) is int:
            literals.append(node.value)
            return Fraction(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and "-" in allowed_ops:
            return -ev(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS and _OP_SYMBOL[type(node.op)] in allowed_ops:
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, (ast.Div, ast.Mod)) and b == 0:
                raise ArithmeticError_("division by zero")
            v = _BINOPS[type(node.op)](a, b)
            if abs(v) > MAX_ABS_NUMBER:
                raise ArithmeticError_("number too large")
            return Fraction(v)
        raise ArithmeticError_(f"{type(node).__name__} is not allowed")

    return ev(tree), literals
