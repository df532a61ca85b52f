r"""Units and degree marks after a numeric answer.

:func:`split_quantity` splits ``6.43\times10^{16}\ \text{cm}^{-3}`` into the number and the unit.
What counts as a unit is deliberately narrow, so that a symbolic factor is never mistaken for one:

* explicit unit markup: ``\text{..}``, ``\mathrm{..}``, ``\textrm``, ``\mbox``, ``\operatorname``,
  each optionally raised to an integer power (``\text{cm}^{-3}``);
* degree marks: ``^\circ``, ``^{\circ}``, ``\circ``, ``°``, ``\degree`` (optionally followed by a
  scale letter, ``^\circ C``);
* arcminute and arcsecond marks after a number: ``'`` and ``''`` (also ``^{\prime}``,
  ``^{\prime\prime}``, ``′``, ``″``, which :func:`~verl_focal.grading.normalise.normalise` writes as
  ``'``/``''``): ``0.003''`` is 0.003 arcseconds.  After a letter a mark is a prime, not a unit
  (``x'`` is a different variable from ``x``);
* a common unit symbol or unit word (:data:`UNIT_WORDS`, with SI prefixes) written as bare letters,
  but only when a space or LaTeX space separates it from the number: ``5\ m`` is five metres,
  ``5m`` is a product and is left alone.

The policy (:func:`units_compatible`): a unit present on one side only is dropped; when both sides
carry one the two must be the same unit after removing markup and spacing -- no conversion is
attempted, so ``5 cm`` against ``5 m`` (or ``500 cm``) is wrong.  Degrees, arcminutes and
arcseconds are three units: ``30^\circ`` against ``30'`` is wrong, ``30'`` against ``30`` is right.
"""

from __future__ import annotations

import regex

from verl_focal.grading.numeric import Number, parse_number

_PREFIXES = ("", "Y", "Z", "E", "P", "T", "G", "M", "k", "h", "da", "d", "c", "m", "u", "µ", "n", "p", "f", "a")
_SI = ("m", "g", "s", "A", "K", "mol", "cd", "Hz", "N", "Pa", "J", "W", "C", "V", "F", "Wb", "T", "H", "L", "l",
       "eV", "bar", "Ohm", "ohm", "S", "rad", "sr", "Bq", "Gy", "M", "cal", "erg", "dyn", "b")
_OTHER = ("min", "h", "hr", "hrs", "yr", "yrs", "d", "atm", "Torr", "torr", "mmHg", "psi", "AU", "au", "ly", "pc",
          "Da", "amu", "u", "in", "ft", "yd", "mi", "mph", "lb", "lbs", "oz", "gal", "deg", "degree", "degrees",
          "rpm", "dB", "G", "Gs", "Mpc", "kpc", "Jy", "Ry", "cc",
          "meter", "meters", "metre", "metres", "second", "seconds", "gram", "grams", "kilogram", "kilograms",
          "joule", "joules", "newton", "newtons", "watt", "watts", "volt", "volts", "hour", "hours", "minute",
          "minutes", "day", "days", "year", "years", "unit", "units", "inch", "inches", "foot", "feet", "mile",
          "miles", "dollar", "dollars", "cent", "cents", "percent", "kelvin", "liter", "liters", "litre",
          "litres", "people", "cm", "km", "kg", "mm", "nm")
UNIT_WORDS = frozenset({p + b for p in _PREFIXES for b in _SI} | set(_OTHER))

_MARKUP = r"\\(?:text|mathrm|textrm|mbox|rm|operatorname|textnormal|textup|mathit)\s*\{(?:[^{}]|\{[^{}]*\})*\}"
#: a degree mark: ``^\circ``, ``^{\circ}``, ``\circ``, ``°``, ``\degree``
DEGREE_MARK = r"(?:\^\s*\\circ|\^\s*\{\s*\\circ\s*\}|\\circ|°|\\degree)"
_ARC = r"(?:'{1,2}|\^\s*\{?\s*\\prime(?:\s*\\prime)?\s*\}?)"
_SCRIPT = r"(?:\^\s*(?:\{\s*[+-]?\s*\d+\s*\}|[+-]?\d))"
_GREEK_UNIT = r"(?:\\mu|\\Omega|\\AA|\\ohm)"
_ATOM_END = regex.compile(
    rf"(?:{_MARKUP}{_SCRIPT}?|{DEGREE_MARK}|(?<=[\d.}}]\s*){_ARC}|{_GREEK_UNIT}[A-Za-z]*{_SCRIPT}?|(?<![A-Za-z\\])([A-Za-z]+){_SCRIPT}?)$"
)
_SEP_END = regex.compile(r"(?:\s+|\\[,;:! ]|~|/|\\cdot|\*)$")
_SPACE_BEFORE = regex.compile(r"(?:\s|\\[,;:! ]|~)$")
_KEY_DROP = regex.compile(r"\\(?:text|mathrm|textrm|mbox|rm|operatorname|textnormal|textup|mathit)\s*|[{}]")
_KEY_SPACE = regex.compile(r"(?:\s|~|\\[,;:! ])+")
_KEY_DEGREE = regex.compile(r"\^?\s*\\circ|\\degree|degrees?|deg(?![a-z])")
_KEY_ARCSEC = regex.compile(r"''|\^\s*\{?\s*\\prime\s*\\prime\s*\}?")
_KEY_ARCMIN = regex.compile(r"'|\^\s*\{?\s*\\prime\s*\}?")


def _tail_atoms(s: str, atom: regex.Pattern):
    r"""The unit atoms ending ``s``, right to left, separators (spaces, ``\,``, ``/``, ``\cdot``) skipped:
    yields each atom's match; the tail so far starts at its ``start()``."""
    pos = len(s)
    while pos > 0:
        head = s[:pos]
        m = _SEP_END.search(head)
        if m and m.start() < pos:
            pos = m.start()
            continue
        m = atom.search(head)
        if not m or m.start() >= pos:
            return
        yield m
        pos = m.start()


def split_quantity(text: str) -> tuple[Number, str | None] | None:
    """``(number, unit)`` for an answer that is a plain number with an optional unit (``unit`` is
    None when there is none); None when the part before the unit is not a plain number."""
    s = text.strip()
    n = parse_number(s)
    if n is not None:
        return n, None
    bare_only = True
    for m in _tail_atoms(s, _ATOM_END):
        word = m.group(1)
        if word is not None:
            if word not in UNIT_WORDS:
                break
        else:
            bare_only = False
        value = parse_number(s[: m.start()])
        if value is not None:
            if bare_only and not _SPACE_BEFORE.search(s[: m.start()]):
                return None  # "5m": a product, not five metres
            return value, unit_key(s[m.start():])
    return None


_MARKUP_ATOM_END = regex.compile(rf"(?:{_GREEK_UNIT}?{_MARKUP}{_SCRIPT}?|{DEGREE_MARK})$")


def split_marked_unit(text: str) -> tuple[str, str] | None:
    r"""``(value, unit)`` for any answer ending in explicit unit markup or a degree mark
    (``2\sqrt{2}\,\text{m}``, ``\frac{\pi}{4}\text{ rad}``, ``30^\circ``); None when there is no such
    tail or nothing before it.  Bare unit words are not split off here: without a number before
    them they cannot be told from variables."""
    s = text.strip()
    pos, seen = len(s), False
    for m in _tail_atoms(s, _MARKUP_ATOM_END):
        pos, seen = m.start(), True
    value = s[:pos].strip()
    if not seen or not value:
        return None
    while value and _SEP_END.search(value):
        value = _SEP_END.sub("", value).strip()
    return (value, unit_key(s[pos:])) if value else None


def unit_key(unit: str) -> str:
    r"""A unit without markup, spacing collapsed to one blank, degree marks as ``°``, arcminute and
    arcsecond marks as ``′`` and ``″``:
    ``\,\text{m}\cdot\text{s}^{-1}`` -> ``m\cdot s^-1``."""
    s = _KEY_DEGREE.sub("°", unit)
    s = _KEY_ARCMIN.sub("′", _KEY_ARCSEC.sub("″", s))
    s = _KEY_DROP.sub("", s)
    s = s.replace("\\mu", "µ").replace("\\Omega", "Ω")
    s = _KEY_SPACE.sub(" ", s).strip()
    s = regex.sub(r"\s*([/^])\s*", r"\1", s)
    return regex.sub(r"([°µ])\s+", r"\1", s)


_FACTOR = regex.compile(r"(°?[A-Za-zµΩ]+|°)(?:\^\{?([+-]?\d+)\}?)?|([/()])")


def unit_factors(key: str) -> dict[str, int] | None:
    r"""A unit key as base -> power (``m/s``, ``m\cdot s^-1`` and ``ms^{-1}``-with-spaces alike:
    ``{"m": 1, "s": -1}``); ``/`` puts the next factor, or a parenthesised group, in the
    denominator.  None when the key holds anything else (then keys are compared as text)."""
    text = key.replace("\\cdot", " ").replace("\\times", " ").replace("*", " ").replace(".", " ")
    out: dict[str, int] = {}
    sign, group_sign, pos = 1, 1, 0
    for m in _FACTOR.finditer(text):
        if text[pos:m.start()].strip():
            return None
        pos = m.end()
        if m.group(3) == "/":
            sign = -1
        elif m.group(3) == "(":
            group_sign, sign = sign, 1
        elif m.group(3) == ")":
            group_sign, sign = 1, 1
        else:
            p = int(m.group(2) or 1) * sign * group_sign
            out[m.group(1)] = out.get(m.group(1), 0) + p
            sign = 1
    if text[pos:].strip() or not out:
        return None
    return {k: v for k, v in out.items() if v}


def units_compatible(a: str | None, b: str | None) -> bool:
    """True unless both sides carry a unit and the units differ (``°`` and ``°C`` agree; ``m/s``
    and ``m s^{-1}`` are the same unit, see :func:`unit_factors`)."""
    if not a or not b:
        return True
    if a == b:
        return True
    if (a == "°" and b.startswith("°")) or (b == "°" and a.startswith("°")):
        return True
    fa, fb = unit_factors(a), unit_factors(b)
    return fa is not None and fa == fb
