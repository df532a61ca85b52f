r"""Text normalisation of one answer string, before any maths is done on it.

Each step rewrites a notation into the one math-verify and our numeric parser read, and never
changes the value an answer denotes:

* :func:`~verl_focal.grading.unicode.normalise_unicode` -- Unicode forms (fullwidth ``４２``, ``√2``,
  ``½``, ``×``, ``·``) as ASCII/LaTeX, before any other step;
* :func:`strip_wrappers` -- ``$``, ``\displaystyle``, ``\left``/``\right``, ``\textbf{}``,
  ``\mathbf{}``, ``\boxed{}`` and a ``\text{}``/``\mathrm{}`` spanning the whole answer;
* :func:`code_to_latex` -- answers written as code (``np.arcsin(10/13)``, ``2**0.5``);
* :func:`normalise_literals` -- digit grouping (``1,000``, ``1\,000``), ``-1./3``, ``.5``,
  scientific notation (``1.24e-8`` -> ``1.24\times10^{-8}``);
* :func:`unbrace_scripts` -- ``E_{1}`` -> ``E_1``, ``x^{2}`` -> ``x^2`` (one-character scripts);
* :func:`primes_as_marks` -- ``x^{\prime}``, ``x^\prime``, ``x^{\prime\prime}`` -> ``x'``, ``x''``;
* :func:`gold_alternatives` -- a reference that lists several accepted forms.
"""

from __future__ import annotations

import ast
import functools
from typing import Any

import regex

from verl_focal.grading.unicode import normalise_unicode

_SPACING = regex.compile(r"\\[,;:! ]|\\q?quad\b|~|\s+")
_DOLLAR = regex.compile(r"\$")
_DISPLAY = regex.compile(r"\\(?:displaystyle|textstyle|scriptstyle)\b\s*")
_LEFT_RIGHT = regex.compile(r"\\(?:left|right|big|Big|bigg|Bigg)(?![A-Za-z])\s*(\.)?")
_FRAC_VARIANT = regex.compile(r"\\[dt]frac(?![A-Za-z])")
_ALWAYS_UNWRAP = ("textbf", "mathbf", "boldsymbol", "bm", "underline", "boxed", "fbox", "mathit", "textit",
                  "emph", "mathbb")
_WHOLE_TEXT_OPEN = regex.compile(r"\\(?:text|mathrm|textrm|mbox|textnormal|operatorname)\s*\{")
THIN_SPACE_DIGITS = regex.compile(r"(?<=\d)(?:\\[,;:! ]|\{,\}|\s)(?=\d{3}(?!\d))")
_LEADING_THOUSANDS = regex.compile(r"^([+-]?\d{1,3}(?:,\d{3})+)(?![\d,])")
_TRAILING_POINT = regex.compile(r"(?<=\d)\.(?![\d.])")
_BARE_POINT = regex.compile(r"(?<![\w.}])\.(?=\d)")
_SCI_E = regex.compile(r"(?<![\w.\\])(\d+(?:\.\d*)?|\.\d+)\s*[eE]\s*([+-]?\d+)(?![\w.])")
_TIMES_TEN = regex.compile(r"\s*(?:\\cdot|\*|\\times|(?<=\d\s*)[x×])\s*10\s*\^\s*")
_POWER_NO_BRACE = regex.compile(r"10\^\s*([+-]?\d+)")
_POWER_PAREN = regex.compile(r"10\^\s*\(\s*([+-]?\d+)\s*\)")
_ONE_CHAR_SCRIPT = regex.compile(r"([_^])\{\s*([A-Za-z0-9])\s*\}")
_CIRC_BRACED = regex.compile(r"\^\s*\{\s*\\circ\s*\}")
# ^{\prime}, ^\prime, ^{\prime\prime}, ^{''}, ^' and a bare \prime: one or more prime marks
_PRIME_SCRIPT = regex.compile(r"\^\s*(?:\{\s*((?:(?:\\prime(?![A-Za-z])|')\s*)+)\}|(\\prime(?![A-Za-z])|'))")
_BARE_PRIME = regex.compile(r"\\prime(?![A-Za-z])")
_ANSWER_PREFIX = regex.compile(
    r"^(?:\\text\s*\{\s*)?(?:the\s+)?(?:final\s+)?answer\s*(?:is)?\s*:?\s*\}?\s*", flags=regex.IGNORECASE
)
_LEADING_APPROX = regex.compile(r"^\s*(?:\\approx|\\simeq|\\sim|≈|~)\s*")
_TRAILING_PUNCT = regex.compile(r"[\s.;,]+$")

_CODE_HINT = regex.compile(
    r"\b(?:np|numpy|math|sympy|sp|cmath)\.|\*|(?<![\\A-Za-z])pi(?![A-Za-z])|(?<![\\A-Za-z])(?:sqrt|a?(?:rc)?(?:sin|cos|tan)h?|exp|log(?:10|2)?|ln|abs)\("
)
_MODULE_PREFIX = regex.compile(r"\b(?:np|numpy|math|sympy|sp|cmath)\.")
_CODE_FUNC = regex.compile(
    r"(?<![\\A-Za-z])(sqrt|arcsinh|arccosh|arctanh|arcsin|arccos|arctan|asinh|acosh|atanh|asin|acos|atan|sinh|cosh|tanh|sin|cos|tan|exp|log10|log2|log|ln|abs)\("
)
_CODE_PI = regex.compile(r"(?<![\\A-Za-z])pi(?![A-Za-z])")
_TRIG_NAMES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "sinh^{-1}", "acosh": "cosh^{-1}",
               "atanh": "tanh^{-1}", "arcsinh": "sinh^{-1}", "arccosh": "cosh^{-1}", "arctanh": "tanh^{-1}"}


def matching(s: str, open_idx: int) -> int:
    """Index of the bracket closing the one at ``s[open_idx]`` (``{``, ``(`` or ``[``), or -1."""
    pairs = {"{": "}", "(": ")", "[": "]"}
    o = s[open_idx]
    c = pairs[o]
    depth = 0
    for i in range(open_idx, len(s)):
        if s[i] == o:
            depth += 1
        elif s[i] == c:
            depth -= 1
            if depth == 0:
                return i
    return -1


def unwrap_command(s: str, names: tuple[str, ...]) -> str:
    r"""Replace every ``\name{X}`` (for ``name`` in ``names``) by ``X``; braces are balanced."""
    pat = _unwrap_pattern(names)
    for _ in range(50):  # nested wrappers: a few rounds at most in practice
        m = pat.search(s)
        if not m:
            break
        end = matching(s, m.end() - 1)
        if end < 0:
            break
        s = s[:m.start()] + s[m.end():end] + s[end + 1:]
    return s


@functools.lru_cache(maxsize=8)
def _unwrap_pattern(names: tuple[str, ...]):
    return regex.compile(r"\\(?:" + "|".join(names) + r")\s*\{")


def strip_wrappers(s: str) -> str:
    r"""Remove formatting that does not change the answer (see the module docstring); a leading
    ``\approx``/``\sim``/``≈`` and a leading "Answer:" go too, and a Unicode minus becomes ``-``."""
    s = s.replace("\\$", "").replace("\u2212", "-")
    s = _DOLLAR.sub("", s)
    s = _LEADING_APPROX.sub("", s)
    s = _DISPLAY.sub("", s)
    s = _LEFT_RIGHT.sub("", s)
    s = _FRAC_VARIANT.sub(r"\\frac", s)
    s = unwrap_command(s, _ALWAYS_UNWRAP)
    s = s.strip()
    m = _WHOLE_TEXT_OPEN.match(s)  # \text{...} around the whole answer
    if m and matching(s, m.end() - 1) == len(s) - 1:
        s = s[m.end():-1].strip()
    s = _ANSWER_PREFIX.sub("", s)
    return _TRAILING_PUNCT.sub("", s) if not s.endswith("\\.") else s


def _convert_calls(s: str) -> str:
    out, i = [], 0
    while True:
        m = _CODE_FUNC.search(s, i)
        if not m:
            out.append(s[i:])
            return "".join(out)
        close = matching(s, m.end() - 1)
        if close < 0:
            out.append(s[i:])
            return "".join(out)
        name, inner = m.group(1), _convert_calls(s[m.end():close])
        out.append(s[i:m.start()])
        if name == "sqrt":
            out.append(r"\sqrt{" + inner + "}")
        elif name == "exp":
            out.append(r"e^{" + inner + "}")
        elif name == "abs":
            out.append(r"|" + inner + "|")
        elif name in ("log", "ln"):
            out.append(r"\ln(" + inner + ")")
        elif name in ("log10", "log2"):
            out.append(r"\log_{" + name[3:] + "}(" + inner + ")")
        else:
            out.append("\\" + _TRIG_NAMES.get(name, name) + "(" + inner + ")")
        i = close + 1


def code_to_latex(s: str) -> str:
    r"""Answers written as Python/NumPy code, as LaTeX: ``np.arcsin(10/13)`` -> ``\arcsin(10/13)``,
    ``sqrt(2)`` -> ``\sqrt{2}``, ``x**2`` -> ``x^(2)``; ``np.log`` is the natural log.
    Strings without a code hint (a module prefix, ``*``, a bare ``pi`` or a bare ``name(``) are
    returned as is."""
    if not _CODE_HINT.search(s):
        return s
    s = _MODULE_PREFIX.sub("", s)
    s = regex.sub(r"\*\*\s*(\w+(?:\.\d+)?)", r"^{\1}", s)
    s = regex.sub(r"\*\*\s*\(", r"^(", s)
    s = _convert_calls(s)
    s = _CODE_PI.sub(r"\\pi ", s)
    s = regex.sub(r"(?<!\*)\*(?!\*)", r" \\cdot ", s)
    return s


def normalise_literals(s: str) -> str:
    r"""Numeric literal forms: ``1\,000``/``1{,}000``/``1,000`` -> ``1000`` (a leading group),
    ``-1./3`` -> ``-1/3``, ``.5`` -> ``0.5``, ``1.2e-3``/``1.2 \cdot 10^-3``/``1.2*10^(-3)`` ->
    ``1.2\times10^{-3}``, and ``\%`` removed (``10\%`` and ``10`` compare equal, as before)."""
    s = THIN_SPACE_DIGITS.sub("", s)
    s = regex.sub(r"\\?%", "", s)
    s = _LEADING_THOUSANDS.sub(lambda m: m.group(1).replace(",", ""), s)
    s = _SCI_E.sub(lambda m: m.group(1) + r"\times10^{" + m.group(2).lstrip("+") + "}", s)
    s = _TIMES_TEN.sub(r"\\times10^", s)
    s = _POWER_PAREN.sub(r"10^{\1}", s)
    s = _POWER_NO_BRACE.sub(r"10^{\1}", s)
    s = _TRAILING_POINT.sub("", s)
    s = _BARE_POINT.sub("0.", s)
    return s


def unbrace_scripts(s: str) -> str:
    """One-character sub- and superscripts without braces: ``E_{1}`` -> ``E_1``, ``^{\\circ}`` ->
    ``^\\circ``; longer scripts keep their braces."""
    s = _CIRC_BRACED.sub(r"^\\circ", s)
    return _ONE_CHAR_SCRIPT.sub(r"\1\2", s)


def primes_as_marks(s: str) -> str:
    r"""Every way of writing a prime as the ASCII mark: ``x^{\prime}``, ``x^\prime``, ``x^{'}`` ->
    ``x'``; ``x^{\prime\prime}``, ``x^{\prime \prime}`` -> ``x''`` (``′``/``″`` are rewritten by
    :func:`~verl_focal.grading.unicode.normalise_unicode`)."""
    if "prime" not in s and "^" not in s:
        return s

    def marks(m: regex.Match) -> str:
        body = m.group(1) if m.group(1) is not None else m.group(2)
        return "'" * (body.count("\\prime") + body.count("'"))

    s = _PRIME_SCRIPT.sub(marks, s)
    return _BARE_PRIME.sub("'", s)


def normalise(s: str) -> str:
    """All the steps above, in order: Unicode, wrappers, code, literals, scripts, primes."""
    s = normalise_unicode(str(s))
    s = strip_wrappers(s)
    s = code_to_latex(s)
    s = normalise_literals(s)
    s = unbrace_scripts(s)
    s = primes_as_marks(s)
    return s.strip()


def canonical(s: str) -> str:
    """``s`` without spacing (``\\,``, ``~``, ``\\quad``, blanks): for exact-text comparison."""
    return _SPACING.sub("", s)


def gold_alternatives(ground_truth: Any) -> list[str]:
    """The accepted forms of a reference answer.

    A list, tuple or array (as some datasets store several accepted answers) gives one form per
    element; a string that is a Python/JSON list *of strings* (``"['1/2', '0.5']"``) likewise.
    Anything else is a single form -- ``"[1, 2]"`` (an interval or list answer) and ``"1 or 2"``
    (two solutions) stay whole, since splitting them would accept half an answer.
    """
    if isinstance(ground_truth, (list, tuple)) or type(ground_truth).__name__ == "ndarray":
        forms = [str(g) for g in list(ground_truth) if str(g).strip()]
        return forms or [""]
    text = str(ground_truth)
    stripped = text.strip()
    if stripped.startswith("[") and stripped.endswith("]") and ("'" in stripped or '"' in stripped):
        try:
            val = ast.literal_eval(stripped)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            val = None
        if isinstance(val, list) and val and all(isinstance(v, str) for v in val):
            return val
    return [text]
