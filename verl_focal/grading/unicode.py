r"""Unicode forms of an answer, rewritten as the ASCII/LaTeX the other rules read.

:func:`normalise_unicode` is the first step of :func:`verl_focal.grading.normalise.normalise`.
It only touches non-ASCII characters, so a pure-ASCII answer comes back unchanged:

* characters that carry structure NFKC would flatten are rewritten first: superscripts and
  subscripts (``x²`` -> ``x^{2}``, ``10⁻³`` -> ``10^{-3}``, ``x₁`` -> ``x_{1}``; NFKC alone would
  give ``x2``) and vulgar fractions (``½`` -> ``\frac{1}{2}``, ``3½`` -> ``\frac{7}{2}``; NFKC
  would give ``31⁄2``);
* then Unicode compatibility normalisation (NFKC): fullwidth digits, letters and signs
  (``４２`` -> ``42``, ``－1`` -> ``-1``, ``3，4`` -> ``3,4``), ligatures, ``℃`` -> ``°C``;
* then roots (``√2`` -> ``\sqrt{2}``, ``∛x`` -> ``\sqrt[3]{x}``), primes (``′`` -> ``'``, ``″`` ->
  ``''``), operators, relations and letters to their LaTeX commands: ``−`` -> ``-``, ``×`` ->
  ``\times``, ``·``/``⋅`` -> ``\cdot``, ``÷`` -> ``\div``, ``±`` -> ``\pm``, ``≤`` -> ``\leq``,
  ``∞`` -> ``\infty``, ``π`` -> ``\pi`` and the other Greek letters, ``µ`` -> ``\mu``.

Each rewrite keeps the value the text denotes (a mixed number ``3½`` is 7/2), so it cannot turn a
wrong answer into a right one: two answers that differ before it still differ after it, unless
they were two spellings of the same value (``tests/reward/test_unicode.py`` checks this on every
negative of the equivalence corpus).
"""

from __future__ import annotations

import unicodedata
from fractions import Fraction

import regex

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱ", "0123456789+-=()ni")
_SUBSCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₒₓₙ", "0123456789+-=()aeoxn")
_SUP_RUN = regex.compile(r"[⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱ]+")
_SUB_RUN = regex.compile(r"[₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₒₓₙ]+")

_VULGAR = {
    "½": (1, 2), "⅓": (1, 3), "⅔": (2, 3), "¼": (1, 4), "¾": (3, 4), "⅕": (1, 5), "⅖": (2, 5), "⅗": (3, 5),
    "⅘": (4, 5), "⅙": (1, 6), "⅚": (5, 6), "⅐": (1, 7), "⅛": (1, 8), "⅜": (3, 8), "⅝": (5, 8), "⅞": (7, 8),
    "⅑": (1, 9), "⅒": (1, 10),
}
_MIXED = regex.compile(r"(?<![\d.])(\d+)?\s*([" + "".join(_VULGAR) + "])")
_FRACTION_SLASH = regex.compile(r"(\d+)\s*[⁄∕]\s*(\d+)")

_ROOTS = {"√": "", "∛": "[3]", "∜": "[4]"}
# the radicand: a braced or bracketed group, a number, a LaTeX command, or one letter
_RADICAND = regex.compile(
    r"\s*((?P<b>\{(?:[^{}]|(?&b))*\})|(?P<p>\((?:[^()]|(?&p))*\))|\d+(?:\.\d+)?|\\[A-Za-z]+|[A-Za-z])"
)

_PRIMES = {"′": "'", "″": "''", "‴": "'''", "ʹ": "'", "ʺ": "''"}

_SYMBOLS = {
    "−": "-", "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "×": r"\times", "⋅": r"\cdot",
    "·": r"\cdot", "∙": r"\cdot", "÷": r"\div", "±": r"\pm", "∓": r"\mp", "≤": r"\leq", "≥": r"\geq",
    "⩽": r"\leq", "⩾": r"\geq", "≠": r"\neq", "≈": r"\approx", "≡": r"\equiv", "∞": r"\infty",
    "∈": r"\in", "∪": r"\cup", "∩": r"\cap", "∅": r"\emptyset", "→": r"\to", "∠": r"\angle",
    "∑": r"\sum", "∏": r"\prod", "∫": r"\int", "ℏ": r"\hbar", "Å": r"\AA",
    "α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "δ": r"\delta", "ε": r"\epsilon", "ϵ": r"\epsilon",
    "ζ": r"\zeta", "η": r"\eta", "θ": r"\theta", "ϑ": r"\vartheta", "ι": r"\iota", "κ": r"\kappa",
    "λ": r"\lambda", "μ": r"\mu", "µ": r"\mu", "ν": r"\nu", "ξ": r"\xi", "π": r"\pi", "ρ": r"\rho",
    "σ": r"\sigma", "τ": r"\tau", "υ": r"\upsilon", "φ": r"\phi", "ϕ": r"\phi", "χ": r"\chi", "ψ": r"\psi",
    "ω": r"\omega", "Γ": r"\Gamma", "Δ": r"\Delta", "Θ": r"\Theta", "Λ": r"\Lambda", "Ξ": r"\Xi",
    "Π": r"\Pi", "Σ": r"\Sigma", "Φ": r"\Phi", "Ψ": r"\Psi", "Ω": r"\Omega",
}
_SYMBOL_RE = regex.compile("|".join(regex.escape(k) for k in sorted(_SYMBOLS, key=len, reverse=True)))


def _vulgar(m: regex.Match) -> str:
    num, den = _VULGAR[m.group(2)]
    value = Fraction(num, den) + int(m.group(1) or 0)
    return r"\frac{" + str(value.numerator) + "}{" + str(value.denominator) + "}"


def _roots(s: str) -> str:
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c in _ROOTS:
            m = _RADICAND.match(s, i + 1)
            if m:
                body = m.group(1)
                if body[0] in "{(":
                    body = body[1:-1]
                out.append(r"\sqrt" + _ROOTS[c] + "{" + body + "}")
                i = m.end()
                continue
            out.append(r"\sqrt" + _ROOTS[c])
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _symbol(m: regex.Match, s: str) -> str:
    rep = _SYMBOLS[m.group(0)]
    if rep.startswith("\\") and m.end() < len(s) and s[m.end()].isalpha():
        rep += " "  # \pi r, not \pir
    return rep


def normalise_unicode(s: str) -> str:
    """``s`` with its Unicode forms rewritten as ASCII/LaTeX (see the module docstring); a string
    without non-ASCII characters is returned unchanged."""
    if s.isascii():
        return s
    s = _SUP_RUN.sub(lambda m: "^{" + m.group(0).translate(_SUPERSCRIPTS) + "}", s)
    s = _SUB_RUN.sub(lambda m: "_{" + m.group(0).translate(_SUBSCRIPTS) + "}", s)
    s = _MIXED.sub(_vulgar, s)
    s = unicodedata.normalize("NFKC", s)
    s = _roots(s)
    s = "".join(_PRIMES.get(c, c) for c in s)
    s = _FRACTION_SLASH.sub(r"\1/\2", s)
    return _SYMBOL_RE.sub(lambda m: _symbol(m, s), s)
