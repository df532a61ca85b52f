r"""The equivalence check: which rule decides, in which order.

For one prediction ``p`` (the boxed text) and each accepted reference form ``g``
(:func:`~verl_focal.grading.normalise.gold_alternatives`), after
:func:`~verl_focal.grading.normalise.normalise` on both:

1. equal text, spacing aside -> match; then a named result (``v_0 = 3``, ``E \approx 2.1``,
   ``x \equiv 5 \pmod{12}``, ``x \in [0, 1]``) is read as its right-hand side when the other side
   is not an equation;
2. a congruence's modulus (``42 \pmod{100}``, :mod:`.congruence`) on either side decides *finally*:
   dropped when on one side only, else equal moduli and congruent residues;
   an inequality in one variable against an interval (or another inequality in the same variable)
   decides *finally* as intervals (:mod:`.intervals`): ``-2 \leq x < 3`` is ``[-2, 3)``;
3. a sexagesimal angle (degrees with minutes and/or seconds, :mod:`.angles`) on either side, and on
   the other an angle in degrees or a plain number: both as degrees, compared by the numeric policy,
   decide *finally* (``30^\circ 15'`` is ``30.25^\circ``); otherwise,
   both plain numbers, each with an optional unit (:func:`~verl_focal.grading.units.split_quantity`)
   -> the unit policy, then the numeric policy, decide *finally* (math-verify is not consulted, so
   its 6-decimal-place rounding cannot accept ``1.3e-8`` for ``1.24e-8``);
4. explicit unit markup or a degree mark after a non-numeric value: units on both sides must agree
   (``2\sqrt{2}\,\text{m}`` against ``2\sqrt{2}\,\text{cm}`` is wrong), then the values are compared
   with these rules; degrees against a value in radians (``30^\circ``, ``\frac{\pi}{6}``) are converted;
5. both equations -> rearrangement by a constant factor
   (:func:`~verl_focal.grading.equations.equations_equivalent`);
6. tuples/lists with the same brackets and length -> element by element, with these same rules;
7. math-verify's ``verify`` on the normalised text, then on the raw text (the pre-rule path) --
   unless math-verify dropped a bare trailing letter as a unit (``c^2 m`` read as ``c^2``): when the
   full parses have different variables the match is refused.  An equation against a value whose
   left side is not a name (``2x = x'`` against ``x'``) is refused before this step: math-verify
   would compare the value with the equation's right side;
8. SymPy on the full LaTeX parse, same variables on both sides (a lone ``i`` read as the imaginary
   unit when it is the only symbol: ``e^{i\pi}`` against ``-1``): the difference is first evaluated
   at two fixed points (a non-zero value refutes quickly), then ``simplify(p - g) == 0`` decides
   (implicit products such as ``\frac{1}{m} t``, which math-verify's extraction cuts short).

In steps 5, 7 and 8 a primed symbol is passed to the parsers as a subscripted one (``x'`` ->
``x_{\prime}``, :func:`encode_primes`): they drop a prime, which made ``x'`` equal ``x``.

No step runs its own timer: the caller bounds the whole check (``verl_focal.reward``).
"""

from __future__ import annotations

import functools
from typing import Any

import regex

from verl_focal.grading.angles import sexagesimal_degrees
from verl_focal.grading.congruence import split_modulus
from verl_focal.grading.equations import equations_equivalent, split_equation
from verl_focal.grading.intervals import as_interval, intervals_match
from verl_focal.grading.normalise import canonical, gold_alternatives, matching, normalise
from verl_focal.grading.numeric import Number, NumericPolicy, numbers_match, parse_number
from verl_focal.grading.units import split_marked_unit, split_quantity, units_compatible

_TRAILING_MARKUP = regex.compile(
    r"(?:\s|\\[,;:! ]|~)*\\(?:text|mathrm|textrm|mbox|operatorname)\s*\{[^{}]*\}(?:\^\{?-?\d+\}?)?\s*$"
)
_MAX_SYMPY_CHARS = 400


# a letter or a Greek command, with an optional subscript, followed by prime marks
_PRIMED = regex.compile(r"((?:\\[A-Za-z]+|(?<![\\A-Za-z])[A-Za-z]))(?:_\{([^{}]*)\}|_([A-Za-z0-9]))?('+)")


def encode_primes(text: str) -> str:
    r"""Primed symbols as subscripted ones for the LaTeX parsers, which drop a prime (``x'`` and
    ``x`` parse alike): ``x'`` -> ``x_{\prime}``, ``x_1''`` -> ``x_{1\prime\prime}``."""
    if "'" not in text:
        return text

    def sub(m: regex.Match) -> str:
        script = m.group(2) if m.group(2) is not None else (m.group(3) or "")
        return m.group(1) + "_{" + script + "\\prime" * len(m.group(4)) + "}"

    return _PRIMED.sub(sub, text)


def _latex_to_sympy(text: str):
    from latex2sympy2_extended import latex2sympy

    if len(text) > _MAX_SYMPY_CHARS:
        raise ValueError("too long to parse")
    return latex2sympy(encode_primes(text))


def _try_sympy(text: str):
    try:
        return _latex_to_sympy(text)
    except Exception:  # noqa: BLE001 - any parse failure means "no full parse"
        return None


@functools.lru_cache(maxsize=1)
def _mv():
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

    return ExprExtractionConfig, LatexExtractionConfig, parse, verify


def _math_verify_equal(pred: str, gold: str) -> bool:
    expr_cfg, latex_cfg, parse, verify = _mv()
    pred, gold = encode_primes(pred), encode_primes(gold)
    g = parse("\\boxed{" + gold + "}", [latex_cfg()], parsing_timeout=None)
    if not g:
        g = parse(gold, [expr_cfg()], parsing_timeout=None)
    p = parse("\\boxed{" + pred + "}", [latex_cfg()], parsing_timeout=None)
    return bool(g and p and verify(g, p, timeout_seconds=None))


def _dropped_a_variable(pred: str, gold: str) -> bool:
    """True when the full SymPy parses of both (trailing unit markup removed) are expressions with
    different variables: math-verify then matched a truncated reading of one side."""
    import sympy

    a, b = _try_sympy(_TRAILING_MARKUP.sub("", pred)), _try_sympy(_TRAILING_MARKUP.sub("", gold))
    if not isinstance(a, sympy.Expr) or not isinstance(b, sympy.Expr):
        return False
    return a.free_symbols != b.free_symbols


def _imaginary_unit(a, b):
    """``a`` with its symbol ``i`` read as the imaginary unit, when ``i`` is the only free symbol
    of ``a`` and of ``b`` together (``e^{i\\pi}`` against ``-1``, ``(1+i)^2`` against ``2i``);
    else ``a`` unchanged."""
    import sympy

    if {str(x) for x in a.free_symbols | b.free_symbols} != {"i"}:
        return a
    return a.subs({x: sympy.I for x in a.free_symbols})


def _sympy_equal(pred: str, gold: str) -> bool:
    import sympy

    a, b = _try_sympy(pred), _try_sympy(gold)
    if not isinstance(a, sympy.Expr) or not isinstance(b, sympy.Expr):
        return False
    a, b = _imaginary_unit(a, b), _imaginary_unit(b, a)
    if a.free_symbols != b.free_symbols:
        return False
    if a == b:
        return True
    diff = a - b
    try:  # cheap refutation first: the difference at two fixed irrational-ish points
        for point in (0.5772156649, 1.3247179572):
            vals = {sym: point + 0.1 * j for j, sym in enumerate(sorted(diff.free_symbols, key=str))}
            v = complex(diff.evalf(15, subs=vals))
            if abs(v) > 1e-9 * (1 + abs(complex(a.evalf(15, subs=vals)))):
                return False
        return bool(sympy.simplify(diff) == 0)
    except Exception:  # noqa: BLE001 - not evaluable (e.g. an undefined function): no verdict
        return False


def split_top_level(text: str) -> tuple[str, list[str]] | None:
    """``(brackets, items)`` for ``(a, b)``, ``[a, b]``, ``\\{a, b\\}`` or a bare ``a, b``: the comma-
    separated items at bracket depth 0; None for a single item."""
    s = text.strip()
    brackets = ""
    if s[:1] in "([" and matching(s, 0) == len(s) - 1:
        brackets, s = s[0] + s[-1], s[1:-1]
    elif s.startswith("\\{") and s.endswith("\\}"):
        brackets, s = "{}", s[2:-2]
    items, depth, start = [], 0, 0
    for i, c in enumerate(s):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(s[start:i])
            start = i + 1
    items.append(s[start:])
    if len(items) < 2:
        return None
    return brackets, [x.strip() for x in items]


_ASSIGNED = regex.compile(
    r"^\\?[A-Za-z]+(?:_\{?[A-Za-z0-9,]+\}?)?(?:\^\{?[A-Za-z0-9*']+\}?)?'*\s*"
    r"(?:=|\\approx|\\equiv(?![A-Za-z])|\\in(?![A-Za-z]))\s*(?=\S)"
)


def _rhs_of_assignment(text: str, other: str) -> str:
    """``v_0 = 3 \text{ m/s}`` -> ``3 \text{ m/s}`` when the other side is not an equation (a
    named result, as math-verify also reads it); an equation against an equation stays whole."""
    if split_equation(other) or "\\approx" in other:
        return text
    m = _ASSIGNED.match(text)
    if m and "=" not in text[m.end():]:
        return text[m.end():]
    return text


def _congruent(mp, mg, p: str, g: str, policy: NumericPolicy, depth: int) -> bool:
    """The modulus policy (:mod:`.congruence`): one side's modulus is dropped; two moduli must be
    equal, and integer residues then need only be congruent."""
    if mp and mg:
        if not _one(mp[1], mg[1], policy, depth + 1):
            return False
        a, b, m = (parse_number(x) for x in (mp[0], mg[0], mp[1]))
        if a and b and m and all(x.exact and x.value.denominator == 1 for x in (a, b, m)) and m.value:
            return (a.value - b.value) % m.value == 0
    return _one(mp[0] if mp else p, mg[0] if mg else g, policy, depth + 1)


def _plain_degrees(text: str) -> Number | None:
    """A plain number without a unit, read as degrees against a sexagesimal angle."""
    q = split_quantity(text)
    return q[0] if q is not None and q[1] is None else None


def _sexagesimal(p: str, g: str, policy: NumericPolicy) -> bool | None:
    """Step 3's first half: when a side has minutes or seconds, both sides as degrees; None when this
    step does not apply (the common case costs two failed regex matches, nothing more)."""
    ap, ag = sexagesimal_degrees(p), sexagesimal_degrees(g)
    if max(ap[1] if ap else 0, ag[1] if ag else 0) < 2:
        return None
    dp = ap[0] if ap else _plain_degrees(p)
    dg = ag[0] if ag else _plain_degrees(g)
    if dp is None or dg is None:
        return None
    return numbers_match(dp, dg, policy)


def _one(pred: str, gold: str, policy: NumericPolicy, depth: int = 0) -> bool:
    p, g = normalise(pred), normalise(gold)
    if not p or not g:
        return False
    if canonical(p) == canonical(g):
        return True
    p, g = _rhs_of_assignment(p, g), _rhs_of_assignment(g, p)
    mp, mg = split_modulus(p), split_modulus(g)
    if mp or mg:
        return _congruent(mp, mg, p, g, policy, depth)  # 42 \pmod{100} against 42
    ip, ig = as_interval(p), as_interval(g)
    if ip and ig and (ip.var or ig.var):  # -2 \leq x \leq 3 against [-2, 3]
        return intervals_match(ip, ig, lambda a, b: _one(a, b, policy, depth + 1))
    decided = _sexagesimal(p, g, policy)
    if decided is not None:
        return decided  # 30^\circ 15' against 30.25^\circ
    qp, qg = split_quantity(p), split_quantity(g)
    if qp is not None and qg is not None:
        return units_compatible(qp[1], qg[1]) and numbers_match(qp[0], qg[0], policy)
    up, ug = split_marked_unit(p), split_marked_unit(g)
    if up and ug and not units_compatible(up[1], ug[1]):
        return False  # 2\sqrt{2} m against 2\sqrt{2} cm
    if up or ug:
        pv, gv = (up[0] if up else p), (ug[0] if ug else g)
        if _one(pv, gv, policy, depth + 1):
            return True
        if up and up[1] == "°" and not ug and _math_verify_equal("\\frac{(" + pv + ")\\pi}{180}", g):
            return True  # 30^\circ against \frac{\pi}{6}
        if ug and ug[1] == "°" and not up and _math_verify_equal(p, "\\frac{(" + gv + ")\\pi}{180}"):
            return True
    if split_equation(p) and split_equation(g) and equations_equivalent(p, g, _latex_to_sympy):
        return True
    if depth == 0:
        tp, tg = split_top_level(p), split_top_level(g)
        if tp and tg and tp[0] == tg[0] and len(tp[1]) == len(tg[1]):
            if all(_one(a, b, policy, depth + 1) for a, b in zip(tp[1], tg[1])):
                return True
    if _unnamed_equation_against_value(p, g):
        return False  # 2x = x' against x': math-verify would compare x' with its right side
    for a, b in ((p, g), (pred, gold)) if (p, g) != (pred, gold) else ((p, g),):
        if _math_verify_equal(a, b):
            return not _dropped_a_variable(p, g)
    return _sympy_equal(p, g)


_NAME = regex.compile(
    r"^\\?[A-Za-z]+(?:_\{?[A-Za-z0-9,]+\}?)?(?:\^\{?[A-Za-z0-9*']+\}?)?'*(?:\([^()]*\))?$"
)


def _unnamed_equation_against_value(p: str, g: str) -> bool:
    """True when exactly one side is an equation and its left-hand side is not a name (``v_0``,
    ``f(2)``, ``x'``): math-verify then matches the other side against the equation's right-hand
    side, which is only the stated result when the left names it."""
    ep, eg = split_equation(p), split_equation(g)
    if bool(ep) == bool(eg):
        return False
    return not _NAME.match((ep or eg)[0].strip())


def equivalent(pred: str, ground_truth: Any, policy: NumericPolicy | None = None) -> bool:
    """True when the answer text ``pred`` matches any accepted form of ``ground_truth`` under the
    rules above and ``policy`` (default :class:`NumericPolicy()`)."""
    policy = policy or NumericPolicy()
    return any(_one(str(pred), g, policy) for g in gold_alternatives(ground_truth))


def obviously_wrong(pred: str, ground_truth: Any) -> bool:
    """True when a rejected answer needs no human look: it is empty, or it and every reference form
    are plain numbers in compatible units with different values (``12`` against ``13``).

    Symbolic, unit and format mismatches are *not* obviously wrong: those are the rejections a
    grader's rules may get wrong, and that ``verl-focal eval score --failures`` lists for audit.
    """
    p = normalise(str(pred))
    if not p:
        return True
    qp = split_quantity(p)
    if qp is None:
        return False
    for g in gold_alternatives(ground_truth):
        qg = split_quantity(normalise(g))
        if qg is None or not units_compatible(qp[1], qg[1]):
            return False
    return True
