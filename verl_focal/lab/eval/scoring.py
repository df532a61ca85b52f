"""Score generation records in parallel, with a time limit per answer.

The scorer is any function with verl's reward signature
``compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw)``
returning a dict with at least ``score`` and ``acc`` (or a number); by default the
package scorer ``verl_focal.reward:compute_score``.  It is named by an import path
(``module:function``) so worker processes can load it.

Each answer runs in a worker process's main thread under a ``SIGALRM`` timer of
``timeout_s`` (+1 s grace; the package scorer also gets ``timeout_s`` itself).  An
answer that runs out of time, or whose scorer raises, scores 0 and is counted
(``status`` ``timeout`` / ``error``); one bad answer never stops the run.
"""

from __future__ import annotations

import concurrent.futures as cf
import importlib
import inspect
import logging
import multiprocessing
import signal
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from verl_focal.config.errors import InputError

DEFAULT_SCORER = "verl_focal.reward:compute_score"

_SCORER: Callable | None = None
_PASS_TIMEOUT = False
_TIMEOUT_S = 10.0


class _AnswerTimeout(BaseException):
    """Raised by our alarm handler; a BaseException so broad ``except Exception`` blocks
    inside scorers cannot swallow it."""


def load_scorer(path: str) -> Callable:
    """Import ``module:function`` (or ``module.function``) and check it is callable."""
    mod, sep, name = path.partition(":")
    if not sep:
        mod, _, name = path.rpartition(".")
    if not mod or not name:
        raise InputError(f"--scorer {path!r}: expected 'module:function', e.g. {DEFAULT_SCORER}")
    try:
        fn = getattr(importlib.import_module(mod), name)
    except (ImportError, AttributeError) as e:
        raise InputError(
            f"--scorer {path!r}: cannot import ({e}); expected 'module:function', e.g. {DEFAULT_SCORER}"
        ) from e
    if not callable(fn):
        raise InputError(f"--scorer {path!r} is not callable")
    return fn


def _init_worker(scorer_path: str, timeout_s: float, data_sources: tuple = ()) -> None:
    global _SCORER, _PASS_TIMEOUT, _TIMEOUT_S
    _SCORER = load_scorer(scorer_path)
    warm = getattr(inspect.getmodule(_SCORER), "warm_up", None)
    if callable(warm):  # one-time imports, outside the per-answer time limit
        warm(data_sources)
    try:
        params = inspect.signature(_SCORER).parameters
        _PASS_TIMEOUT = "timeout_s" in params
    except (TypeError, ValueError):
        _PASS_TIMEOUT = False
    _TIMEOUT_S = float(timeout_s)
    if _PASS_TIMEOUT:
        # A scorer that takes timeout_s bounds its own time (the package scorer does, with an
        # alarm); math-verify would otherwise warn once per worker that its own timeouts are off.
        logging.getLogger("math_verify").setLevel(logging.ERROR)


def _on_alarm(signum, frame):  # pragma: no cover - exercised through the timeout test
    raise _AnswerTimeout()


def _score_one(item: tuple) -> tuple[float, float, str, str]:
    """(score, acc, pred, status) for one (data_source, response, ground_truth, extra_info)."""
    data_source, response, gt, extra = item
    kw = {"timeout_s": _TIMEOUT_S} if _PASS_TIMEOUT else {}
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, _TIMEOUT_S + (1.0 if _PASS_TIMEOUT else 0.0))
    try:
        res = _SCORER(data_source, response if response is not None else "", gt, extra, **kw)
    except _AnswerTimeout:
        return 0.0, 0.0, "", "timeout"
    except Exception as e:  # a scorer bug on one answer must not stop the run
        return 0.0, 0.0, "", f"error: {type(e).__name__}: {str(e)[:200]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    if isinstance(res, dict):
        score = float(res.get("score", 0.0))
        acc = float(res.get("acc", 1.0 if score > 0 else 0.0))
        status = "timeout" if float(res.get("verify_timeout", 0.0) or 0.0) > 0 else "ok"
        return score, acc, str(res.get("pred", "")), status
    score = float(res)
    return score, float(score > 0), "", "ok"


def score_records(
    records: Sequence[dict],
    scorer: str = DEFAULT_SCORER,
    workers: int = 0,
    timeout_s: float = 10.0,
    chunksize: int = 16,
    progress: bool = False,
) -> Counter:
    """Score ``records`` in place (adds ``score``, ``acc``, ``pred``, ``status``).

    ``workers = 0`` scores in this process (still under the alarm); ``> 0`` uses a
    process pool of that size.  Returns a Counter of statuses (``ok``, ``timeout``,
    ``error``).
    """
    if timeout_s <= 0:
        raise InputError(f"--timeout-s must be > 0 seconds, got {timeout_s}")
    load_scorer(scorer)  # fail early, in the parent, with a clear message
    items = [(r.get("data_source"), r.get("response"), r.get("ground_truth"), r.get("extra_info")) for r in records]
    from tqdm import tqdm

    sources = tuple(sorted({str(it[0]) for it in items}))

    if workers and workers > 0:
        ctx = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
        with cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                                    initargs=(scorer, timeout_s, sources)) as pool:
            results = list(tqdm(pool.map(_score_one, items, chunksize=max(1, chunksize)), total=len(items),
                                disable=not progress, desc="score", unit="answer"))
    else:
        _init_worker(scorer, timeout_s, sources)
        results = [_score_one(it) for it in tqdm(items, disable=not progress, desc="score", unit="answer")]
    statuses: Counter = Counter()
    for rec, (score, acc, pred, status) in zip(records, results):
        rec.update(score=score, acc=acc, pred=pred, status=status)
        statuses["error" if status.startswith("error") else status] += 1
    return statuses


def unscorable_sources(records: Sequence[dict]) -> list[tuple[str, int, str]]:
    """``(data_source, answers, first cause)`` of each data source none of whose answers could be scored (every
    one ``error``): its numbers would be 0 with no cause shown (a ground truth of the wrong form, a missing
    dependency of the scorer)."""
    by_source: dict[str, list[str]] = {}
    for rec in records:
        by_source.setdefault(str(rec.get("data_source")), []).append(str(rec.get("status", "")))
    return [(src, len(st), st[0]) for src, st in sorted(by_source.items())
            if st and all(x.startswith("error") for x in st)]


def failure_pairs(records: Sequence[dict], run: str) -> list[dict[str, Any]]:
    """The rejected answers worth a human look, for auditing a grader (``eval score --failures``).

    A record is listed when it was scored ``ok`` (not a timeout or error) with ``acc == 0``, its
    extracted answer ``pred`` is not empty, and the answer is *not obviously wrong*.  Obviously wrong
    means: a multiple-choice letter (the letter either matches or not), or a plain number whose
    value differs from every accepted reference number, in compatible units
    (:func:`verl_focal.grading.obviously_wrong`).  What remains -- symbolic answers, unit or
    format mismatches, numbers against symbolic references -- is where grading rules can err.
    Each entry: ``run``, ``uid``, ``sample``, ``data_source``, ``pred``, ``ground_truth``.
    """
    from verl_focal.grading import obviously_wrong
    from verl_focal.reward import is_multiple_choice

    out = []
    for rec in records:
        pred = str(rec.get("pred") or "")
        if rec.get("status") != "ok" or float(rec.get("acc") or 0.0) > 0 or not pred.strip():
            continue
        gt = rec.get("ground_truth")
        if is_multiple_choice(str(rec.get("data_source")), rec.get("extra_info")) or obviously_wrong(pred, gt):
            continue
        out.append({"run": run, "uid": rec.get("uid"), "sample": rec.get("sample"),
                    "data_source": rec.get("data_source"), "pred": pred,
                    "ground_truth": gt if isinstance(gt, (str, int, float, list)) or gt is None else str(gt)})
    return out
