"""Outcome scorer for verl: the thin entry that routes a response to its grader.

Plug it into verl 0.9.1 with::

    reward.custom_reward_function.path=pkg://verl_focal.reward
    reward.custom_reward_function.name=compute_score

Keyword arguments go under ``+reward.custom_reward_function.reward_kwargs.*`` (where verl 0.9.1's
``get_custom_reward_fn`` reads them); :func:`validate_reward_kwargs` checks them at start-up.

The reward is binary, as in F-GRPO (arXiv 2602.06717, Sec. 4 "reward: math-verify, 1 correct /
0 incorrect"): ``score == acc`` in {0.0, 1.0}.  Every call returns the same keys, so verl can stack
the reward extras: ``score``, ``acc``, ``pred`` (the extracted answer, ``""`` when none),
``verify_timeout`` (1.0 when the time bound cut the check short; the call then scores 0), and,
only when ``cue_set`` is given, ``cue_sig`` (:func:`verl_focal.partition.cues.response_signature`).

Where the work is done:

* maths and multiple choice: :mod:`verl_focal.grading.verify` (answer extraction in
  :mod:`verl_focal.grading.extract`, equivalence rules in :mod:`verl_focal.grading`, docs/eval.md);
* IFEval and SynLogic (``data_source`` ``[verl_focal/]ifeval``, ``[verl_focal/]synlogic[/<task>]``):
  :mod:`verl_focal.ood`.

Time bound: in the main thread the check runs under one alarm of ``timeout_s``
(:mod:`verl_focal.deadline`); in other threads (verl's reward loop) in a worker of one bounded,
killable process pool (:mod:`verl_focal.pool`), waited for at most ``hard_timeout_s`` (default
``timeout_s + 60``).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from verl_focal.grading import NumericPolicy
from verl_focal.grading.verify import check_under_deadline, silence_disabled_timeout_notice
from verl_focal.ood import ood_kind
from verl_focal.pool import KillablePool

# data_source values written by `verl-focal prep-data` (see verl_focal/data/).  The prefix keeps
# verl's built-in `default_compute_score` from silently claiming them: without our scorer
# configured, verl raises NotImplementedError for these names instead of grading with another rule.
DATA_SOURCE_PREFIX = "verl_focal/"
MULTIPLE_CHOICE_SOURCES = frozenset({"verl_focal/gpqa_diamond"})

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_HARD_GRACE_S = 60.0

#: the reward kwargs :func:`compute_score` reads, from ``reward.custom_reward_function.reward_kwargs.*``
REWARD_KWARGS = ("timeout_s", "hard_timeout_s", "require_boxed", "cue_set", "rel_tol", "sig_figs", "equivalence_rules")


def _pool_size() -> int:
    raw = os.environ.get("VERL_FOCAL_REWARD_WORKERS", "4")
    try:
        n = int(raw)
    except ValueError as e:
        raise ValueError(f"VERL_FOCAL_REWARD_WORKERS={raw!r} is not an integer; set e.g. 4") from e
    if n < 1:
        raise ValueError(f"VERL_FOCAL_REWARD_WORKERS={n} must be >= 1")
    return n


_POOL = KillablePool("verl_focal.reward", _pool_size, initializer=silence_disabled_timeout_notice)


def is_multiple_choice(data_source: str, extra_info: dict | None) -> bool:
    """True for the multiple-choice path: a known MC data_source (GPQA-Diamond) or
    ``extra_info["answer_type"] == "multiple_choice"``."""
    if data_source in MULTIPLE_CHOICE_SOURCES:
        return True
    return bool(extra_info) and isinstance(extra_info, dict) and extra_info.get("answer_type") == "multiple_choice"


def validate_reward_kwargs(kwargs: Any) -> None:
    """Check ``reward.custom_reward_function.reward_kwargs`` at start-up, before any response is scored.

    verl hands the kwargs to the scorer only inside the reward workers, so without this a typo
    (``rel_tl``) would be swallowed by ``**kwargs`` and a bad value would fail at step 1.
    Raises :class:`~verl_focal.config.errors.ConfigError` naming the key and the fix.
    """
    from verl_focal.config.errors import ConfigError, did_you_mean

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

    Routes by ``data_source``: IFEval/SynLogic to :func:`verl_focal.ood.runner.score_ood`;
    multiple choice (:func:`is_multiple_choice`) and maths to
    :func:`verl_focal.grading.verify.check_under_deadline`.  ``rel_tol`` and ``sig_figs`` set the
    numeric policy (:class:`verl_focal.grading.NumericPolicy`); ``equivalence_rules=False`` checks
    with math-verify alone; ``require_boxed`` refuses an answer without ``\boxed{}``.

    Returns ``{"score", "acc", "pred", "verify_timeout"}`` (+ ``"cue_sig"`` when ``cue_set`` is
    given).  Other keyword arguments that verl passes (e.g. ``reward_router_address``) are
    accepted and ignored.
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
    if ood is not None:
        from verl_focal.ood.runner import score_ood

        out = score_ood(ood, data_source, solution_str, ground_truth, timeout_s=float(timeout_s), hard_timeout_s=hard)
    else:
        policy = NumericPolicy(rel_tol=rel_tol, sig_figs=sig_figs) if equivalence_rules else None
        kind = "choice" if is_multiple_choice(data_source, extra_info) else "math"
        args = (kind, ground_truth, solution_str, bool(require_boxed), float(timeout_s), policy)
        if kind == "choice" or threading.current_thread() is threading.main_thread():
            acc, pred, timed_out = check_under_deadline(*args)
        else:
            result, failed = _POOL.run(check_under_deadline, args, hard)
            acc, pred, timed_out = (0.0, "", 1.0) if failed else result
        out = {"score": float(acc), "acc": float(acc), "pred": str(pred), "verify_timeout": float(timed_out)}
    if cue_set is not None:
        from verl_focal.partition.cues import response_signature
        from verl_focal.partition.signatures import SIG_KEY

        out[SIG_KEY] = response_signature(solution_str, cue_set, correct=out["acc"] > 0)
    return out


def warm_up(data_sources) -> None:
    """One-time imports of the scorers these data sources need (IFEval's nltk/langdetect take
    seconds), so that they do not count against a per-answer time limit; ``verl-focal eval
    score`` calls it once per worker."""
    from verl_focal.ood.runner import warm_up as _warm_ood

    for kind in sorted({ood_kind(s) for s in data_sources} - {None}):
        _warm_ood(kind)
