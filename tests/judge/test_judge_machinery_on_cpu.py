"""The judge's machinery, one part at a time: the event-loop thread, the in-flight registry,
the metrics counters and the circuit breaker.  No server, no verl."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

from verl_focal.partition.judge.breaker import CircuitBreaker
from verl_focal.partition.judge.client import CallStats
from verl_focal.partition.judge.inflight import InflightRegistry
from verl_focal.partition.judge.loop import EventLoopThread
from verl_focal.partition.judge.metrics import JudgeMetrics
from verl_focal.partition.judge.outcome import FALLBACK_REASONS, CallResult, GroupOutcome


def test_loop_thread_runs_coroutines_and_restarts_after_stop():
    loop = EventLoopThread(name="t-judge")

    async def where():
        return threading.current_thread().name

    assert loop.submit(where()).result(timeout=5) == "t-judge"
    closed = []

    async def cleanup():
        closed.append(True)

    async def forever():
        await asyncio.sleep(3600)

    stuck = loop.submit(forever())
    assert loop.stop(cleanup) is True and closed == [True]
    assert stuck.cancelled()  # what still ran was cancelled
    assert loop.stop() is False  # already stopped
    assert loop.submit(where()).result(timeout=5) == "t-judge"  # started again
    loop.stop()


def _pending():
    fut = concurrent.futures.Future()
    return fut, (lambda stats: fut)


def test_registry_joins_running_requests_and_last_holder_cancels():
    reg = InflightRegistry()
    fut, start = _pending()
    a, joined_a = reg.acquire("k", start)
    b, joined_b = reg.acquire("k", lambda s: (_ for _ in ()).throw(AssertionError("must join")))
    assert a is b and (joined_a, joined_b) == (False, True) and a.holders == 2 and len(reg) == 1
    assert isinstance(a.stats, CallStats)
    assert reg.release(a) is False and not fut.cancelled()  # another holder still waits
    assert reg.release(a) is True and fut.cancelled()  # the last one cancels
    assert len(reg) == 0  # a finished (cancelled) request is forgotten
    c, joined = reg.acquire("k", _pending()[1])
    assert c is not a and not joined


def test_registry_claims_once_and_finished_requests_are_not_joined():
    reg = InflightRegistry()
    fut, start = _pending()
    req, _ = reg.acquire("k", start)
    assert reg.claim(req) is True and reg.claim(req) is False
    fut.set_result("done")
    fresh, joined = reg.acquire("k", _pending()[1])
    assert fresh is not req and not joined


def test_detached_request_is_recorded_when_nobody_else_claims_it():
    reg = InflightRegistry()
    recorded = []
    fut, start = _pending()
    req, _ = reg.acquire("k", start)
    reg.detach(req, recorded.append)
    assert not fut.cancelled() and req.holders == 0  # a prefetch never cancels
    fut.set_result("r1")
    assert recorded == ["r1"]
    # joined by a handle that claims it first: the prefetch does not record it again
    fut2, start2 = _pending()
    req2, _ = reg.acquire("k2", start2)
    reg.acquire("k2", start2)
    reg.detach(req2, recorded.append)
    assert reg.claim(req2)
    fut2.set_result("r2")
    assert recorded == ["r1"]


def _result(requests, retries=0, latency=0.5, labels=None, reason="timeout"):
    stats = CallStats(requests=requests, retries=retries)
    return CallResult(labels, [], reason, latency, stats)


def test_metrics_counts_and_resets():
    m = JudgeMetrics()
    m.record_call(_result(2, retries=1, latency=1.0))
    m.record_call(_result(1, latency=3.0, labels=[0, 1], reason=None))
    m.record_call(_result(0))  # no HTTP attempt: no latency sample
    m.record_outcomes([GroupOutcome([0], "trivial"), GroupOutcome([0, 1], "judge", repaired=True),
                       GroupOutcome([0, 0], "cache"), GroupOutcome([0, 1], "fallback", "timeout")],
                      cache_hits=1, joins=2)
    m.record_internal_error([1, 3, 4])  # two non-trivial groups
    m.record_wall(0.25, 0.125)
    m.record_breaker_trip()
    m.record_fallback_error()
    out = m.pop(breaker_open=True)
    assert out["judge/groups"] == 3 + 2 and out["judge/requests"] == 3 and out["judge/retries"] == 1
    assert out["judge/cache_hit_rate"] == 1 / 5 and out["judge/fallback_rate"] == 3 / 5
    assert out["judge/fallback/timeout"] == 1 and out["judge/fallback/internal"] == 2
    assert out["judge/repaired"] == 1 and out["judge/inflight_joins"] == 2 and out["judge/internal_errors"] == 1
    assert (out["judge/wall_s"], out["judge/wait_s"]) == (0.25, 0.125)
    assert out["judge/breaker_trips"] == 1 and out["judge/breaker_open"] == 1 and out["judge/fallback_errors"] == 1
    assert out["judge/latency_p50"] == 2.0 and out["judge/latency_p95"] == 1.0 + 0.95 * 2.0
    again = m.pop(breaker_open=False)
    assert again["judge/groups"] == 0 and again["judge/cache_hit_rate"] == 0 and "judge/latency_p50" not in again
    assert {f"judge/fallback/{r}" for r in FALLBACK_REASONS} <= set(again)  # stable keys, zeros included


def test_breaker_opens_for_its_cooldown_and_zero_disables_it():
    now = [100.0]
    b = CircuitBreaker(0.2, clock=lambda: now[0])
    assert not b.is_open() and b.trip() and b.is_open()
    now[0] += 0.19
    assert b.is_open()
    now[0] += 0.02
    assert not b.is_open()
    off = CircuitBreaker(0)
    assert off.trip() is False and not off.is_open()
