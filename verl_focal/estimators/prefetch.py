"""Start a step's slow group-level work before a pass verl runs anyway; join it at the advantage step.

The step's per-row fields (the v1 trainer's TransferQueue read) and an estimator's ``prefetch`` (the cue
estimators: the judge's requests, the strategy-cue partition, the texts they read) can start as soon as the
rows and their rewards exist.  A trainer
hook starts :class:`BackgroundPrefetch` before verl's old-log-prob pass (the reference and critic
passes follow it) and joins it at the advantage step, for the same rows.  This is the package's one
background thread outside the judge client.  A failure, or other rows at the join, means the
advantage step does the work itself (logged, counted as ``verl_focal/prefetch_failed``): a prefetch
never stops a step.  No verl import.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable

from verl_focal.estimators.context import AdvantageContext
from verl_focal.estimators.step import AdvantageStep

__all__ = ["BackgroundPrefetch"]

logger = logging.getLogger(__name__)


class BackgroundPrefetch:
    """``build()`` then ``step.prefetch`` on the context it returns, in a daemon thread.

    Args:
        step: the step's :class:`~verl_focal.estimators.step.AdvantageStep` (``step.prefetch`` does nothing for
            an estimator without one: then only the context is built in the background).
        rows: identifies the batch's rows (e.g. their uids in order); the context is handed over only
            for the same rows.
        build: builds the :class:`~verl_focal.estimators.context.AdvantageContext` (runs in the thread).
    """

    def __init__(self, step: AdvantageStep, rows: Hashable, build: Callable[[], AdvantageContext]) -> None:
        self.step, self.rows = step, rows
        self._ctx: AdvantageContext | None = None
        self._error: Exception | None = None

        def work() -> None:
            try:
                ctx = build()
                step.prefetch(ctx)
                self._ctx = ctx
            except Exception as e:  # noqa: BLE001 - an optimisation, never a failure of the step
                self._error = e

        self._thread = threading.Thread(target=work, daemon=True)
        self._thread.start()

    def join(self, rows: Hashable, estimator: str) -> tuple[AdvantageStep | None, AdvantageContext | None, bool]:
        """Wait for the thread; return ``(step, context, failed)`` for the advantage step of ``rows``.

        For the same rows and estimator: ``step`` is the one parsed at the start (the step's one parse of
        the algorithm config), ``context`` the prefetched one with ``verl_focal/prefetched`` = 1 and
        ``verl_focal/prefetch_wait_s`` (the time this join waited) added to what the build and the prefetch
        recorded, or None with ``failed`` True when the prefetch raised (logged; the caller does the work
        and counts it).  For other rows or another estimator: ``(None, None, False)``.
        """
        t0 = time.perf_counter()
        self._thread.join()
        wait = time.perf_counter() - t0
        if rows != self.rows or estimator != self.step.spec.name:
            return None, None, False
        if self._error is not None:
            logger.warning("verl-focal: prefetch for %s failed, the advantage step does the work: %s",
                           estimator, self._error)
            return self.step, None, True
        self._ctx.metrics.update({"verl_focal/prefetched": 1.0, "verl_focal/prefetch_wait_s": wait})
        return self.step, self._ctx, False
