"""Run an IFEval / SynLogic check under a time bound and return verl's reward dict.

Same contract as the math path of :func:`verl_focal.reward.compute_score`: a binary reward
``score == acc`` in {0, 1}, ``pred`` (a short string), ``verify_timeout`` (1.0 when the bound
cut the check short; the response then scores 0).

Time bound.  In the main thread the check runs under one ``setitimer`` alarm of ``timeout_s``.
In other threads (verl's reward loop) no alarm can be set: the IFEval checkers and the pure
SynLogic verifiers read bounded input (a capped answer text, capped literals) and so finish in
bounded time; the SynLogic tasks that call sympy (``USES_SYMPY``, via math-verify) go to a
one-worker :class:`verl_focal.pool.KillablePool`, where the alarm works, and the caller waits
at most ``hard_timeout_s`` before killing the worker.
"""

from __future__ import annotations

import threading
from typing import Any

from verl_focal.deadline import call_with_deadline
from verl_focal.pool import KillablePool


def _check(kind: str, data_source: str, solution_str: str, ground_truth: Any) -> tuple[float, str]:
    if kind == "ifeval":
        from verl_focal.ood import ifeval

        return ifeval.score(solution_str, ground_truth)
    from verl_focal.ood import synlogic

    return synlogic.score(solution_str, ground_truth, data_source)


def warm_up(kind: str, data_source: str | None = None, ground_truth: Any = None) -> None:
    """Pay the one-time imports (nltk, langdetect, if-verifiable: seconds; sympy for the SynLogic
    ``operation`` task) outside any per-answer time bound."""
    if kind == "ifeval":
        from verl_focal.ood import ifeval

        ifeval.instruction_registry()
        ifeval.english_sentence_tokenizer()
    elif kind == "synlogic":
        from verl_focal.ood import synlogic

        if ground_truth is None:  # all tasks
            for task in synlogic.TASK_MODULES:
                synlogic.verifier_module(task)
            return
        task, _, _ = synlogic.parse_ground_truth(ground_truth, data_source)
        synlogic.verifier_module(task)


def _under_alarm(kind: str, data_source: str, solution_str: str, ground_truth: Any,
                 timeout_s: float) -> tuple[float, str, float]:
    """(acc, pred, timed_out); must run in its process's main thread.  Imports happen before the
    alarm starts (:func:`warm_up`), so a cold process does not spend its bound on them."""
    warm_up(kind, data_source, ground_truth)

    out, timed_out = call_with_deadline(_check, timeout_s, kind, data_source, solution_str, ground_truth)
    if timed_out:
        return 0.0, "", 1.0
    acc, pred = out
    return acc, pred, 0.0


#: one worker: only the SynLogic tasks that call sympy need a process (module doc)
_POOL = KillablePool("verl_focal.ood", 1)


def _needs_process(kind: str, data_source: str, ground_truth: Any) -> bool:
    if kind != "synlogic":
        return False
    from verl_focal.ood import synlogic

    task, _, _ = synlogic.parse_ground_truth(ground_truth, data_source)
    return bool(getattr(synlogic.verifier_module(task), "USES_SYMPY", False))


def score_ood(kind: str, data_source: str, solution_str: str, ground_truth: Any, *,
              timeout_s: float, hard_timeout_s: float) -> dict:
    """``{"score", "acc", "pred", "verify_timeout"}`` for an IFEval (``kind="ifeval"``) or
    SynLogic (``"synlogic"``) response.  A malformed ground truth raises (it is a data
    preparation error, which ``verl-focal prep-data`` rules out)."""
    args = (kind, data_source, solution_str, ground_truth, float(timeout_s))
    if threading.current_thread() is threading.main_thread():
        acc, pred, timed_out = _under_alarm(*args)
    elif not _needs_process(kind, data_source, ground_truth):
        acc, pred = _check(kind, data_source, solution_str, ground_truth)
        timed_out = 0.0
    else:
        result, failed = _POOL.run(_under_alarm, args, hard_timeout_s)
        acc, pred, timed_out = (0.0, "", 1.0) if failed else result
    return {"score": float(acc), "acc": float(acc), "pred": str(pred), "verify_timeout": float(timed_out)}
