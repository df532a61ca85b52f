r"""The answer checks behind :func:`verl_focal.reward.compute_score`: maths and multiple choice.

Maths: the gold answer is parsed as ``\boxed{ground_truth}``; the prediction is the last
``\boxed{}``/``\fbox{}`` of the answer region (:mod:`verl_focal.grading.extract`), or, when
there is none and ``require_boxed`` is false, math-verify's own LaTeX/expression extraction over
the last :data:`FALLBACK_TAIL_CHARS` characters.  A boxed answer goes through
:func:`verl_focal.grading.equivalent` (math-verify plus our rules, docs/eval.md); with
``policy=None`` the check is math-verify alone (the baseline of ``bench/scorer_bench.py``).
Multiple choice: the letter from :func:`~verl_focal.grading.extract.extract_choice` must equal
the gold letter.

Time bound: math-verify's own timeouts use ``signal.alarm``; they are switched off here and one
deadline (:func:`verl_focal.deadline.call_with_deadline`) bounds the whole check instead, in the
main thread of whichever process runs it (the caller's, or a :class:`verl_focal.pool.KillablePool`
worker).  No verl import.
"""

from __future__ import annotations

from typing import Any

from verl_focal.deadline import call_with_deadline
from verl_focal.grading.equivalence import equivalent
from verl_focal.grading.extract import BOX_OPEN, answer_region, extract_choice, last_boxed, normalize_answer_latex
from verl_focal.grading.normalise import gold_alternatives
from verl_focal.grading.numeric import NumericPolicy

__all__ = ["FALLBACK_TAIL_CHARS", "check_under_deadline", "silence_disabled_timeout_notice", "verify_math"]

#: without a ``\boxed{}``, only this many trailing characters of the answer region are parsed
FALLBACK_TAIL_CHARS = 2000


def silence_disabled_timeout_notice() -> None:
    """math-verify warns once that its own timeouts are off; ours replace them (see module doc).
    Also pays the sympy import, so a pool worker runs it as its initializer."""
    import math_verify.grader
    import math_verify.parser

    for mod in (math_verify.grader, math_verify.parser):
        if hasattr(mod, "TIMEOUT_WARNING_SHOWN"):
            mod.TIMEOUT_WARNING_SHOWN = True


def verify_math(ground_truth: Any, solution_str: str, require_boxed: bool,
                policy: NumericPolicy | None = None) -> tuple[float, str]:
    r"""``(acc, pred)`` of a maths response, acc ∈ {0.0, 1.0}; no time bound of its own.

    A response whose last ``\boxed{`` is never closed has no answer (acc 0, pred ``""``), not
    even an earlier box's.

    >>> verify_math("1/2", r"so \boxed{0.5}", require_boxed=True, policy=NumericPolicy())
    (1.0, '0.5')
    """
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

    silence_disabled_timeout_notice()

    region = answer_region(solution_str)
    boxed = last_boxed(region)
    if boxed is None and BOX_OPEN.search(region):
        return 0.0, ""  # the last box is cut off: no answer, not even an earlier box's
    if policy is not None and boxed is not None:
        return (1.0 if equivalent(boxed, ground_truth, policy) else 0.0), boxed.strip()
    golds = []
    for form in gold_alternatives(ground_truth) if policy is not None else [str(ground_truth)]:
        gold_text = normalize_answer_latex(form)
        gold = parse("\\boxed{" + gold_text + "}", [LatexExtractionConfig()], parsing_timeout=None)
        if not gold:
            gold = parse(gold_text, [ExprExtractionConfig()], parsing_timeout=None)
        if gold:
            golds.append(gold)
    if boxed is not None:
        pred_source = "\\boxed{" + normalize_answer_latex(boxed) + "}"
        pred = parse(pred_source, [LatexExtractionConfig()], parsing_timeout=None)
        pred_str = boxed.strip()
    elif require_boxed:
        return 0.0, ""
    else:
        tail = normalize_answer_latex(region[-FALLBACK_TAIL_CHARS:])
        pred = parse(tail, [LatexExtractionConfig(), ExprExtractionConfig()], parsing_timeout=None)
        pred_str = str(pred[-1]) if pred else ""
    if not golds or not pred:
        return 0.0, pred_str
    ok = any(verify(gold, pred, timeout_seconds=None) for gold in golds)
    return (1.0 if ok else 0.0), pred_str


def choice_truth_problem(ground_truth: Any) -> str | None:
    """Why ``ground_truth`` cannot be a multiple-choice answer key (it must be one option letter A-J, bare or in
    parentheses), or None.  The start-up check of data files and the scorer share it.

    >>> choice_truth_problem("(C)") is None
    True
    >>> choice_truth_problem("Paris").split(";")[0]
    "a multiple-choice ground truth must be the option letter (A-J), got 'Paris'"
    """
    gold = str(ground_truth).strip().strip("()").upper()
    if len(gold) == 1 and "A" <= gold <= "J":
        return None
    return (f"a multiple-choice ground truth must be the option letter (A-J), got {str(ground_truth)[:80]!r}; "
            "make the set with `verl-focal prep-data eval`")


def check_under_deadline(kind: str, ground_truth: Any, solution_str: str, require_boxed: bool,
                         timeout_s: float, policy: NumericPolicy | None = None) -> tuple[float, str, float]:
    """``(acc, pred, timed_out)`` for ``kind`` ``"choice"`` or ``"math"``, the whole maths check
    under one deadline of ``timeout_s`` (a time-out scores 0).  Must run in its process's main
    thread; the multiple-choice check is a linear-time regex and needs no deadline.

    >>> check_under_deadline("choice", "(B)", r"\\boxed{B}", False, 1.0)
    (1.0, 'B', 0.0)
    """
    if kind == "choice":
        pred = extract_choice(solution_str)
        gold = str(ground_truth).strip().strip("()").upper()
        problem = choice_truth_problem(ground_truth)
        if problem:  # never a silent 0: the letter is what a response names
            raise ValueError(problem)
        return (1.0 if pred and pred == gold else 0.0), pred, 0.0
    out, timed_out = call_with_deadline(verify_math, timeout_s, ground_truth, solution_str, require_boxed, policy)
    if timed_out:
        return 0.0, "", 1.0
    acc, pred = out
    return acc, pred, 0.0
