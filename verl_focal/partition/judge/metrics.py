"""The judge's step metrics: thread-safe counters, read and reset by :meth:`JudgeMetrics.pop`.

Keys (all ``judge/…``; meaning in docs/judge.md): groups, requests, retries, cache_hit_rate,
fallback_rate, repaired, inflight_joins, breaker_trips, breaker_open, wall_s, wait_s,
fallback_errors, internal_errors, ``fallback/<reason>`` for every reason in
:data:`~verl_focal.partition.judge.outcome.FALLBACK_REASONS` (zeros included, so keys are
stable), and latency_p50 / latency_p95 when a request was made.  Pure Python: no verl import.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from verl_focal.partition.judge.outcome import FALLBACK_REASONS, CallResult, GroupOutcome

__all__ = ["JudgeMetrics"]


def _zeros() -> dict[str, Any]:
    return {
        "groups": 0, "requests": 0, "retries": 0, "cache_hits": 0, "fallbacks": 0, "repaired": 0,
        "wall_s": 0.0, "wait_s": 0.0, "reasons": {}, "latencies": [], "fallback_errors": 0, "joins": 0,
        "breaker_trips": 0, "internal_errors": 0,
    }


class JudgeMetrics:
    """Counters since the last :meth:`pop`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._m = _zeros()

    def requests_since_pop(self) -> int:
        """HTTP requests counted since the last :meth:`pop` (read without resetting)."""
        with self._lock:
            return int(self._m["requests"])

    def record_call(self, result: CallResult) -> None:
        """One network call's HTTP attempts, retries and (if it made a request) latency."""
        with self._lock:
            self._m["requests"] += result.stats.requests
            self._m["retries"] += result.stats.retries
            if result.stats.requests:
                self._m["latencies"].append(result.latency_s)

    def record_outcomes(self, outcomes: Sequence[GroupOutcome], cache_hits: int, joins: int) -> None:
        """A collected batch: groups (trivial ones not counted), fallbacks by reason, repairs."""
        with self._lock:
            m = self._m
            m["cache_hits"] += cache_hits
            m["joins"] += joins
            for o in outcomes:
                if o.source == "trivial":
                    continue
                m["groups"] += 1
                if o.source == "fallback":
                    m["fallbacks"] += 1
                    m["reasons"][o.reason] = m["reasons"].get(o.reason, 0) + 1
                elif o.repaired:
                    m["repaired"] += 1

    def record_internal_error(self, group_sizes: Sequence[int]) -> None:
        """A bug of ours failed a whole batch: every non-trivial group falls back, reason ``internal``."""
        n = sum(1 for size in group_sizes if size > 1)
        with self._lock:
            m = self._m
            m["internal_errors"] += 1
            m["groups"] += n
            m["fallbacks"] += n
            m["reasons"]["internal"] = m["reasons"].get("internal", 0) + n

    def record_wall(self, wall_s: float, wait_s: float) -> None:
        with self._lock:
            self._m["wall_s"] += wall_s
            self._m["wait_s"] += wait_s

    def record_breaker_trip(self) -> None:
        with self._lock:
            self._m["breaker_trips"] += 1

    def record_fallback_error(self) -> None:
        with self._lock:
            self._m["fallback_errors"] += 1

    def pop(self, breaker_open: bool) -> dict[str, float]:
        """The metrics since the last call; resets the counters."""
        with self._lock:
            m, self._m = self._m, _zeros()
        groups = m["groups"]
        out: dict[str, float] = {
            "judge/groups": float(groups),
            "judge/requests": float(m["requests"]),
            "judge/retries": float(m["retries"]),
            "judge/cache_hit_rate": m["cache_hits"] / groups if groups else 0.0,
            "judge/fallback_rate": m["fallbacks"] / groups if groups else 0.0,
            "judge/repaired": float(m["repaired"]),
            "judge/inflight_joins": float(m["joins"]),
            "judge/breaker_trips": float(m["breaker_trips"]),
            "judge/breaker_open": float(breaker_open),
            "judge/wall_s": float(m["wall_s"]),
            "judge/wait_s": float(m["wait_s"]),
            "judge/fallback_errors": float(m["fallback_errors"]),
            "judge/internal_errors": float(m["internal_errors"]),
        }
        for reason in FALLBACK_REASONS:
            out[f"judge/fallback/{reason}"] = float(m["reasons"].get(reason, 0))
        if m["latencies"]:
            lat = np.asarray(m["latencies"], dtype=float)
            out["judge/latency_p50"] = float(np.percentile(lat, 50))
            out["judge/latency_p95"] = float(np.percentile(lat, 95))
        return out
