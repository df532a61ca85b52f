"""One bounded, killable process pool for the scorers (maths and IFEval/SynLogic).

verl's reward loop calls a scorer from executor threads, where no ``SIGALRM`` can be set
(:mod:`verl_focal.deadline` works in a process's main thread only).  So a scorer that needs a
time bound there runs the check in a spawn-context worker process, under the worker's own alarm,
and the caller waits at most ``hard_timeout_s``:

* a worker still busy after that (stuck in C code that never returns to the interpreter) is
  killed, the pool is rebuilt for the next call, and the call reports a time-out;
* a pool that broke (a worker died) is rebuilt and the call is retried once;
* every pool is shut down at interpreter exit, before modules are torn down, so that exit is
  quiet.

No verl import.
"""

from __future__ import annotations

import atexit
import concurrent.futures as cf
import logging
import multiprocessing
import threading
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["KillablePool"]

logger = logging.getLogger(__name__)

_LIVE: weakref.WeakSet[KillablePool] = weakref.WeakSet()


class KillablePool:
    """A lazily built spawn-context :class:`~concurrent.futures.ProcessPoolExecutor`.

    Args:
        name: used in log messages (``"verl_focal.reward"``).
        max_workers: the worker count, or a function returning it (read when the pool is built,
            so an environment variable is read in the process that scores).
        initializer: run once in each worker (pay slow imports there).

    >>> pool = KillablePool("doctest", 1)
    >>> pool.run(divmod, (7, 2), hard_timeout_s=60.0)
    ((3, 1), False)
    >>> pool.shutdown()
    """

    def __init__(self, name: str, max_workers: int | Callable[[], int], initializer: Callable[[], None] | None = None):
        self.name = name
        self._max_workers = max_workers
        self._initializer = initializer
        self._pool: cf.ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        _LIVE.add(self)

    def _get(self) -> cf.ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                n = self._max_workers() if callable(self._max_workers) else self._max_workers
                self._pool = cf.ProcessPoolExecutor(
                    max_workers=n, mp_context=multiprocessing.get_context("spawn"), initializer=self._initializer
                )
            return self._pool

    def _discard(self, pool: cf.ProcessPoolExecutor) -> None:
        """Kill ``pool``'s workers (one is stuck or dead); the next call builds a fresh pool."""
        with self._lock:
            if self._pool is pool:
                self._pool = None
        for proc in list((getattr(pool, "_processes", None) or {}).values()):  # private, but the only handle
            try:
                proc.kill()
            except Exception:  # noqa: BLE001 - already gone
                pass
        pool.shutdown(wait=False, cancel_futures=True)

    def run(self, fn: Callable[..., Any], args: tuple, hard_timeout_s: float) -> tuple[Any, bool]:
        """``(fn(*args), False)`` from a worker, or ``(None, True)`` when the call did not finish.

        Not finishing means: the worker was still busy after ``hard_timeout_s`` seconds (it is
        killed), or the pool broke on two tries in a row.  ``fn`` and ``args`` must pickle.
        """
        for _attempt in (0, 1):
            pool = self._get()
            try:
                fut = pool.submit(fn, *args)
            except (cf.BrokenExecutor, RuntimeError):
                self._discard(pool)
                continue
            try:
                return fut.result(timeout=hard_timeout_s), False
            except cf.TimeoutError:
                logger.warning("%s: a worker exceeded %.1fs; killing it and restarting the pool", self.name,
                               hard_timeout_s)
                self._discard(pool)
                return None, True
            except cf.BrokenExecutor:
                self._discard(pool)
        logger.warning("%s: the worker pool broke twice; this call counts as timed out", self.name)
        return None, True

    def shutdown(self) -> None:
        """Stop the workers (waits for running calls); a later :meth:`run` builds a new pool."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


@atexit.register
def _shutdown_all() -> None:
    for pool in list(_LIVE):
        pool.shutdown()
