"""What one judged group came to: the records shared by the handle, the partitioner and the metrics.

Pure Python: no verl import.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from verl_focal.partition.judge.client import CallStats

__all__ = ["GroupOutcome", "CallResult", "FALLBACK_REASONS", "NETWORK_REASONS"]

# Every reason a group can fall back for; all are reported (zeros included) so metric keys are stable.
FALLBACK_REASONS = (
    "timeout", "connect", "dropped", "http_429", "http_5xx", "http_4xx",
    "malformed", "truncated", "empty", "bad_indices", "deadline", "circuit_open", "internal",
)
# Faults that say the server (not one reply) is unusable; a step made only of these opens the breaker.
NETWORK_REASONS = frozenset({"timeout", "connect", "dropped", "http_429", "http_5xx", "deadline"})


@dataclass
class GroupOutcome:
    """What happened to one group.  ``source``: judge | cache | trivial (n <= 1) | fallback."""

    labels: list[int]
    source: str
    reason: str | None = None  # why it fell back
    names: list[str] = field(default_factory=list)  # strategy label per cluster (judge / cache)
    latency_s: float | None = None  # wall time of the network call incl. retries (judge / fallback after a call)
    repaired: bool = False
    detail: str = ""


@dataclass
class CallResult:
    """One network call's result as produced on the loop: labels + names, or a fault ``reason``."""

    labels: list[int] | None
    names: list[str]
    reason: str | None
    latency_s: float
    stats: CallStats
    repaired: bool = False
    detail: str = ""
