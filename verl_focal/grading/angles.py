r"""Sexagesimal angles: degrees with arcminutes and arcseconds, ``30^\circ 15' 36''``.

:func:`sexagesimal_degrees` reads an angle written in degrees, minutes and seconds as one number of
degrees, d + m/60 + s/3600 (the sign of the degrees applies to the whole angle): ``30^\circ 15'`` is
30.25 degrees, ``-12^\circ 30'`` is -12.5.  Degrees are required; the minutes and seconds are each
optional (``30^\circ 15.5'``, ``30^\circ 0' 36''``), and the arcsecond mark may be written ``''`` or
``"``.  The text is expected after :func:`~verl_focal.grading.normalise.normalise` (which writes
``^{\prime}``, ``′``, ``″`` as ``'`` and ``''``).

The equivalence check compares such an angle with the other side read as degrees when at least one
side has minutes or seconds (``30^\circ 15'`` against ``30.25^\circ`` or ``30.25``); one-unit
answers keep the unit policy of :mod:`.units` (``30'`` against ``30^\circ`` is wrong).
"""

from __future__ import annotations

from fractions import Fraction

import regex

from verl_focal.grading.numeric import Number, parse_number
from verl_focal.grading.units import DEGREE_MARK

__all__ = ["sexagesimal_degrees"]

_NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)"
_UNSIGNED = r"(?:\d+(?:\.\d*)?|\.\d+)"
_GAP = r"(?:\s|\\[,;:! ]|~)*"
_ANGLE = regex.compile(
    rf"^{_GAP}(?P<d>{_NUM}){_GAP}{DEGREE_MARK}"
    rf"(?:{_GAP}(?P<m>{_UNSIGNED}){_GAP}'(?!'))?"
    rf"(?:{_GAP}(?P<s>{_UNSIGNED}){_GAP}(?:''|\"))?{_GAP}$"
)


def sexagesimal_degrees(text: str) -> tuple[Number, int] | None:
    r"""``(degrees, parts)`` of an angle written in degrees with optional minutes and seconds, or None.

    ``degrees`` is a :class:`~verl_focal.grading.numeric.Number`: exact when every part is an integer,
    else with the unit in the last place of the last part, in degrees (``30^\circ 15.5'`` -> 1/600).
    ``parts`` counts the parts written (1 for ``30^\circ``, 3 for ``30^\circ 15' 36''``).

    >>> n, parts = sexagesimal_degrees("30^\\circ 15' 36''")
    >>> float(n.value), n.exact, parts
    (30.26, True, 3)
    >>> float(sexagesimal_degrees("-12^\\circ 30'")[0].value)
    -12.5
    """
    m = _ANGLE.match(text)
    if not m:
        return None
    total, exact, ulp, parts = Fraction(0), True, None, 0
    for name, scale in (("d", Fraction(1)), ("m", Fraction(1, 60)), ("s", Fraction(1, 3600))):
        raw = m.group(name)
        if raw is None:
            continue
        n = parse_number(raw.lstrip("+-"))
        if n is None:
            return None
        parts += 1
        total += n.value * scale
        exact = exact and n.exact
        ulp = (Fraction(1) if n.exact or n.ulp is None else n.ulp) * scale  # of the last part written
    sign = -1 if m.group("d").startswith("-") else 1
    return Number(sign * total, exact, None, None if exact else ulp), parts
