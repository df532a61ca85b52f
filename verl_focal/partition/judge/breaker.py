"""The judge's circuit breaker: after a step in which the server failed every request, skip it
for ``breaker_cooldown_s`` seconds (those groups fall back at once, reason ``circuit_open``).

Pure Python: no verl import.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["CircuitBreaker"]


class CircuitBreaker:
    """Open for ``cooldown_s`` seconds after :meth:`trip`; a cooldown of 0 disables it.

    ``clock`` (seconds, monotonic) is ``time.monotonic``; a test may hand in its own.

    >>> now = [0.0]
    >>> b = CircuitBreaker(2.0, clock=lambda: now[0])
    >>> b.trip(), b.is_open()
    (True, True)
    >>> now[0] = 2.5; b.is_open()
    False
    """

    def __init__(self, cooldown_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.cooldown_s = float(cooldown_s)
        self.clock = clock
        self._open_until = 0.0  # in clock() time

    def trip(self) -> bool:
        """Open the breaker; False (and nothing changes) when it is disabled."""
        if self.cooldown_s <= 0:
            return False
        self._open_until = self.clock() + self.cooldown_s
        return True

    def is_open(self) -> bool:
        return self.clock() < self._open_until
