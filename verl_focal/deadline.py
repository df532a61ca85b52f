"""A wall-clock bound on one call, by ``SIGALRM`` (main thread of a process only).

Used by the scorers (``verl_focal.reward`` for maths, ``verl_focal.ood`` for IFEval/SynLogic): a
pathological answer must cost at most ``timeout_s`` and score 0, never hang a reward worker.
In other threads the scorers use a killable process pool instead.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from typing import Any

__all__ = ["call_with_deadline"]


class _Deadline(BaseException):
    """Raised by our SIGALRM handler.  A BaseException, so that the broad ``except Exception``
    clauses inside math-verify and sympy cannot swallow it."""


def call_with_deadline(fn: Callable[..., Any], timeout_s: float, *args: Any) -> tuple[Any, bool]:
    """``(fn(*args), False)``, or ``(None, True)`` when it ran longer than ``timeout_s`` seconds.

    Someone else's alarm (e.g. pytest-timeout's) is put back afterwards with its remaining time.

    >>> call_with_deadline(sum, 1.0, [1, 2])
    (3, False)
    """

    def _on_alarm(signum, frame):  # noqa: ARG001
        raise _Deadline()

    old_handler = signal.signal(signal.SIGALRM, _on_alarm)
    t0 = time.monotonic()
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        return fn(*args), False
    except _Deadline:
        return None, True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        if old_delay > 0:
            remaining = max(old_delay - (time.monotonic() - t0), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, remaining, old_interval)
