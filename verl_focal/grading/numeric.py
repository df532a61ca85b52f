r"""Plain numbers and the numeric policy.

:func:`parse_number` reads an answer that *is* a number -- an integer, a decimal, a fraction
(``\frac{a}{b}``, ``a/b``), or scientific notation (``m\times10^{k}``, ``10^{k}``; the ``e`` form is
rewritten by :func:`verl_focal.grading.normalise.normalise_literals` first) -- into an exact
:class:`fractions.Fraction`, and records whether it was written as an *exact* number (integer or
fraction) or as a *decimal* (a decimal point or a power of ten: a rounded measurement).

:func:`numbers_match` is the policy (:class:`NumericPolicy`):

* both exact, or an integer reference -> the values must be equal (an integer answer ± 1 never
  passes, in any form);
* an exact fraction against a decimal -> the decimal must be the fraction correctly rounded, with
  at least 3 significant figures (``0.333`` for 1/3, not ``0.3`` or ``0.334``);
* otherwise -> ``|p - g| <= min(rel_tol * |g|, ulp(g) / 2)``, where ``ulp(g)`` is one unit in the
  last digit the reference writes, so no digit the reference states may differ (rel_tol default
  1e-4, the relative tolerance of the Qwen2.5-Math / DeepSeek-Math / ToRA ``math_equal`` graders,
  also in verl's ``prime_math``); and,
  with ``sig_figs=True``, a prediction that rounds to the reference at the reference's number of
  significant figures also passes (``2.998e8`` for ``3.0\times10^{8}``).

math-verify's own rule for floats is different (both sides rounded to 6 *decimal places*), which
accepts ``1.3\times10^{-8}`` for ``1.24\times10^{-8}``; for plain numbers our policy replaces it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import regex

_INT = r"[0-9]+"
_DEC = r"(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)"
_SIGN = r"[+-]?"
_MAX_EXP = 400  # 10^k beyond this is not an answer anyone boxes; refuse rather than build huge ints

_RE_PLAIN = regex.compile(rf"^({_SIGN})({_DEC})$")
_RE_SCI = regex.compile(rf"^({_SIGN})(?:({_DEC})\\times)?10\^(?:\{{({_SIGN}{_INT})\}}|([0-9]))$")
_RE_FRAC = regex.compile(rf"^({_SIGN})\\frac\{{({_INT})\}}\{{({_INT})\}}$")
_RE_FRAC_SHORT = regex.compile(rf"^({_SIGN})\\frac([0-9])([0-9])$")
_RE_SLASH = regex.compile(rf"^({_SIGN})({_INT})/({_INT})$")
_STRIP = regex.compile(r"\\[,;:! ]|~|\s+|\{\}")


@dataclass(frozen=True)
class Number:
    """An exact value and how it was written."""

    value: Fraction
    exact: bool          # written as an integer or a fraction (not a decimal, not 10^k)
    sig_figs: int | None  # significant figures of a decimal mantissa; None for exact numbers
    ulp: Fraction | None = None  # one unit in the last written digit of a decimal; None if exact


@dataclass(frozen=True)
class NumericPolicy:
    """How two plain numbers are compared (reward kwargs ``rel_tol`` and ``sig_figs``).

    ``rel_tol`` -- relative tolerance, used only when one side is a decimal (default 1e-4);
    ``sig_figs`` -- also accept a prediction equal to the reference after rounding to the
    reference's significant figures (default False).
    """

    rel_tol: float = 1e-4
    sig_figs: bool = False

    def __post_init__(self) -> None:
        if not (isinstance(self.rel_tol, (int, float)) and 0 <= float(self.rel_tol) < 0.5):
            raise ValueError(f"reward kwarg rel_tol={self.rel_tol!r} must be a number in [0, 0.5); "
                             "the default is 1e-4 (0 = exact)")
        if not isinstance(self.sig_figs, bool):
            raise ValueError(f"reward kwarg sig_figs={self.sig_figs!r} must be true or false")


def _count_sig_figs(mantissa: str) -> int:
    digits = mantissa.replace(".", "").lstrip("0")
    if "." not in mantissa:
        digits = digits.rstrip("0") or digits
    return max(len(digits), 1)


def parse_number(text: str) -> Number | None:
    """The number ``text`` denotes, or None when it is not a plain number (see module doc)."""
    s = _STRIP.sub("", text)
    while len(s) > 2 and s[0] in "({" and s[-1] in ")}" and s[1:-1].count(s[0]) == 0:
        s = s[1:-1]  # (051), {3}
    if not s or len(s) > 200:
        return None
    m = _RE_PLAIN.match(s)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        body = m.group(2)
        if "." not in body:
            return Number(sign * Fraction(int(body)), True, None)
        try:
            decimals = len(body.split(".", 1)[1])
            return Number(sign * Fraction(Decimal(body)), False, _count_sig_figs(body), Fraction(1, 10 ** decimals))
        except InvalidOperation:
            return None
    m = _RE_SCI.match(s)
    if m:
        exp = int(m.group(3) or m.group(4))
        if abs(exp) > _MAX_EXP:
            return None
        sign = -1 if m.group(1) == "-" else 1
        mant = m.group(2) or "1"
        decimals = len(mant.split(".", 1)[1]) if "." in mant else 0
        return Number(sign * Fraction(Decimal(mant)) * Fraction(10) ** exp, False,
                      _count_sig_figs(mant) if m.group(2) else 1, Fraction(10) ** (exp - decimals))
    for rx in (_RE_FRAC, _RE_FRAC_SHORT, _RE_SLASH):
        m = rx.match(s)
        if m:
            den = int(m.group(3))
            if den == 0:
                return None
            sign = -1 if m.group(1) == "-" else 1
            return Number(sign * Fraction(int(m.group(2)), den), True, None)
    return None


def _round_sig(x: Fraction, figs: int) -> Fraction:
    if x == 0:
        return x
    k = math.floor(math.log10(abs(float(x)))) - figs + 1
    q = Fraction(10) ** k
    return round(x / q) * q


def _shows(decimal: Number, exact: Number) -> bool:
    """A decimal with >= 3 significant figures that is the exact fraction correctly rounded, i.e.
    within half a unit of its last digit (``0.333`` and ``0.3333`` for 1/3, ``0.6667`` for 2/3;
    not ``0.334``)."""
    return (decimal.ulp is not None and (decimal.sig_figs or 0) >= 3
            and abs(decimal.value - exact.value) <= decimal.ulp / 2)


def numbers_match(pred: Number, gold: Number, policy: NumericPolicy = NumericPolicy()) -> bool:
    """True when ``pred`` answers ``gold`` under ``policy``.

    * equal values always match;
    * an integer reference (written exactly) needs an equal value, whatever the prediction's form;
    * an exact fraction on one side and a decimal on the other match when the decimal shows the
      fraction to its last digit (:func:`_shows`);
    * two integer values, the prediction written exactly, never match when different;
    * otherwise the relative tolerance ``rel_tol`` applies, capped at half a unit in the last digit
      the reference writes (``3`` does not match ``3.0001``), then (optional) significant figures.
    """
    if pred.value == gold.value:
        return True
    if pred.exact and gold.exact:
        return False
    if gold.exact:
        return gold.value.denominator != 1 and _shows(pred, gold)
    if pred.exact:
        if pred.value.denominator == 1 and gold.value.denominator == 1:
            return False
        if pred.value.denominator != 1:
            return _shows(gold, pred)
    tol = Fraction(policy.rel_tol) * abs(gold.value)
    if gold.ulp is not None:
        tol = min(tol, gold.ulp / 2)
    if abs(pred.value - gold.value) <= tol:
        return True
    if policy.sig_figs and gold.sig_figs:
        return _round_sig(pred.value, gold.sig_figs) == _round_sig(gold.value, gold.sig_figs)
    return False
