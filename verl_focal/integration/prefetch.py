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
    """The step parsed for one batch and, when the estimator has a ``prefetch``, its context build and
    ``step.prefetch`` in a background thread.

    Args:
        step: the step's :class:`~verl_focal.integration.step.AdvantageStep` (its settings are the
            step's one parse of the algorithm config, reused at the join for the same rows).
        rows: identifies the batch's rows (e.g. its uids in order); the join reuses the step and the
            prefetched context only for the same rows.
        build: builds the :class:`~verl_focal.integration.context.AdvantageContext` (runs in the
            thread); None when there is nothing to prefetch (no thread: only the step is kept).
    """

    def __init__(self, step: AdvantageStep, rows: Hashable,
                 build: Callable[[], AdvantageContext] | None = None) -> None:
        self.step = step
        self.rows = rows
        self._box: dict[str, Any] = {}
        self._thread: threading.Thread | None = None
        if build is None:
            return

        def work() -> None:
            try:
                ctx = build()
                step.prefetch(ctx)
                self._box["ctx"] = ctx
            except Exception as e:  # noqa: BLE001 - an optimisation, never a failure of the step
                self._box["error"] = e

        self._thread = threading.Thread(target=work, name="verl-focal-prefetch", daemon=True)
        self._thread.start()

    def wait(self) -> None:
        """Block until the background work (if any) is over."""
        if self._thread is not None:
            self._thread.join()

    def join(self, rows: Hashable, spec_name: str) -> tuple[AdvantageStep | None, AdvantageContext | None, bool]:
        """Wait for the thread (whatever the rows: the next step starts afresh); return
        ``(step, context, failed)`` for the advantage step of ``rows`` with estimator ``spec_name``.

        ``step`` is the parsed step when the rows and the estimator are the same, else None.
        ``context`` is the prefetched one then, with ``verl_focal/prefetched`` = 1 and
        ``verl_focal/prefetch_wait_s`` (the time this join waited) added to what the build and the
        prefetch recorded (the fetch time; a partition done in the prefetch reports its metrics);
        else None.  ``failed`` is True when the prefetch for these rows raised (logged; the caller
        does the work and counts it).
        """
        t0 = time.perf_counter()
        self.wait()
        wait = time.perf_counter() - t0
        if rows != self.rows or spec_name != self.step.spec.name:
            return None, None, False
        if "error" in self._box:
            logger.warning("verl-focal: prefetch for %s failed, the advantage step does the work: %s",
                           spec_name, self._box["error"])
            return self.step, None, True
        ctx = self._box.get("ctx")
        if ctx is not None:
            ctx.metrics.update({"verl_focal/prefetched": 1.0, "verl_focal/prefetch_wait_s": wait})
        return self.step, ctx, False
