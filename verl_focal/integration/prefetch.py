"""Start a step's slow group-level work before a pass verl runs anyway; join it at the advantage step.

An estimator with a ``prefetch`` (the cue estimators: the judge's requests, the strategy-cue
extraction, the texts they read) can start as soon as the rows and their rewards exist.  A trainer
hook calls :meth:`BackgroundPrefetch.start` before the pass it hides the work behind (the
old-log-prob pass, and the reference and critic passes after it) and :meth:`BackgroundPrefetch.join`
at the advantage step, for the same rows.  The work runs in a daemon thread; a failure or other rows
at the join mean the advantage step does the work itself (logged, counted as
``verl_focal/prefetch_failed``), so a prefetch can never stop a step.  No verl import.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

from verl_focal.integration.context import AdvantageContext
from verl_focal.integration.step import AdvantageStep

__all__ = ["BackgroundPrefetch"]

logger = logging.getLogger(__name__)


class BackgroundPrefetch:
    """The context build and ``step.prefetch`` of one batch, in a background thread.

    Args:
        step: the step's :class:`~verl_focal.integration.step.AdvantageStep` (its settings are the
            step's one parse of the algorithm config, reused at the join).
        rows: identifies the batch's rows (e.g. its uids in order); the join reuses the prefetched
            context only for the same rows.
        build: builds the :class:`~verl_focal.integration.context.AdvantageContext` (runs in the thread).
    """

    def __init__(self, step: AdvantageStep, rows: Hashable, build: Callable[[], AdvantageContext]) -> None:
        self.step = step
        self.rows = rows
        self._box: dict[str, Any] = {}

        def work() -> None:
            try:
                ctx = build()
                step.prefetch(ctx)
                self._box["ctx"] = ctx
            except Exception as e:  # noqa: BLE001 - an optimisation, never a failure of the step
                self._box["error"] = e

        self._thread = threading.Thread(target=work, name="verl-focal-prefetch", daemon=True)
        self._thread.start()

    def join(self, rows: Hashable, spec_name: str) -> tuple[AdvantageContext | None, bool]:
        """Wait for the thread; return ``(context, failed)``.

        ``context`` is the prefetched one when it was built for these ``rows`` and this estimator, with
        its metrics reset to ``verl_focal/prefetched`` = 1, ``verl_focal/prefetch_wait_s`` (the time
        this join waited) and the build's ``verl_focal/fetch_s``; else None.  ``failed`` is True when
        the prefetch for these rows raised (the caller does the work and counts it).
        """
        t0 = time.perf_counter()
        self._thread.join()
        wait = time.perf_counter() - t0
        if rows != self.rows or spec_name != self.step.spec.name:
            return None, False
        if "error" in self._box:
            logger.warning("verl-focal: prefetch for %s failed, the advantage step does the work: %s",
                           spec_name, self._box["error"])
            return None, True
        ctx = self._box["ctx"]
        ctx.metrics = {
            "verl_focal/prefetched": 1.0,
            "verl_focal/prefetch_wait_s": wait,
            "verl_focal/fetch_s": ctx.metrics.get("verl_focal/fetch_s", 0.0),
        }
        return ctx, False
