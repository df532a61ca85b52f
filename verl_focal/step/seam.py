"""One training step's advantage work for one of our estimators: the one seam every trainer family calls.

The v1 trainer hook, the separated trainers' hook, the legacy trainer's hook around verl's
``compute_advantage`` and the demo's RL loop each keep only their row-reading adapter,
``build(step) -> AdvantageContext``, and call:

1. :func:`begin` (optional, as early as the rows exist: before verl's old-log-prob pass): in a
   :class:`BackgroundPrefetch` thread, parse the ``algorithm`` config **once** (:class:`AdvantageStep`),
   ``build`` the context and run the estimator's ``prefetch`` (the judge's requests, the strategy-cue
   partition); the pending prefetch lives in one attribute of the caller's object (:data:`PENDING`);
2. :func:`finish` (the advantage step): join it for the same rows, or ``build`` the context now; run
   ``prepare`` and the caller's advantage call inside
   :func:`~verl_focal.estimators.context.use_context` (the one channel to the hook around verl's
   ``compute_advantage``), timing both; merge the step's metrics into the caller's.

A prefetch never stops a step: a failure to start it, or inside it, is logged and counted as
``verl_focal/prefetch_failed`` (in :func:`finish`, once), and the advantage step does the work.  Other
rows at the join (a batch filtered in between) drop it silently.  The settings travel in the context,
so neither ``prepare`` nor the estimator parses the config again.  No verl import.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import numpy as np

from verl_focal.config.schema import AlgorithmSettings, parse_settings
from verl_focal.estimators.context import AdvantageContext, text_metrics, use_context
from verl_focal.estimators.old_log_probs import OLD_LOG_PROB_SUM, OLD_LOG_PROBS
from verl_focal.estimators.spec import EstimatorSpec

__all__ = ["PENDING", "AdvantageStep", "BackgroundPrefetch", "begin", "finish", "input_metrics"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: the attribute of the caller's object (the trainer) that holds the prefetch :func:`begin` started for its batch
PENDING = "_verl_focal_prefetch"


class AdvantageStep:
    """The advantage work of one step for estimator ``spec`` (see the module docstring).

    Args:
        spec: the estimator's :class:`~verl_focal.estimators.spec.EstimatorSpec`.
        algorithm_config: verl's ``algorithm`` config (OmegaConf node, dict or ``AlgoConfig``), or
            already parsed :class:`~verl_focal.config.schema.AlgorithmSettings`.
    """

    def __init__(self, spec: EstimatorSpec, algorithm_config: Any) -> None:
        self.spec = spec
        self.settings: AlgorithmSettings = parse_settings(algorithm_config)
        #: the per-row fields the context must carry for this config
        self.needs: frozenset[str] = spec.needs_for(self.settings)

    def attach(self, ctx: AdvantageContext) -> AdvantageContext:
        """Hand the parsed settings to ``ctx`` (for ``prepare`` and the estimator)."""
        ctx.settings = self.settings
        return ctx

    def prefetch(self, ctx: AdvantageContext) -> None:
        """Start the estimator's slow group-level work early (no-op without a ``prefetch``)."""
        self.attach(ctx)
        if self.spec.prefetch is not None:
            self.spec.prefetch(ctx, self.settings)

    def run(self, ctx: AdvantageContext, advantage_call: Callable[[], T]) -> T:
        """``prepare`` (timed as ``verl_focal/prepare_s``), then ``advantage_call()`` inside
        ``use_context(ctx)`` (timed as ``verl_focal/advantage_s``); returns its result.
        :func:`input_metrics` then records which per-row inputs arrived (the hook around verl's
        ``compute_advantage`` adds the old log-probs inside the call)."""
        self.attach(ctx)
        if self.spec.prepare is not None:
            t0 = time.perf_counter()
            self.spec.prepare(ctx, self.settings)
            ctx.metrics["verl_focal/prepare_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        with use_context(ctx):
            out = advantage_call()
        ctx.metrics["verl_focal/advantage_s"] = time.perf_counter() - t0
        ctx.metrics.update(input_metrics(ctx, self.needs))  # after the call: the old log-probs join it there
        return out


class BackgroundPrefetch:
    """The work :func:`begin` starts: ``AdvantageStep(spec, algorithm)``, ``build(step)`` and ``step.prefetch`` on
    the context it returns, in a daemon thread.  Never raises: a failure to start is kept for :meth:`join`.

    ``rows()`` (called here) gives the batch's row ids, e.g. its uids in order: the context is handed over only
    for the same rows.  For an estimator without a ``prefetch`` only the context is built in the background.
    """

    def __init__(self, spec: EstimatorSpec, algorithm: Any, rows: Callable[[], Hashable],
                 build: Callable[[AdvantageStep], AdvantageContext]) -> None:
        self.spec, self.rows = spec, None
        self.step: AdvantageStep | None = None
        self._ctx: AdvantageContext | None = None
        self._error: Exception | None = None

        def work() -> None:
            try:
                self.step = AdvantageStep(spec, algorithm)
                ctx = build(self.step)
                self.step.prefetch(ctx)
                self._ctx = ctx
            except Exception as e:  # noqa: BLE001 - an optimisation, never a failure of the step
                self._error = e

        self._thread = threading.Thread(target=work, daemon=True)
        try:
            self.rows = rows()
            self._thread.start()
        except Exception as e:  # noqa: BLE001 - not started: the advantage step does the work
            self._error = e

    def join(self, rows: Hashable, estimator: str) -> tuple[AdvantageStep | None, AdvantageContext | None, bool]:
        """Wait for the thread; return ``(step, context, failed)`` for the advantage step of ``rows``.

        For the same rows and estimator: ``step`` is the one parsed at the start, ``context`` the prefetched
        one with ``verl_focal/prefetched`` = 1 and ``verl_focal/prefetch_wait_s`` (this join's wait) added, or
        None with ``failed`` True when the prefetch raised or never started (logged).  For other rows or
        another estimator: ``(None, None, False)``.
        """
        t0 = time.perf_counter()
        if self._thread.ident is not None:
            self._thread.join()
        wait = time.perf_counter() - t0
        if estimator != self.spec.name or (self.rows is not None and rows != self.rows):
            return None, None, False
        if self._error is not None:
            logger.warning("verl-focal: prefetch for %s failed, the advantage step does the work: %s",
                           estimator, self._error)
            return self.step, None, True
        self._ctx.metrics.update({"verl_focal/prefetched": 1.0, "verl_focal/prefetch_wait_s": wait})
        return self.step, self._ctx, False


def begin(owner: Any, spec: EstimatorSpec | None, algorithm: Any, rows: Callable[[], Hashable],
          build: Callable[[AdvantageStep], AdvantageContext]) -> None:
    """Start the step's :class:`BackgroundPrefetch` for ``spec`` (None: verl's estimator, nothing to start) and
    keep it on ``owner`` (:data:`PENDING`), replacing one a batch never joined.  Never raises."""
    setattr(owner, PENDING, None if spec is None else BackgroundPrefetch(spec, algorithm, rows, build))


def finish(spec: EstimatorSpec, algorithm: Any, build: Callable[[AdvantageStep], AdvantageContext],
           call: Callable[[AdvantageContext], T], metrics: dict, owner: Any = None, rows: Hashable = None) -> T:
    """The advantage step of ``spec``: the context :func:`begin` prefetched on ``owner`` for the same ``rows``
    (then dropped), else ``build(step)``; then :meth:`AdvantageStep.run` of ``call(ctx)`` (the advantage call,
    verl's or ours); the step's metrics are added to ``metrics``.  Returns what ``call`` returns.  Without
    ``owner`` (the legacy hook, the demo) nothing was prefetched."""
    pending = getattr(owner, PENDING, None)
    if pending is not None:
        setattr(owner, PENDING, None)
    step, ctx, failed = pending.join(rows, spec.name) if pending is not None else (None, None, False)
    step = step or AdvantageStep(spec, algorithm)
    if ctx is None:
        ctx = build(step)
    if failed:
        ctx.metrics["verl_focal/prefetch_failed"] = 1.0
    out = step.run(ctx, lambda: call(ctx))
    metrics.update({**ctx.metrics, **text_metrics(ctx)})
    return out


def input_metrics(ctx: AdvantageContext, needs: frozenset[str]) -> dict[str, float]:
    """Which per-row inputs reached the step, as fractions of the batch's rows.

    ``verl_focal/acc_rows_frac``: rows with a finite ``acc`` from the reward extras (the rest
    fall back to the reward threshold, or leave their group, as each estimator documents);
    ``verl_focal/old_log_prob_rows_frac`` (only when the estimator needs old log-probs): rows
    with a finite sequence log-prob.  Both are 1.0 when every input arrived.
    """
    n = max(1, len(ctx.uids))
    acc = ctx.acc
    out = {"verl_focal/acc_rows_frac": 0.0 if acc is None else float(np.isfinite(acc).sum()) / n}
    if OLD_LOG_PROBS in needs:
        col = ctx.extras.get(OLD_LOG_PROB_SUM)
        ok = 0 if col is None else int(np.isfinite(np.asarray(col, dtype=np.float64)).sum())
        out["verl_focal/old_log_prob_rows_frac"] = ok / n
    return out
