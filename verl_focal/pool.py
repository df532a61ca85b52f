"""One bounded, killable process pool for the scorers (maths and IFEval/SynLogic).

verl's reward loop calls a scorer from executor threads, where no ``SIGALRM`` can be set
(:mod:`verl_focal.deadline` works in a process's main thread only).  So a scorer that needs a
time bound there runs the check in a spawn-context worker process, under the worker's own alarm,
and bounds the job by ``hard_timeout_s`` **counted from when a worker starts it**, not from
when the call was made: verl calls from up to 32 threads into a pool of a few processes, and a
call that only waited in the queue behind busy workers is no stuck check.

* a job still running ``hard_timeout_s`` after it started (stuck in C code that never returns
  to the interpreter) has its worker killed and replaced; the call reports a time-out, and the
  other workers and the calls queued behind it are left alone;
* a worker that died under a job, or a pool that broke, gives the call one retry (on a rebuilt
  pool when it broke);
* every pool is shut down at interpreter exit, before modules are torn down, so that exit is
  quiet.

The pool is :class:`pebble.ProcessPool`, whose task time-out starts when a worker picks the
task up, and which resolves every task it accepted (result, time-out, dead worker, broken
pool).  No verl import.
"""

from __future__ import annotations

import atexit
import concurrent.futures as cf
import logging
import multiprocessing
import threading
import weakref
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import pebble

__all__ = ["KillablePool"]

logger = logging.getLogger(__name__)

_LIVE: weakref.WeakSet[KillablePool] = weakref.WeakSet()


class KillablePool:
    """A lazily built spawn-context :class:`pebble.ProcessPool` with a per-job hard time-out.

    Args:
        name: used in log messages (``"verl_focal.reward"``).
        max_workers: the worker count, or a function returning it (read when the pool is built,
            so an environment variable is read in the process that scores).
        initializer: run once in each worker (pay slow imports there); its time is not part of
            any job's time-out.

    >>> pool = KillablePool("doctest", 1)
    >>> pool.run(divmod, (7, 2), hard_timeout_s=60.0)
    ((3, 1), False)
    >>> pool.shutdown()
    """

    def __init__(self, name: str, max_workers: int | Callable[[], int], initializer: Callable[[], None] | None = None):
        self.name = name
        self._max_workers = max_workers
        self._initializer = initializer
        self._pool: pebble.ProcessPool | None = None
        self._lock = threading.Lock()
        _LIVE.add(self)

    def _get(self) -> pebble.ProcessPool:
        with self._lock:
            if self._pool is None:
                n = self._max_workers() if callable(self._max_workers) else self._max_workers
                self._pool = pebble.ProcessPool(
                    max_workers=n, initializer=self._initializer, context=multiprocessing.get_context("spawn")
                )
            return self._pool

    def _discard(self, pool: pebble.ProcessPool) -> None:
        """Stop a broken ``pool`` (pebble has already failed its tasks); the next call builds a fresh one."""
        with self._lock:
            if self._pool is pool:
                self._pool = None
        pool.stop()
        pool.join()

    def run(self, fn: Callable[..., Any], args: tuple, hard_timeout_s: float) -> tuple[Any, bool]:
        """``(fn(*args), False)`` from a worker, or ``(None, True)`` when the call did not finish.

        Not finishing means: the job was still running ``hard_timeout_s`` seconds after a worker
        started it (the worker is killed and replaced), or it failed twice in a row because its
        worker died or the pool broke.  Waiting for a free worker does not count.  An exception
        raised by ``fn`` is raised here.  ``fn`` and ``args`` must pickle.
        """
        for _attempt in (0, 1):
            pool = self._get()
            try:
                fut = pool.schedule(fn, args, timeout=hard_timeout_s)
            except RuntimeError:  # "Unexpected error within the Pool": it broke
                self._discard(pool)
                continue
            try:
                return fut.result(), False
            except cf.TimeoutError:
                logger.warning("%s: a job ran past %.1fs in its worker; the worker was killed and replaced",
                               self.name, hard_timeout_s)
                return None, True
            except pebble.ProcessExpired:  # its worker died (pebble replaces it): try once more
                continue
            except BrokenProcessPool:
                self._discard(pool)
        logger.warning("%s: the worker pool broke twice; this call counts as timed out", self.name)
        return None, True

    def shutdown(self) -> None:
        """Stop the workers once the calls already made are done; a later :meth:`run` builds a new pool."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
            pool.join()


@atexit.register
def _shutdown_all() -> None:
    for pool in list(_LIVE):
        pool.shutdown()
