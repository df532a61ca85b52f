"""The ``judge`` partitioner: an LLM groups a group's correct solutions by strategy.

Cue-GRPO's "CR under Judge Partitions" (arXiv 2608.03467; docs/methods.md §7): the clusters
C_1..C_m of the credit rule come from a judge model that reads the problem and the correct
solutions.  This module never raises into a training step: any fault of the judge for one
group (timeout, refused or dropped connection, 429, 5xx, malformed / empty / unusable reply,
step deadline) replaces that group's partition by the configured fallback partitioner's, and
is counted.

Overlap: :meth:`JudgePartitioner.submit_groups` returns at once with a
:class:`~verl_focal.partition.judge.handle.JudgeHandle`; the requests run on a background
event loop while the caller does other work (e.g. the old-log-prob pass), and
``handle.result()`` collects them.  :meth:`partition_groups` is
``submit_groups(groups).result()``.  A group submitted again while its request is still in
flight joins that request (:meth:`JudgePartitioner.prefetch` relies on this: fire early, and
the unchanged ``prepare`` step later joins or hits the cache).  The cache key of a group is a
SHA-256 over its texts (tens of kB per solution); the keys of the groups the last ``prefetch``
sent are kept until the next submission of groups, which looks them up by the texts instead of
hashing them again (on the trainer's path, that was 0.1 s per step at 2,048 x 8,192).

The parts, one module each: the loop thread (:mod:`.loop`), the in-flight registry
(:mod:`.inflight`), the metrics counters (:mod:`.metrics`), the circuit breaker
(:mod:`.breaker`) and the handle (:mod:`.handle`); this class wires them together and makes
each group's request (prompt, HTTP call, reply parsing, cache).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from verl_focal.partition.base import Partitioner, canonical_labels, get_partitioner, register_partitioner
from verl_focal.partition.judge.breaker import CircuitBreaker
from verl_focal.partition.judge.cache import PartitionCache, cache_key
from verl_focal.partition.judge.client import CallStats, ChatClient, JudgeFault
from verl_focal.partition.judge.config import JudgeConfig, coerce_judge_config, missing_key_line
from verl_focal.partition.judge.handle import Group, HandleServices, JudgeHandle
from verl_focal.partition.judge.inflight import InflightRegistry
from verl_focal.partition.judge.loop import EventLoopThread
from verl_focal.partition.judge.metrics import JudgeMetrics
from verl_focal.partition.judge.outcome import CallResult, GroupOutcome
from verl_focal.partition.judge.parsing import JudgeReplyError, parse_reply
from verl_focal.partition.judge.prompt import build_messages

__all__ = ["JudgePartitioner"]


@register_partitioner("judge")
class JudgePartitioner(Partitioner):
    """Partition by an OpenAI-compatible judge model; see the module docstring and docs/judge.md.

    Build with ``JudgePartitioner(config)`` (a :class:`JudgeConfig`, mapping or OmegaConf node
    of ``algorithm.cue.judge``) and/or keyword overrides of its fields.  The fallback is
    ``fallback_partitioner`` when given (the factory, :func:`verl_focal.partition.factory.partitioner_for`,
    hands in one built from the ``algorithm.cue`` section), else the registered ``config.fallback``
    built with ``fallback_kwargs``.  Build once and reuse: the instance holds the cache, the
    connection pool and a background event-loop thread (:meth:`close` stops it).
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
        self._api_key = None
        if c.api_key_env:
            self._api_key = os.environ.get(c.api_key_env)
            if not self._api_key:
                raise ValueError(missing_key_line(c.api_key_env))
        self._client = ChatClient(c, self._api_key)
        # an instance handed in (e.g. the caller's own cached strategy_cue) wins over name + kwargs
        self._fallback = fallback_partitioner or get_partitioner(c.fallback, **self.fallback_kwargs)
        self._cache = PartitionCache(c.cache_max_entries, c.cache_dir)
        self._loop = EventLoopThread()
        #: requests in flight, shared by the handles waiting on them
        self.inflight = InflightRegistry()
        self.metrics = JudgeMetrics()
        self.breaker = CircuitBreaker(c.breaker_cooldown_s)
        self._services = HandleServices(self.inflight, self.metrics, self.breaker, self._fallback_labels)
        #: the cache keys of the groups the last :meth:`prefetch` sent, by (problem, texts, key settings);
        #: the next :meth:`submit_groups` reads them and drops them (so no texts outlive the step)
        self._prefetched_keys: dict[tuple, str] = {}
        self._keys_lock = threading.Lock()

    @property
    def fallback_partitioner(self) -> Partitioner:
        """The partitioner that answers a group whose judge request failed."""
        return self._fallback

    def __repr__(self) -> str:
        c = self.config
        return (f"JudgePartitioner(base_url={c.base_url!r}, model={c.model!r}, api_key_env={c.api_key_env!r}, "
                f"fallback={c.fallback!r})")

    # ----------------------------------------------------------------- public API
    def partition(self, texts: list[str], problem: str | None = None) -> list[int]:
        return self.partition_groups([(problem, list(texts))])[0]

    def partition_groups(self, groups: Sequence[Group]) -> list[list[int]]:
        """All groups judged concurrently; blocks until done (or the step deadline)."""
        return self.submit_groups(groups).result()

    def submit_groups(self, groups: Sequence[Group]) -> JudgeHandle:
        """Start judging ``groups`` without blocking; collect with ``handle.result()``.

        Groups of 0 or 1 solutions need no judge (one cluster); cached groups are answered at
        once; identical groups in one batch share one request.  Never raises.
        """
        with self._keys_lock:
            known, self._prefetched_keys = self._prefetched_keys, {}
        return self._submit(groups, known, None)

    def _submit(self, groups: Sequence[Group], known: dict[tuple, str], sent: dict[tuple, str] | None) -> JudgeHandle:
        """:meth:`submit_groups`, each cache key taken from ``known`` when there (else hashed), and recorded
        in ``sent`` when given."""
        groups = [(p, [str(t) for t in texts]) for p, texts in groups]
        c = self.config
        handle = JudgeHandle(groups, c.derived_deadline_s(), self._services)
        breaker_open = self.breaker.is_open()
        settings = (c.model, c.prompt_version, c.max_chars_per_solution)
        try:
            for i, (problem, texts) in enumerate(groups):
                n = len(texts)
                if n <= 1:
                    handle.answer(i, GroupOutcome([0] * n, "trivial"))
                    continue
                ident = (problem, tuple(texts), settings)  # the same str objects: hashed once, compared by identity
                key = known.get(ident)
                if key is None:
                    key = cache_key(problem, texts, *settings)
                if sent is not None:
                    sent[ident] = key
                hit = self._cache.get(key, n)
                if hit is not None:
                    handle.answer(i, GroupOutcome(canonical_labels(hit["labels"]), "cache", None,
                                                  list(hit.get("names", []))))
                elif breaker_open:
                    handle.answer(i, GroupOutcome([], "fallback", "circuit_open",
                                                  detail="the judge failed a whole step recently"))
                else:
                    handle.wait_for(i, key, lambda stats, p=problem, t=texts, k=key:
                                    self._loop.submit(self._judge_one(p, t, k, stats)))
        except Exception as e:  # noqa: BLE001 - e.g. the loop thread could not start
            handle.abort(e)
        return handle

    def prefetch(self, groups: Sequence[Group]) -> None:
        """Start judging ``groups`` and return at once, keeping no handle.

        A later ``partition_groups`` / ``submit_groups`` with the same groups joins the requests
        still in flight, or finds the answers in the cache: a trainer hook can call this as soon as
        a step's rewards are known and leave the ``prepare`` step unchanged.  The next submission
        finds these groups' cache keys without hashing their texts again.  A prefetched request
        is never cancelled for lack of holders: it runs to its end and fills the cache.  Its HTTP
        counts go to the handle that joins it, or (nobody joining) to the next ``pop_metrics``.
        """
        sent: dict[tuple, str] = {}
        self._submit(groups, {}, sent).detach()
        with self._keys_lock:
            self._prefetched_keys = sent

    def pop_metrics(self) -> dict[str, float]:
        """Step metrics since the last call (keys in docs/judge.md); resets the counters."""
        out = self.metrics.pop(breaker_open=self.breaker.is_open())
        try:
            out.update(self._fallback.pop_metrics())
        except Exception:  # noqa: BLE001
            pass
        return out

    def close(self) -> None:
        """Stop the background loop and close connections (the instance can still be used: it restarts)."""
        self.inflight.clear()
        with self._keys_lock:
            self._prefetched_keys = {}
        if self._loop.stop(cleanup=self._client.aclose):
            self._client = ChatClient(self.config, self._api_key)

    def __enter__(self) -> JudgePartitioner:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ----------------------------------------------------------------- internals
    async def _judge_one(self, problem: str | None, texts: list[str], key: str, stats: CallStats) -> CallResult:
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
            return CallResult(None, [], reason, time.perf_counter() - t0, stats, detail=e.detail)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001
            return CallResult(None, [], "internal", time.perf_counter() - t0, stats, detail=repr(e))
        self._cache.put(key, parsed.labels, parsed.names)
        return CallResult(parsed.labels, parsed.names, None, time.perf_counter() - t0, stats, parsed.repaired)

    def _fallback_labels(self, groups: list[Group]) -> list[list[int]]:
        """The fallback partitioner's labels; if it fails too, one cluster per group (w = 1, plain GRPO)."""
        try:
            labels = [list(x) for x in self._fallback.partition_groups(groups)]
            if len(labels) != len(groups) or any(len(lab) != len(t) for lab, (_, t) in zip(labels, groups)):
                raise ValueError("fallback returned the wrong number of labels")
            return [canonical_labels(lab) for lab in labels]
        except Exception:  # noqa: BLE001
            self.metrics.record_fallback_error()
            return [[0] * len(t) for _, t in groups]

