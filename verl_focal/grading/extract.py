r"""Where the answer is in a response: the answer region, the last ``\boxed{}``, a choice letter.

Pure text functions (no verl import), used by the maths and multiple-choice checks
(:mod:`verl_focal.grading.verify`), by the SynLogic verifiers and by data preparation.
"""

from __future__ import annotations

import regex

from verl_focal.grading.normalise import THIN_SPACE_DIGITS

__all__ = ["BOX_OPEN", "answer_region", "extract_choice", "last_boxed", "normalize_answer_latex"]

#: an opening ``\boxed{`` / ``\fbox{``
BOX_OPEN = regex.compile(r"\\(?:boxed|fbox)\s*\{")
_PERCENT = regex.compile(r"\\?%")
_MC_BOXED = regex.compile(r"^\s*\(?\s*([A-J])\s*\)?(?:[\s.:)]|$)")
_MC_TEXT_WRAP = regex.compile(r"\\(?:text|textbf|mathrm|mathbf)\s*\{([^{}]*)\}")
_MC_PHRASE = regex.compile(
    r"(?:answer|choice|option)\s*(?:is|:)?\s*[:\-]?\s*(?:\*\*|\$)?\s*\(?\s*([A-J])\s*\)?(?![A-Za-z])",
    flags=regex.IGNORECASE,
)


def answer_region(solution_str: str) -> str:
    """The part of a response that may hold the final answer.

    Reasoning models write ``<think> ... </think> answer``: only the text after the last
    ``</think>`` counts.  An opened but never closed ``<think>`` (a response cut at the length
    limit) has no answer region: ``""``.

    >>> answer_region("<think>maybe 3</think> so 4")
    ' so 4'
    >>> answer_region("<think>cut off")
    ''
    """
    if "</think>" in solution_str:
        return solution_str.rsplit("</think>", 1)[1]
    if "<think>" in solution_str:
        return ""
    return solution_str


def last_boxed(text: str) -> str | None:
    r"""Content of the last ``\boxed{...}`` or ``\fbox{...}`` in ``text``, braces balanced.

    Returns None when there is none or when the last one is never closed (a response cut at the
    length limit).  An earlier, closed box is *not* used then: otherwise a policy could learn to
    box an early guess and ramble on, and be rewarded for the guess when cut off.  A box nested
    in another (``\boxed{\boxed{3}}``) is the last opener and is read as usual.

    >>> last_boxed(r"\boxed{1} then \boxed{\frac{1}{2}}")
    '\\frac{1}{2}'
    >>> last_boxed(r"\boxed{1} then \boxed{2") is None
    True
    """
    starts = [m.end() for m in BOX_OPEN.finditer(text)]
    if not starts:
        return None
    start = starts[-1]
    depth = 1
    for i in range(start, len(text)):
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[start:i]
    return None  # the last box is never closed: no answer


def normalize_answer_latex(s: str) -> str:
    r"""Light normalisation applied to both gold and predicted answers before math-verify.

    * thin spaces inside digit groups (``1\,000``, ``1{,}000``, ``1 000``) are removed;
    * percent signs (``\%``, ``%``) are removed, so ``10\%`` and ``10`` compare equal.

    >>> normalize_answer_latex(r" 1\,000\% ")
    '1000'
    """
    s = THIN_SPACE_DIGITS.sub("", s)
    s = _PERCENT.sub("", s)
    return s.strip()


def extract_choice(text: str) -> str:
    r"""The multiple-choice letter (A-J) a response commits to, or ``""``.

    Priority: the last ``\boxed{}`` whose content starts with a lone letter (``\boxed{B}``,
    ``\boxed{(B)}``, ``\boxed{\text{B}}``, ``\boxed{B. 42}``); else the last "answer is (X)" /
    "Answer: X" / "option X" phrase.

    >>> extract_choice(r"The answer is (C). Final: \boxed{\text{B}}")
    'B'
    """
    region = answer_region(text)
    boxed = last_boxed(region)
    if boxed is not None:
        inner = _MC_TEXT_WRAP.sub(lambda m: m.group(1), boxed).replace("$", "")
        m = _MC_BOXED.match(inner)
        if m:
            return m.group(1).upper()
    phrases = list(_MC_PHRASE.finditer(region))
    if phrases:
        return phrases[-1].group(1).upper()
    return ""
