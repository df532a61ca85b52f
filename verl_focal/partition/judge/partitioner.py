"""The ``judge`` partitioner: an LLM groups a group's correct solutions by strategy.

Cue-GRPO's "CR under Judge Partitions" (methods.md Sec. 7): the clusters
C_1..C_m of the credit rule come from a judge model that reads the problem and
the correct solutions.  This module never raises into a training step: any
fault of the judge for one group (timeout, refused or dropped connection,
429, 5xx, malformed / empty / unusable reply, step deadline) replaces that
group's partition by the configured fallback partitioner's, and is counted.

Overlap: :meth:`JudgePartitioner.submit_groups` returns at once with a
:class:`JudgeHandle`; the requests run on a background event loop while the
caller does other work (e.g. the old-log-prob pass), and
:meth:`JudgeHandle.result` collects them.  :meth:`partition_groups` is
``submit_groups(groups).result()``.  A group submitted again while its request
is still in flight joins that request (:meth:`JudgePartitioner.prefetch` relies
on this: fire early, and the unchanged ``prepare`` step later joins or hits the cache).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from verl_focal.partition.base import Partitioner, canonical_labels, get_partitioner, register_partitioner
from verl_focal.partition.factory import partitioner_for, partitioner_kwargs, section_value
from verl_focal.partition.judge.cache import PartitionCache, cache_key
from verl_focal.partition.judge.client import CallStats, ChatClient, JudgeFault
from verl_focal.partition.judge.config import JudgeConfig, coerce_judge_config
from verl_focal.partition.judge.parsing import JudgeReplyError, parse_reply
from verl_focal.partition.judge.prompt import build_messages

__all__ = ["JudgePartitioner", "JudgeHandle", "GroupOutcome", "FALLBACK_REASONS", "shared_judge",
           "fallback_kwargs_from_cue"]

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
class _Pending:
    """A network result as produced on the loop: labels+names, or a fault reason."""

    labels: list[int] | None
    names: list[str]
    reason: str | None
    latency_s: float
    stats: CallStats
    repaired: bool = False
    detail: str = ""


@dataclass
class _Request:
    """One network call, possibly shared by several handles (identical groups submitted again
    while the first request is still in flight join it instead of sending another)."""

    future: concurrent.futures.Future
    stats: CallStats
    holders: int = 1
    recorded: bool = False


class _LoopThread:
    """A daemon thread running one asyncio loop for the partitioner's requests."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name="verl-focal-judge", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def submit(self, coro) -> concurrent.futures.Future:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self, client: ChatClient | None) -> None:
        async def shutdown() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if client is not None:
                await client.aclose()

        try:
            self.submit(shutdown()).result(timeout=5)
        except Exception:  # noqa: BLE001 - shutting down; nothing to save
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
        if not self.thread.is_alive():
            self.loop.close()


class JudgeHandle:
    """Judging in flight for one batch of groups; :meth:`result` collects it (never raises)."""

    def __init__(self, owner: "JudgePartitioner", groups: list[tuple[str | None, list[str]]]) -> None:
        self._owner = owner
        self._groups = groups
        self._t0 = time.perf_counter()
        self._deadline = self._t0 + owner.config.derived_deadline_s()
        self._outcomes: list[GroupOutcome | None] = [None] * len(groups)
        self._requests: dict[str, _Request] = {}
        self._joins = 0
        self._t_last = self._t0  # when the last request finished
        self._future_of: list[str | None] = [None] * len(groups)
        self._cache_hits = 0
        self._done: list[list[int]] | None = None
        self.wall_s = 0.0  # submit -> last answer (or deadline), plus the fallback's own time
        self.wait_s = 0.0  # time result() blocked the caller
        self._lock = threading.Lock()

    def _mark_done(self, _fut: concurrent.futures.Future) -> None:
        self._t_last = max(self._t_last, time.perf_counter())

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
            except Exception as e:  # noqa: BLE001 - a bug here must not kill the step
                self._done = self._owner._emergency(self._groups, e)
                self.wall_s = time.perf_counter() - self._t0
            self.wait_s = time.perf_counter() - t_wait
            self._owner._record_wall(self.wall_s, self.wait_s)
            return [list(x) for x in self._done]

    def outcomes(self) -> list[GroupOutcome]:
        """Per-group provenance (source, reason, strategy names); calls :meth:`result` first."""
        self.result()
        return [o for o in self._outcomes if o is not None]

    def _collect(self, timeout: float | None) -> list[list[int]]:
        owner = self._owner
        end = self._t0
        if self._requests:
            remaining = max(0.0, self._deadline - time.perf_counter())
            if timeout is not None:
                remaining = min(remaining, timeout)
            _, not_done = concurrent.futures.wait([r.future for r in self._requests.values()], timeout=remaining)
            end = time.perf_counter() if not_done else self._t_last
        pending: dict[str, _Pending] = {}
        for key, req in self._requests.items():
            fut = req.future
            finished = fut.done() and not fut.cancelled()
            if finished:
                try:
                    pending[key] = fut.result()
                except Exception as e:  # noqa: BLE001 - _judge_one catches everything; belt and braces
                    pending[key] = _Pending(None, [], "internal", 0.0, req.stats, detail=repr(e))
            else:
                pending[key] = _Pending(None, [], "deadline", time.perf_counter() - self._t0, req.stats,
                                        detail="no answer before the step deadline")
            last = owner._release(req)  # the last holder of an unfinished request cancels it
            # A request's HTTP stats are counted once: by the first handle that sees it finished,
            # or by the handle that cancels it; never while another holder still waits on it.
            if (finished or last) and owner._claim(req):
                owner._record_call(pending[key])
        if pending and all(p.labels is None and p.reason in NETWORK_REASONS for p in pending.values()):
            owner._open_breaker()
        failed = [i for i, o in enumerate(self._outcomes) if o is not None and o.source == "fallback"]
        for i, key in enumerate(self._future_of):
            if key is None:
                continue
            p = pending[key]
            if p.labels is not None:
                self._outcomes[i] = GroupOutcome(list(p.labels), "judge", None, list(p.names), p.latency_s, p.repaired)
            else:
                failed.append(i)
                self._outcomes[i] = GroupOutcome([], "fallback", p.reason, [], p.latency_s, detail=p.detail)
        t_fb = time.perf_counter()
        if failed:
            labels = owner._fallback_labels([self._groups[i] for i in failed])
            for i, lab in zip(failed, labels):
                self._outcomes[i].labels = lab  # type: ignore[union-attr]
        self.wall_s = max(0.0, end - self._t0) + (time.perf_counter() - t_fb)
        owner._record_outcomes(self._outcomes, self._cache_hits, self._joins)  # type: ignore[arg-type]
        return [o.labels for o in self._outcomes]  # type: ignore[union-attr]


@register_partitioner("judge")
class JudgePartitioner(Partitioner):
    """Partition by an OpenAI-compatible judge model; see the module docstring and docs/judge.md.

    Build with ``JudgePartitioner(config)`` (a :class:`JudgeConfig`, mapping or OmegaConf node
    of ``algorithm.cue.judge``) and/or keyword overrides of its fields.  Build once and reuse:
    the instance holds the cache, the connection pool and a background event-loop thread
    (:meth:`close` stops it).
    """

    def __init__(
        self,
        config: Any = None,
        *,
        fallback_kwargs: dict[str, Any] | None = None,
        fallback_partitioner: Partitioner | None = None,
        **overrides: Any,
    ) -> None:
        self.config: JudgeConfig = coerce_judge_config(config, **overrides)
        self.fallback_kwargs = dict(fallback_kwargs or {})
        c = self.config
        self.name = "judge"
        api_key = None
        if c.api_key_env:
            api_key = os.environ.get(c.api_key_env)
            if not api_key:
                raise ValueError(
                    f"algorithm.cue.judge.api_key_env={c.api_key_env!r}: that environment variable is not set "
                    "or empty; export it with the judge's API key, or set api_key_env to '' for a server without keys"
                )
        self._client = ChatClient(c, api_key)
        # an instance handed in (e.g. the caller's own cached strategy_cue) wins over name + kwargs
        self._fallback = fallback_partitioner or get_partitioner(c.fallback, **self.fallback_kwargs)
        self._cache = PartitionCache(c.cache_max_entries, c.cache_dir)
        self._loop: _LoopThread | None = None
        self._loop_lock = threading.Lock()
        self._inflight: dict[str, _Request] = {}
        self._inflight_lock = threading.Lock()
        self._breaker_until = 0.0  # time.monotonic() until which the judge is skipped
        self._mlock = threading.Lock()
        self._reset_metrics()

    def __repr__(self) -> str:
        c = self.config
        return (f"JudgePartitioner(base_url={c.base_url!r}, model={c.model!r}, api_key_env={c.api_key_env!r}, "
                f"fallback={c.fallback!r})")

    @classmethod
    def from_cue_config(cls, cue: Any, **overrides: Any) -> "JudgePartitioner":
        """Build from the whole ``algorithm.cue`` section (a CueConfig, mapping or OmegaConf node).

        Uses ``cue.judge``; the fallback partitioner gets the section's own settings
        (:func:`fallback_kwargs_from_cue`), so that a failed group is partitioned exactly as
        ``algorithm.cue.partitioner=<fallback>`` would partition it.
        """
        cfg = coerce_judge_config(section_value(cue, "judge"), **overrides)
        return cls(cfg, fallback_kwargs=fallback_kwargs_from_cue(cue, cfg.fallback))

    # ----------------------------------------------------------------- public API
    def partition(self, texts: list[str], problem: str | None = None) -> list[int]:
        return self.partition_groups([(problem, list(texts))])[0]

    def partition_groups(self, groups: Sequence[tuple[str | None, list[str]]]) -> list[list[int]]:
        """All groups judged concurrently; blocks until done (or the step deadline)."""
        return self.submit_groups(groups).result()

    def submit_groups(self, groups: Sequence[tuple[str | None, list[str]]]) -> JudgeHandle:
        """Start judging ``groups`` without blocking; collect with ``handle.result()``.

        Groups of 0 or 1 solutions need no judge (one cluster); cached groups are answered at
        once; identical groups in one batch share one request.  Never raises.
        """
        groups = [(p, [str(t) for t in texts]) for p, texts in groups]
        handle = JudgeHandle(self, groups)
        c = self.config
        breaker_open = time.monotonic() < self._breaker_until
        try:
            for i, (problem, texts) in enumerate(groups):
                n = len(texts)
                if n <= 1:
                    handle._outcomes[i] = GroupOutcome([0] * n, "trivial")
                    continue
                key = cache_key(problem, texts, c.model, c.prompt_version, c.max_chars_per_solution)
                hit = self._cache.get(key, n)
                if hit is not None:
                    handle._cache_hits += 1
                    handle._outcomes[i] = GroupOutcome(canonical_labels(hit["labels"]), "cache", None,
                                                       list(hit.get("names", [])))
                    continue
                if breaker_open:
                    handle._outcomes[i] = GroupOutcome([], "fallback", "circuit_open",
                                                       detail="the judge failed a whole step recently")
                    continue
                handle._future_of[i] = key
                if key not in handle._requests:
                    req, joined = self._request_for(problem, texts, key)
                    handle._requests[key] = req
                    handle._joins += joined
                    req.future.add_done_callback(handle._mark_done)
        except Exception as e:  # noqa: BLE001 - e.g. the loop thread could not start
            for req in handle._requests.values():
                self._release(req)
            handle._requests.clear()
            handle._future_of = [None] * len(groups)
            handle._done = self._emergency(groups, e)
            handle._outcomes = [GroupOutcome(lab, "fallback", "internal", detail=repr(e)) for lab in handle._done]
        return handle

    def prefetch(self, groups: Sequence[tuple[str | None, list[str]]]) -> None:
        """Start judging ``groups`` and return at once, keeping no handle.

        A later ``partition_groups`` / ``submit_groups`` with the same groups joins the requests
        still in flight, or finds the answers in the cache: a trainer hook can call this as soon as
        a step's rewards are known and leave the ``prepare`` step unchanged.  A prefetched request
        is never cancelled for lack of holders: it runs to its end and fills the cache.  Its HTTP
        counts go to the handle that joins it, or (nobody joining) to the next ``pop_metrics``.
        """
        handle = self.submit_groups(groups)
        for req in handle._requests.values():
            with self._inflight_lock:
                req.holders -= 1  # the dropped handle holds nothing
            req.future.add_done_callback(lambda _f, r=req: self._record_orphan(r))

    def _open_breaker(self) -> None:
        if self.config.breaker_cooldown_s > 0:
            self._breaker_until = time.monotonic() + self.config.breaker_cooldown_s
            with self._mlock:
                self._m["breaker_trips"] += 1

    def _record_orphan(self, req: _Request) -> None:
        with self._inflight_lock:
            orphan = req.holders <= 0 and not req.recorded
            if orphan:
                req.recorded = True
        if orphan and not req.future.cancelled():
            try:
                self._record_call(req.future.result())
            except Exception:  # noqa: BLE001 - metrics only
                pass

    def pop_metrics(self) -> dict[str, float]:
        """Step metrics since the last call (keys in docs/judge.md); resets the counters."""
        with self._mlock:
            m = self._m
            self._reset_metrics()
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
            "judge/breaker_open": float(time.monotonic() < self._breaker_until),
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
        try:
            out.update(self._fallback.pop_metrics())
        except Exception:  # noqa: BLE001
            pass
        return out

    def close(self) -> None:
        """Stop the background loop and close connections (the instance can still be used: it restarts)."""
        with self._inflight_lock:
            self._inflight.clear()
        with self._loop_lock:
            if self._loop is not None:
                self._loop.stop(self._client)
                self._loop = None
                self._client = ChatClient(self.config, self._client._api_key)

    def __enter__(self) -> "JudgePartitioner":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ----------------------------------------------------------------- internals
    def _loop_thread(self) -> _LoopThread:
        with self._loop_lock:
            if self._loop is None:
                self._loop = _LoopThread()
            return self._loop

    async def _judge_one(self, problem: str | None, texts: list[str], key: str, stats: CallStats) -> _Pending:
        """One group on the loop: request, parse, cache.  Returns a result or a fault reason; never raises."""
        c = self.config
        t0 = time.perf_counter()
        try:
            messages = build_messages(problem, texts, c.max_chars_per_solution, c.prompt_version)
            reply = await self._client.complete(messages, stats)
            parsed = parse_reply(reply, len(texts), c.max_repair_fraction)
        except (JudgeFault, JudgeReplyError) as e:
            reason = e.reason
            if isinstance(e, JudgeReplyError) and reason == "malformed" and stats.finish_reason == "length":
                reason = "truncated"  # the reply hit max_tokens before its JSON was complete
            return _Pending(None, [], reason, time.perf_counter() - t0, stats, detail=e.detail)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001
            return _Pending(None, [], "internal", time.perf_counter() - t0, stats, detail=repr(e))
        self._cache.put(key, parsed.labels, parsed.names)
        return _Pending(parsed.labels, parsed.names, None, time.perf_counter() - t0, stats, parsed.repaired)

    def _request_for(self, problem: str | None, texts: list[str], key: str) -> tuple[_Request, bool]:
        """The in-flight request for ``key`` (joined), or a new one; returns ``(request, joined)``."""
        with self._inflight_lock:
            req = self._inflight.get(key)
            if req is not None and not req.future.done():
                req.holders += 1
                return req, True
            stats = CallStats()
            req = _Request(self._loop_thread().submit(self._judge_one(problem, texts, key, stats)), stats)
            self._inflight[key] = req
        req.future.add_done_callback(lambda _f: self._forget(key, req))
        return req, False

    def _forget(self, key: str, req: _Request) -> None:
        with self._inflight_lock:
            if self._inflight.get(key) is req:
                del self._inflight[key]

    def _release(self, req: _Request) -> bool:
        """Drop one holder; the last one cancels the request if unfinished.  Returns True for the last."""
        with self._inflight_lock:
            req.holders -= 1
            last = req.holders <= 0
        if last and not req.future.done():
            req.future.cancel()
        return last

    def _claim(self, req: _Request) -> bool:
        with self._inflight_lock:
            first = not req.recorded
            req.recorded = True
        return first

    def _fallback_labels(self, groups: list[tuple[str | None, list[str]]]) -> list[list[int]]:
        """The fallback partitioner's labels; if it fails too, one cluster per group (w = 1, plain GRPO)."""
        try:
            labels = [list(x) for x in self._fallback.partition_groups(groups)]
            if len(labels) != len(groups) or any(len(lab) != len(t) for lab, (_, t) in zip(labels, groups)):
                raise ValueError("fallback returned the wrong number of labels")
            return [canonical_labels(lab) for lab in labels]
        except Exception:  # noqa: BLE001
            with self._mlock:
                self._m["fallback_errors"] += 1
            return [[0] * len(t) for _, t in groups]

    def _emergency(self, groups: list[tuple[str | None, list[str]]], err: BaseException) -> list[list[int]]:
        with self._mlock:
            self._m["internal_errors"] += 1
            self._m["groups"] += sum(1 for _, t in groups if len(t) > 1)
            self._m["fallbacks"] += sum(1 for _, t in groups if len(t) > 1)
            self._m["reasons"]["internal"] = self._m["reasons"].get("internal", 0) + sum(
                1 for _, t in groups if len(t) > 1)
        return self._fallback_labels(groups)

    def _reset_metrics(self) -> None:
        self._m: dict[str, Any] = {
            "groups": 0, "requests": 0, "retries": 0, "cache_hits": 0, "fallbacks": 0, "repaired": 0,
            "wall_s": 0.0, "wait_s": 0.0, "reasons": {}, "latencies": [], "fallback_errors": 0, "joins": 0,
            "breaker_trips": 0,
            "internal_errors": 0,
        }

    def _record_call(self, p: _Pending) -> None:
        with self._mlock:
            self._m["requests"] += p.stats.requests
            self._m["retries"] += p.stats.retries
            if p.stats.requests:
                self._m["latencies"].append(p.latency_s)

    def _record_outcomes(self, outcomes: list[GroupOutcome], cache_hits: int, joins: int = 0) -> None:
        with self._mlock:
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

    def _record_wall(self, wall_s: float, wait_s: float) -> None:
        with self._mlock:
            self._m["wall_s"] += wall_s
            self._m["wait_s"] += wait_s


def shared_judge(cue: Any) -> JudgePartitioner:
    """One long-lived :class:`JudgePartitioner` per distinct ``algorithm.cue`` judge setting.

    Estimators are stateless and a ``prepare`` step runs every training step; building the judge
    anew each time would drop its cache, connection pool and loop thread.  This is
    :func:`verl_focal.partition.factory.partitioner_for` for the judge: the same instance for the
    same settings.
    """
    return partitioner_for(cue, "judge")  # type: ignore[return-value]


def fallback_kwargs_from_cue(cue: Any, fallback: str) -> dict[str, Any]:
    """Constructor arguments of the fallback partitioner, from the ``algorithm.cue`` section.

    :func:`verl_focal.partition.factory.partitioner_kwargs` without ``partitioner_kwargs`` (those
    belong to the judge-less configuration and are not reused).
    """
    return partitioner_kwargs(cue, fallback)
