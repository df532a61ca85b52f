"""Judging in flight for one batch of groups, and its collection into labels.

:meth:`JudgePartitioner.submit_groups` builds a :class:`JudgeHandle` (answering trivial,
cached and breaker-skipped groups at once, and waiting on a request for the others) and
returns it; :meth:`JudgeHandle.result` later waits until the step deadline, turns each
request's result into a :class:`GroupOutcome`, gives failed groups the fallback's labels and
records the batch in the metrics.  A handle talks to its partitioner only through
:class:`HandleServices`.  Pure Python: no verl import.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from verl_focal.partition.judge.breaker import CircuitBreaker
from verl_focal.partition.judge.client import CallStats
from verl_focal.partition.judge.inflight import InflightRegistry, Request
from verl_focal.partition.judge.metrics import JudgeMetrics
from verl_focal.partition.judge.outcome import NETWORK_REASONS, CallResult, GroupOutcome

__all__ = ["JudgeHandle", "HandleServices", "Group"]

#: ``(problem, solution texts)``
Group = tuple[str | None, list[str]]


@dataclass(frozen=True)
class HandleServices:
    """Everything a handle uses of the partitioner that made it."""

    inflight: InflightRegistry
    metrics: JudgeMetrics
    breaker: CircuitBreaker
    #: the fallback partitioner's labels for some groups; never raises
    fallback: Callable[[list[Group]], list[list[int]]]


class JudgeHandle:
    """Judging in flight for one batch of groups; :meth:`result` collects it (never raises)."""

    def __init__(self, groups: list[Group], deadline_s: float, services: HandleServices) -> None:
        self._groups = groups
        self._services = services
        self._t0 = time.perf_counter()
        self._deadline = self._t0 + deadline_s
        self._outcomes: list[GroupOutcome | None] = [None] * len(groups)
        self._requests: dict[str, Request] = {}
        self._key_of: list[str | None] = [None] * len(groups)  # the request group i waits on
        self._joins = 0
        self._cache_hits = 0
        self._t_last = self._t0  # when the last request finished
        self._done: list[list[int]] | None = None
        self.wall_s = 0.0  # submit -> last answer (or deadline), plus the fallback's own time
        self.wait_s = 0.0  # time result() blocked the caller
        self._lock = threading.Lock()

    # ------------------------------------------------ building (by the partitioner)
    def answer(self, i: int, outcome: GroupOutcome) -> None:
        """Group ``i`` is settled without a request (trivial, cached, or skipped by the breaker)."""
        self._outcomes[i] = outcome
        if outcome.source == "cache":
            self._cache_hits += 1

    def wait_for(self, i: int, key: str, start: Callable[[CallStats], concurrent.futures.Future]) -> None:
        """Group ``i`` waits on the request for ``key``: this batch's, a running one (joined), or ``start``'s."""
        self._key_of[i] = key
        if key not in self._requests:
            req, joined = self._services.inflight.acquire(key, start)
            self._requests[key] = req
            self._joins += joined
            req.future.add_done_callback(self._mark_done)

    def abort(self, err: BaseException) -> None:
        """Building failed (e.g. the loop thread could not start): release the requests and
        give every group the fallback's labels, reason ``internal``."""
        for req in self._requests.values():
            self._services.inflight.release(req)
        self._requests.clear()
        self._key_of = [None] * len(self._groups)
        self._done = self._emergency()
        self._outcomes = [GroupOutcome(lab, "fallback", "internal", detail=repr(err)) for lab in self._done]

    def detach(self) -> None:
        """Let go of the requests without cancelling them (prefetch: nobody will call :meth:`result`);
        each one's HTTP counts are recorded when it ends, unless a joining handle records them."""
        for req in self._requests.values():
            self._services.inflight.detach(req, self._services.metrics.record_call)

    # ------------------------------------------------ collecting
    @property
    def requests(self) -> Mapping[str, Request]:
        """The requests this handle waits on, by cache key (read-only)."""
        return MappingProxyType(self._requests)

    def done(self) -> bool:
        """True when every request has finished (``result`` will not block)."""
        return all(r.future.done() for r in self._requests.values())

    def result(self, timeout: float | None = None) -> list[list[int]]:
        """One label list per group, in order.  Waits at most until the step deadline
        (``step_deadline_s`` or derived from timeout/retries), or ``timeout`` seconds if smaller;
        groups not done by then fall back with reason ``deadline``.  Never raises."""
        with self._lock:
            if self._done is not None:
                return [list(x) for x in self._done]
            t_wait = time.perf_counter()
            try:
                self._done = self._collect(timeout)
            except Exception:  # noqa: BLE001 - a bug here must not kill the step
                self._done = self._emergency()
                self.wall_s = time.perf_counter() - self._t0
            self.wait_s = time.perf_counter() - t_wait
            self._services.metrics.record_wall(self.wall_s, self.wait_s)
            return [list(x) for x in self._done]

    def outcomes(self) -> list[GroupOutcome]:
        """Per-group provenance (source, reason, strategy names); calls :meth:`result` first."""
        self.result()
        return [o for o in self._outcomes if o is not None]

    def _mark_done(self, _fut: concurrent.futures.Future) -> None:
        self._t_last = max(self._t_last, time.perf_counter())

    def _wait(self, timeout: float | None) -> float:
        """Wait for the requests until the deadline; returns when the waiting ended."""
        if not self._requests:
            return self._t0
        remaining = max(0.0, self._deadline - time.perf_counter())
        if timeout is not None:
            remaining = min(remaining, timeout)
        _, not_done = concurrent.futures.wait([r.future for r in self._requests.values()], timeout=remaining)
        return time.perf_counter() if not_done else self._t_last

    def _settle(self, req: Request) -> CallResult:
        """The request's result (a ``deadline`` fault if unfinished); releases this handle's hold."""
        services = self._services
        fut = req.future
        finished = fut.done() and not fut.cancelled()
        if finished:
            try:
                result = fut.result()
            except Exception as e:  # noqa: BLE001 - the partitioner's call catches everything; belt and braces
                result = CallResult(None, [], "internal", 0.0, req.stats, detail=repr(e))
        else:
            result = CallResult(None, [], "deadline", time.perf_counter() - self._t0, req.stats,
                                detail="no answer before the step deadline")
        last = services.inflight.release(req)  # the last holder of an unfinished request cancels it
        # A request's HTTP stats are counted once: by the first handle that sees it finished,
        # or by the handle that cancels it; never while another holder still waits on it.
        if (finished or last) and services.inflight.claim(req):
            services.metrics.record_call(result)
        return result

    def _collect(self, timeout: float | None) -> list[list[int]]:
        services = self._services
        end = self._wait(timeout)
        results = {key: self._settle(req) for key, req in self._requests.items()}
        if results and all(r.labels is None and r.reason in NETWORK_REASONS for r in results.values()):
            if services.breaker.trip():
                services.metrics.record_breaker_trip()
        failed = [i for i, o in enumerate(self._outcomes) if o is not None and o.source == "fallback"]
        for i, key in enumerate(self._key_of):
            if key is None:
                continue
            r = results[key]
            if r.labels is not None:
                self._outcomes[i] = GroupOutcome(list(r.labels), "judge", None, list(r.names), r.latency_s, r.repaired)
            else:
                failed.append(i)
                self._outcomes[i] = GroupOutcome([], "fallback", r.reason, [], r.latency_s, detail=r.detail)
        t_fb = time.perf_counter()
        if failed:
            labels = services.fallback([self._groups[i] for i in failed])
            for i, lab in zip(failed, labels):
                self._outcomes[i].labels = lab  # type: ignore[union-attr]
        self.wall_s = max(0.0, end - self._t0) + (time.perf_counter() - t_fb)
        services.metrics.record_outcomes(self._outcomes, self._cache_hits, self._joins)  # type: ignore[arg-type]
        return [o.labels for o in self._outcomes]  # type: ignore[union-attr]

    def _emergency(self) -> list[list[int]]:
        self._services.metrics.record_internal_error([len(t) for _, t in self._groups])
        return self._services.fallback(self._groups)
