"""The judge's circuit breaker: after a step in which the server failed every request, skip it
for ``breaker_cooldown_s`` seconds (those groups fall back at once, reason ``circuit_open``).

Pure Python: no verl import.
"""

from __future__ import annotations

import time

__all__ = ["CircuitBreaker"]


class CircuitBreaker:
    """Open for ``cooldown_s`` seconds after :meth:`trip`; a cooldown of 0 disables it."""

    def __init__(self, cooldown_s: float) -> None:
        self.cooldown_s = float(cooldown_s)
        self._open_until = 0.0  # time.monotonic()

    def trip(self) -> bool:
        """Open the breaker; False (and nothing changes) when it is disabled."""
        if self.cooldown_s <= 0:
            return False
        self._open_until = time.monotonic() + self.cooldown_s
        return True

    def is_open(self) -> bool:
        return time.monotonic() < self._open_until
