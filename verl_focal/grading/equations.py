r"""Equations equal up to rearrangement.

Two equations ``L1 = R1`` and ``L2 = R2`` state the same relation when ``L1 - R1`` is a non-zero
constant multiple of ``L2 - R2``: sides swapped (factor -1), terms moved across (factor ±1), or
both sides scaled (``2y = 4x + 2`` against ``y = 2x + 1``).  A ratio that still holds a variable
(``x = 2`` against ``x^2 = 4``) is a different relation.
"""

from __future__ import annotations

import regex

_RELATION = regex.compile(r"\\(?:le|ge|leq|geq|neq|ne|approx|sim|equiv|lt|gt|leqslant|geqslant)(?![A-Za-z])|[<>!]=?|==")


def split_equation(text: str) -> tuple[str, str] | None:
    """``(lhs, rhs)`` for text with exactly one ``=`` and no other relation; else None."""
    if text.count("=") != 1 or _RELATION.search(text):
        return None
    lhs, rhs = text.split("=")
    if not lhs.strip() or not rhs.strip():
        return None
    return lhs.strip(), rhs.strip()


def equations_equivalent(pred: str, gold: str, to_sympy) -> bool:
    """True when both are equations (:func:`split_equation`) whose sides differ by a rearrangement
    and a non-zero constant factor.  ``to_sympy`` turns LaTeX into a SymPy expression (raises on
    failure)."""
    import sympy

    sp, sg = split_equation(pred), split_equation(gold)
    if sp is None or sg is None:
        return False
    try:
        dp = to_sympy(sp[0]) - to_sympy(sp[1])
        dg = to_sympy(sg[0]) - to_sympy(sg[1])
        if dg == 0 or dp == 0 or not dg.free_symbols:
            return False
        ratio = sympy.simplify(dp / dg)
    except Exception:  # noqa: BLE001 - unparsable text is simply not an equation we can compare
        return False
    return bool(ratio.is_number and ratio != 0 and ratio.is_finite)
