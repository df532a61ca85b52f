"""verl_focal.grading.unicode: Unicode forms are read as their ASCII/LaTeX, and never turn a wrong
answer right (checked on every negative of the equivalence corpus)."""

from __future__ import annotations

import re

import pytest
from equivalence_corpus import CORPUS

from verl_focal.grading import equivalent
from verl_focal.grading.normalise import normalise
from verl_focal.grading.unicode import normalise_unicode

ITEMS = [it for items in CORPUS.values() for it in items]
NEGATIVES = [it for it in ITEMS if not it.ok]


def fullwidth(s: str) -> str:
    """Every printable ASCII character as its fullwidth form (space as the ideographic space)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else ("\u3000" if c == " " else c) for c in s)


_TO_UNICODE = [
    (r"\sqrt{2}", "√2"), (r"\sqrt{3}", "√3"), (r"\frac{1}{2}", "½"), (r"\frac12", "½"), (r"\frac{1}{3}", "⅓"),
    (r"\frac{3}{4}", "¾"), (r"\times", "×"), (r"\cdot", "·"), (r"\pi", "π"), (r"\theta", "θ"), (r"\leq", "≤"),
    (r"\le", "≤"), (r"\geq", "≥"), (r"\infty", "∞"), ("^{2}", "²"), ("^2", "²"), ("^{3}", "³"), ("^{-1}", "⁻¹"),
    ("-", "−"), ("^\\circ", "°"), (r"^{\prime}", "′"), (r"\mu", "µ"),
]


def unicode_forms(s: str) -> str:
    """LaTeX spellings replaced by the Unicode characters models write for them."""
    for latex, uni in _TO_UNICODE:
        tail = r"(?![A-Za-z])" if latex[-1].isalpha() else ""
        s = re.sub(re.escape(latex) + tail, lambda _m, u=uni: u, s)
    return s


def test_ascii_is_left_alone():
    for it in ITEMS:
        for s in (it.pred, it.ref):
            if isinstance(s, str) and s.isascii():
                assert normalise_unicode(s) == s


@pytest.mark.parametrize("text", sorted({s for it in ITEMS for s in (it.pred, it.ref) if isinstance(s, str)}))
def test_fullwidth_round_trip(text):
    assert normalise(fullwidth(text)) == normalise(text)


def test_rewrites():
    cases = {"４２": "42", "－1": "-1", "3，4": "3,4", "√2": r"\sqrt{2}", "½": r"\frac{1}{2}", "3½": r"\frac{7}{2}",
             "-2¼": r"-\frac{9}{4}", "x²": "x^{2}", "10⁻³": "10^{-3}", "x₁": "x_{1}", "2×3": r"2\times3",
             "2·3": r"2\cdot3", "√(x+1)": r"\sqrt{x+1}", "∛27": r"\sqrt[3]{27}", "πr²": r"\pi r^{2}", "℃": "°C",
             "30′": "30'", "0.003″": "0.003''", "−5": "-5", "x ≤ 3": r"x \leq 3", "5 µm": r"5 \mu m"}
    for src, want in cases.items():
        assert normalise_unicode(src) == want, src


def test_unicode_never_turns_a_wrong_answer_right():
    """Each corpus negative, with Unicode spellings on both sides and on either side, stays wrong."""
    changed = 0
    for it in NEGATIVES:
        if not isinstance(it.ref, str):
            continue
        up, ug = unicode_forms(it.pred), unicode_forms(it.ref)
        changed += (up, ug) != (it.pred, it.ref)
        for p, g in ((up, ug), (up, it.ref), (it.pred, ug), (fullwidth(it.pred), fullwidth(it.ref))):
            assert not equivalent(p, g), (it, p, g)
    assert changed >= 40  # the rewrite reaches a good share of the negatives


def test_unicode_spelling_of_a_positive_still_matches():
    changed, kept = 0, 0
    for it in ITEMS:
        if it.ok and isinstance(it.ref, str) and unicode_forms(it.pred) != it.pred:
            changed += 1
            kept += equivalent(unicode_forms(it.pred), it.ref)
    assert changed >= 40 and kept == changed
