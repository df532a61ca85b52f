r"""Inequalities read as intervals: ``-2 \leq x \leq 3`` is ``[-2, 3]``, ``-2 < x \le 3`` is
``(-2, 3]``, ``x \geq 1`` is ``[1, \infty)``.

:func:`as_interval` reads either form into an :class:`Interval`; two answers that are an inequality
and an interval (or two inequalities in the same variable) match when the ends are equal (compared
with the other rules) and each end is open or closed alike.  A closed bracket at an infinite end
is read as written, so ``[1, \infty]`` does not match ``x \geq 1``.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

_LESS = {"<": False, "\\lt": False, "<=": True, "\\le": True, "\\leq": True, "\\leqslant": True}
_GREATER = {">": False, "\\gt": False, ">=": True, "\\ge": True, "\\geq": True, "\\geqslant": True}
_REL = regex.compile(r"<=|>=|\\(?:leqslant|geqslant|leq|geq|le|ge|lt|gt)(?![A-Za-z])|<|>")
_VAR = regex.compile(r"^(?:\\[A-Za-z]+|[A-Za-z])(?:_\{?[A-Za-z0-9]+\}?)?'*$")
_INF = regex.compile(r"^([+-]?)\s*\\infty$")


@dataclass(frozen=True)
class Interval:
    lo: str            # "-\infty" for an unbounded end
    hi: str            # "\infty" for an unbounded end
    lo_closed: bool
    hi_closed: bool
    var: str | None    # the variable of an inequality; None for interval notation


def _top_level(s: str) -> bool:
    depth = 0
    for c in s:
        depth += c in "([{"
        depth -= c in ")]}"
        if depth < 0:
            return False
    return depth == 0


def _inequality(s: str) -> Interval | None:
    parts = _REL.split(s)
    rels = _REL.findall(s)
    if not 1 <= len(rels) <= 2 or not all(p.strip() and _top_level(p) for p in parts):
        return None
    parts = [p.strip() for p in parts]
    if all(r in _GREATER for r in rels):  # 3 \geq x \geq -2: read right to left
        parts, rels = parts[::-1], [{">": "<", "\\gt": "<"}.get(r, "<=") for r in reversed(rels)]
    if not all(r in _LESS for r in rels):
        return None
    closed = [_LESS[r] for r in rels]
    if len(rels) == 2:
        if not _VAR.match(parts[1]):
            return None
        return Interval(parts[0], parts[2], closed[0], closed[1], parts[1])
    if _VAR.match(parts[0]) and not _VAR.match(parts[1]):    # x < b
        return Interval("-\\infty", parts[1], False, closed[0], parts[0])
    if _VAR.match(parts[1]) and not _VAR.match(parts[0]):    # a < x
        return Interval(parts[0], "\\infty", closed[0], False, parts[1])
    return None


def _notation(s: str) -> Interval | None:
    if len(s) < 5 or s[0] not in "[(" or s[-1] not in "])":
        return None
    inner = s[1:-1]
    depth, cut = 0, []
    for i, c in enumerate(inner):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                return None
        elif c == "," and depth == 0:
            cut.append(i)
    if len(cut) != 1 or depth != 0:
        return None
    lo, hi = inner[:cut[0]].strip(), inner[cut[0] + 1:].strip()
    if not lo or not hi:
        return None
    return Interval(lo, hi, s[0] == "[", s[-1] == "]", None)


def as_interval(text: str) -> Interval | None:
    """The interval an inequality in one variable or an interval ``[a, b)`` denotes; None for
    anything else (including a union of intervals)."""
    s = text.strip()
    return _inequality(s) if _REL.search(s) else _notation(s)


def infinite_end(text: str) -> int:
    """+1 for ``\\infty``/``+\\infty``, -1 for ``-\\infty``, 0 for a finite end."""
    m = _INF.match(text.strip())
    if not m:
        return 0
    return -1 if m.group(1) == "-" else 1


def intervals_match(a: Interval, b: Interval, ends_equal) -> bool:
    """Same interval: the same open/closed ends, and the ends equal under ``ends_equal(x, y)``
    (infinite ends by sign); two inequalities must also be in the same variable."""
    if a.var is not None and b.var is not None and a.var != b.var:
        return False
    if (a.lo_closed, a.hi_closed) != (b.lo_closed, b.hi_closed):
        return False
    for x, y in ((a.lo, b.lo), (a.hi, b.hi)):
        ix, iy = infinite_end(x), infinite_end(y)
        if ix or iy:
            if ix != iy:
                return False
        elif not ends_equal(x, y):
            return False
    return True
