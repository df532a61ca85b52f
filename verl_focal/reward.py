"""Outcome scorer for verl: math answers via math-verify, multiple-choice letters for GPQA.

Plug it into verl 0.9.1 with::

    reward.custom_reward_function.path=pkg://verl_focal.reward
    reward.custom_reward_function.name=compute_score

Keyword arguments for the scorer go under ``+reward.custom_reward_function.reward_kwargs.*``
(that is where verl 0.9.1's ``get_custom_reward_fn`` reads them; ``reward.reward_kwargs`` is only
read by the ``dapo`` reward manager for its overlong shaping).

The reward is binary, as in F-GRPO (arXiv 2602.06717, Sec. 4 "reward: math-verify, 1 correct /
0 incorrect"): ``score == acc`` in {0.0, 1.0}.  Every call returns the same keys, so verl can stack
the reward extras: ``score``, ``acc``, ``pred`` (the extracted answer, ``""`` when none),
``verify_timeout`` (1.0 when the time bound cut the check short; the call then scores 0), and,
only when ``cue_set`` is given, ``cue_sig`` (the response's strategy-cue signature).

Answer equivalence.  math-verify plus the rules of :mod:`verl_focal.grading` (scientific notation,
units and degree marks, numeric literal forms, brace variants, implicit products, equations,
code-like answers, formatting wrappers, lists of accepted reference forms).  Numeric policy: exact
numbers (integers, fractions) must be equal, so an integer answer ± 1 never passes; when either
side is a decimal, a relative tolerance ``rel_tol`` (reward kwarg, default 1e-4, as in the
Qwen2.5-Math / DeepSeek-Math ``math_equal`` graders) applies, and ``sig_figs=True`` also accepts
rounding to the reference's significant figures.  Units: dropped when only one side carries one;
when both do they must be the same unit (``5 cm`` against ``5 m`` is wrong).  Reward kwarg
``equivalence_rules=False`` gives the math-verify-only check of earlier versions (for comparison).

Time bound.  math-verify bounds its own work with ``signal.alarm``, which only works in the main
thread, and verl's reward loop calls the scorer from an executor thread.  So:

* in the main thread the whole check runs under one ``setitimer`` alarm of ``timeout_s``;
* in any other thread it runs in a small spawn-context process pool, where the same alarm works,
  and the caller additionally waits at most ``hard_timeout_s`` (default ``timeout_s + 60``); a
  worker stuck past
  that (e.g. in C code that never returns to the interpreter) is killed and the pool rebuilt.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import multiprocessing
import os
import threading
from typing import Any

import regex

from verl_focal.deadline import call_with_deadline
from verl_focal.grading import NumericPolicy, equivalent, gold_alternatives
from verl_focal.ood import ood_kind

logger = logging.getLogger(__name__)

# data_source values written by `verl-focal prep-data` (see verl_focal/data/).  The prefix keeps
# verl's built-in `default_compute_score` from silently claiming them: without our scorer
# configured, verl raises NotImplementedError for these names instead of grading with another rule.
DATA_SOURCE_PREFIX = "verl_focal/"
MULTIPLE_CHOICE_SOURCES = frozenset({"verl_focal/gpqa_diamond"})

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_HARD_GRACE_S = 60.0
# The fallback (no \boxed{} in the answer) parses only this many trailing characters of the answer.
FALLBACK_TAIL_CHARS = 2000

_BOX_OPEN = regex.compile(r"\\(?:boxed|fbox)\s*\{")
_THIN_SPACE_DIGITS = regex.compile(r"(?<=\d)(?:\\[,;:! ]|\{,\}|\s)(?=\d{3}(?!\d))")
_PERCENT = regex.compile(r"\\?%")
_MC_LETTER = "ABCDEFGHIJ"
_MC_BOXED = regex.compile(r"^\s*\(?\s*([A-J])\s*\)?(?:[\s.:)]|$)")
_MC_TEXT_WRAP = regex.compile(r"\\(?:text|textbf|mathrm|mathbf)\s*\{([^{}]*)\}")
_MC_PHRASE = regex.compile(
    r"(?:answer|choice|option)\s*(?:is|:)?\s*[:\-]?\s*(?:\*\*|\$)?\s*\(?\s*([A-J])\s*\)?(?![A-Za-z])",
    flags=regex.IGNORECASE,
)


# ----------------------------------------------------------------------------------------------
# text helpers (pure)
# ----------------------------------------------------------------------------------------------
def answer_region(solution_str: str) -> str:
    """The part of a response that may hold the final answer.

    Reasoning models write ``<think> ... </think> answer``: only the text after the last
    ``</think>`` counts.  An opened but never closed ``<think>`` (a response cut at the length
    limit) has no answer region: ``""``.
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
    """
    starts = [m.end() for m in _BOX_OPEN.finditer(text)]
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
    """
    s = _THIN_SPACE_DIGITS.sub("", s)
    s = _PERCENT.sub("", s)
    return s.strip()


def extract_choice(text: str) -> str:
    r"""The multiple-choice letter (A-J) a response commits to, or ``""``.

    Priority: the last ``\boxed{}`` whose content starts with a lone letter (``\boxed{B}``,
    ``\boxed{(B)}``, ``\boxed{\text{B}}``, ``\boxed{B. 42}``); else the last "answer is (X)" /
    "Answer: X" / "option X" phrase.
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


# ----------------------------------------------------------------------------------------------
# verification (runs under a deadline)
# ----------------------------------------------------------------------------------------------
def _silence_disabled_timeout_notice() -> None:
    """math-verify warns once that its own timeouts are off; ours replace them (see module doc)."""
    import math_verify.grader
    import math_verify.parser

    for mod in (math_verify.grader, math_verify.parser):
        if hasattr(mod, "TIMEOUT_WARNING_SHOWN"):
            mod.TIMEOUT_WARNING_SHOWN = True


def _verify_math(ground_truth: Any, solution_str: str, require_boxed: bool,
                 policy: NumericPolicy | None = None) -> tuple[float, str]:
    """(acc, pred); no time bound of its own (the caller sets one).

    ``policy`` None is the math-verify-only check of earlier versions (the baseline of
    ``bench/scorer_bench.py``); otherwise a boxed answer goes through
    :func:`verl_focal.grading.equivalent` with that numeric policy.
    """
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

    _silence_disabled_timeout_notice()

    region = answer_region(solution_str)
    boxed = last_boxed(region)
    if boxed is None and _BOX_OPEN.search(region):
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


def _score_under_alarm(kind: str, ground_truth: Any, solution_str: str, require_boxed: bool,
                       timeout_s: float, policy: NumericPolicy | None = None) -> tuple[float, str, float]:
    """(acc, pred, timed_out) with the whole check under one ``setitimer`` alarm.

    Must run in the main thread of its process.
    """
    if kind == "choice":  # regex-only, linear time: no alarm needed
        pred = extract_choice(solution_str)
        gold = str(ground_truth).strip().strip("()").upper()
        return (1.0 if pred and pred == gold else 0.0), pred, 0.0

    out, timed_out = call_with_deadline(_verify_math, timeout_s, ground_truth, solution_str, require_boxed, policy)
    if timed_out:
        return 0.0, "", 1.0
    acc, pred = out
    return acc, pred, 0.0


def _pool_worker_init() -> None:
    _silence_disabled_timeout_notice()  # also pays the sympy import once per worker


_pool: cf.ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()


def _pool_size() -> int:
    raw = os.environ.get("VERL_FOCAL_REWARD_WORKERS", "4")
    try:
        n = int(raw)
    except ValueError as e:
        raise ValueError(f"VERL_FOCAL_REWARD_WORKERS={raw!r} is not an integer; set e.g. 4") from e
    if n < 1:
        raise ValueError(f"VERL_FOCAL_REWARD_WORKERS={n} must be >= 1")
    return n


def _get_pool() -> cf.ProcessPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = cf.ProcessPoolExecutor(
                max_workers=_pool_size(),
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_pool_worker_init,
            )
        return _pool


def _discard_pool(pool: cf.ProcessPoolExecutor) -> None:
    """Kill a pool's workers (one of them is stuck) so the next call builds a fresh pool."""
    global _pool
    with _pool_lock:
        if _pool is pool:
            _pool = None
    for proc in list(getattr(pool, "_processes", {}).values()):  # private, but the only handle
        try:
            proc.kill()
        except Exception:  # already gone
            pass
    pool.shutdown(wait=False, cancel_futures=True)


def _score_in_pool(args: tuple, hard_timeout_s: float) -> tuple[float, str, float]:
    for attempt in (0, 1):
        pool = _get_pool()
        try:
            fut = pool.submit(_score_under_alarm, *args)
        except (cf.BrokenExecutor, RuntimeError):
            _discard_pool(pool)
            continue
        try:
            return fut.result(timeout=hard_timeout_s)
        except cf.TimeoutError:
            logger.warning("verl_focal.reward: a verifier worker exceeded %.1fs; restarting the pool",
                           hard_timeout_s)
            _discard_pool(pool)
            return 0.0, "", 1.0
        except cf.BrokenExecutor:
            _discard_pool(pool)
            if attempt == 1:
                break
    logger.warning("verl_focal.reward: verifier pool broke twice; scoring this response 0")
    return 0.0, "", 1.0


# ----------------------------------------------------------------------------------------------
# public entry point
# ----------------------------------------------------------------------------------------------
def answer_kind(data_source: str, extra_info: dict | None) -> str:
    """Which grading path a row takes: ``"choice"`` (:func:`is_multiple_choice`) or ``"math"``.

    Add a path by returning a new kind here and handling it in :func:`_score_under_alarm`."""
    if is_multiple_choice(data_source, extra_info):
        return "choice"
    return "math"


def is_multiple_choice(data_source: str, extra_info: dict | None) -> bool:
    """True for the multiple-choice path: a known MC data_source (GPQA-Diamond) or
    ``extra_info["answer_type"] == "multiple_choice"``."""
    if data_source in MULTIPLE_CHOICE_SOURCES:
        return True
    return bool(extra_info) and isinstance(extra_info, dict) and extra_info.get("answer_type") == "multiple_choice"


#: the reward kwargs :func:`compute_score` reads, from ``reward.custom_reward_function.reward_kwargs.*``
REWARD_KWARGS = ("timeout_s", "hard_timeout_s", "require_boxed", "cue_set", "rel_tol", "sig_figs", "equivalence_rules")


def validate_reward_kwargs(kwargs: Any) -> None:
    """Check ``reward.custom_reward_function.reward_kwargs`` at start-up, before any response is scored.

    verl hands the kwargs to the scorer only inside the reward workers, so without this a typo
    (``rel_tl``) would be swallowed by ``**kwargs`` and a bad value would fail at step 1.
    Raises :class:`~verl_focal.config.errors.ConfigError` naming the key and the fix.
    """
    from verl_focal.config.errors import ConfigError, did_you_mean
    from verl_focal.grading import NumericPolicy

    key = "reward.custom_reward_function.reward_kwargs"
    kw = dict(kwargs or {})
    for name in kw:
        if name not in REWARD_KWARGS:
            raise ConfigError(
                f"{key}.{name} is not read by verl_focal.reward.compute_score{did_you_mean(name, REWARD_KWARGS)}; "
                f"known kwargs: {list(REWARD_KWARGS)}"
            )
    timeout = kw.get("timeout_s", DEFAULT_TIMEOUT_S)
    if timeout is None or not isinstance(timeout, (int, float)) or float(timeout) <= 0:
        raise ConfigError(f"{key}.timeout_s={timeout!r} must be > 0 (seconds); the default is {DEFAULT_TIMEOUT_S}")
    hard = kw.get("hard_timeout_s")
    if hard is not None and (not isinstance(hard, (int, float)) or float(hard) <= 0):
        raise ConfigError(f"{key}.hard_timeout_s={hard!r} must be > 0 (seconds) or null (timeout_s + a grace)")
    try:
        NumericPolicy(rel_tol=kw.get("rel_tol", 1e-4), sig_figs=kw.get("sig_figs", False))
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{key}: {e}") from None
    if kw.get("cue_set") is not None:
        from verl_focal.partition.cues import signature

        try:
            signature("", str(kw["cue_set"]))
        except (LookupError, ValueError, OSError) as e:
            raise ConfigError(f"{key}.cue_set={kw['cue_set']!r}: {e}") from None


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict | None = None,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    hard_timeout_s: float | None = None,
    require_boxed: bool = False,
    cue_set: str | None = None,
    rel_tol: float = 1e-4,
    sig_figs: bool = False,
    equivalence_rules: bool = True,
    **kwargs: Any,
) -> dict:
    r"""Binary outcome reward R ∈ {0, 1} (F-GRPO Sec. 4: math-verify, 1 correct / 0 incorrect).

    Math path: the gold answer is parsed as ``\boxed{ground_truth}``; the prediction is the last
    ``\boxed{}``/``\fbox{}`` of the answer region (text after ``</think>``), or, when there is
    none and ``require_boxed`` is false, math-verify's own LaTeX/expression extraction over the
    last 2,000 characters; both go through :func:`normalize_answer_latex`; equality is
    math-verify's ``verify`` extended by the rules of :mod:`verl_focal.grading` (a boxed answer;
    the reference may be a list of accepted forms).  ``rel_tol`` and ``sig_figs`` set the numeric
    policy (:class:`verl_focal.grading.NumericPolicy`); ``equivalence_rules=False`` switches the
    rules off.  A response whose last ``\boxed{`` is never closed scores 0.  Multiple-choice path
    (:func:`is_multiple_choice`): the letter from
    :func:`extract_choice` must equal the gold letter.

    Returns ``{"score", "acc", "pred", "verify_timeout"}`` (+ ``"cue_sig"`` when ``cue_set`` is
    given: ``verl_focal.partition.cues.signature(solution_str, cue_set)`` for a correct maths answer;
    a wrong one gets ``"<version>:!wrong"``, since credit redistribution partitions only the correct
    rollouts of a group, and extraction would cost as much as the check itself).  Other keyword
    arguments that verl passes (e.g. ``reward_router_address``) are accepted and ignored.
    """
    if timeout_s is None or float(timeout_s) <= 0:
        raise ValueError(f"reward kwarg timeout_s={timeout_s!r} must be > 0 (seconds); the default is "
                         f"{DEFAULT_TIMEOUT_S}")
    hard = float(timeout_s) + DEFAULT_HARD_GRACE_S if hard_timeout_s is None else float(hard_timeout_s)
    if hard <= 0:
        raise ValueError(f"reward kwarg hard_timeout_s={hard_timeout_s!r} must be > 0 (seconds) or null")
    if not isinstance(solution_str, str):
        raise TypeError(f"solution_str must be str, got {type(solution_str).__name__}")
    ood = ood_kind(data_source)
    if ood is not None:  # IFEval / SynLogic: verl_focal/ood/ (same keys, same time bound)
        from verl_focal.ood.runner import score_ood

        out = score_ood(ood, data_source, solution_str, ground_truth, timeout_s=float(timeout_s), hard_timeout_s=hard)
        if cue_set is not None:
            out["cue_sig"] = _cue_signature(solution_str, cue_set)
        return out
    policy = NumericPolicy(rel_tol=rel_tol, sig_figs=sig_figs) if equivalence_rules else None
    kind = answer_kind(data_source, extra_info)
    args = (kind, ground_truth, solution_str, bool(require_boxed), float(timeout_s), policy)
    if kind == "choice" or threading.current_thread() is threading.main_thread():
        acc, pred, timed_out = _score_under_alarm(*args)
    else:
        acc, pred, timed_out = _score_in_pool(args, hard)
    out = {"score": float(acc), "acc": float(acc), "pred": str(pred), "verify_timeout": float(timed_out)}
    if cue_set is not None:  # only correct rollouts are ever partitioned (docs/methods.md §5-§6)
        out["cue_sig"] = _cue_signature(solution_str, cue_set) if acc > 0 else _not_extracted(cue_set)
    return out


def warm_up(data_sources) -> None:
    """One-time imports of the scorers these data sources need (IFEval's nltk/langdetect take
    seconds), so that they do not count against a per-answer time limit; ``verl-focal eval
    score`` calls it once per worker."""
    from verl_focal.ood.runner import warm_up as _warm_ood

    for kind in sorted({ood_kind(s) for s in data_sources} - {None}):
        _warm_ood(kind)


_CUE_VERSION: dict[str, str] = {}  # cue_set -> catalogue version, once validated in this process
_cue_lock = threading.Lock()


def _not_extracted(cue_set: str) -> str:
    """The signature of a response that was not read (a wrong answer): the failure form
    ``"<version>:!wrong"``, which a partitioner would treat as residual, never as a strategy."""
    if cue_set not in _CUE_VERSION:
        _cue_signature("", cue_set)  # validates cue_set and records its version
    return f"{_CUE_VERSION[cue_set]}:!wrong"


def _cue_signature(solution_str: str, cue_set: str) -> str:
    """``verl_focal.partition.cues.signature(solution_str, cue_set)``.

    The first call per process checks ``cue_set`` (an unknown catalogue is a configuration error
    and raises).  Later, a failure on one response is recoverable: the signature becomes
    ``"<version>:!error"`` (the cue module's failure form, clustered as residual and counted by the
    estimator) and a warning is logged.
    """
    from verl_focal.partition.cues import signature
    if cue_set not in _CUE_VERSION:
        with _cue_lock:
            if cue_set not in _CUE_VERSION:
                _CUE_VERSION[cue_set] = str(signature("", cue_set)).split(":", 1)[0]
    try:
        return str(signature(solution_str, cue_set))
    except Exception as e:  # noqa: BLE001 - one bad trace must not kill a training step
        logger.warning("verl_focal.reward: cue signature failed (%s: %s); marking it as an error",
                       type(e).__name__, e)
        return f"{_CUE_VERSION[cue_set]}:!error"
