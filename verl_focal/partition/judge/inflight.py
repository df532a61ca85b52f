"""Judge requests in flight, shared by every handle that waits on the same group.

A group submitted again while its request is still running joins that request instead of
sending another (:meth:`InflightRegistry.acquire`).  Each waiting handle is a *holder*:

* the last holder to give up on an unfinished request cancels it (:meth:`release`);
* a prefetch drops its hold without ever cancelling (:meth:`detach`): the request runs to
  its end and fills the reply cache;
* a request's HTTP counts are recorded once (:meth:`claim`), by whoever sees it first.

Pure Python: no verl import.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from verl_focal.partition.judge.client import CallStats

__all__ = ["Request", "InflightRegistry"]


@dataclass
class Request:
    """One network call and the handles holding it."""

    future: concurrent.futures.Future
    stats: CallStats
    holders: int = 1
    recorded: bool = False


class InflightRegistry:
    """Requests by cache key while they run; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_key: dict[str, Request] = {}

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_key)

    def acquire(self, key: str, start: Callable[[CallStats], concurrent.futures.Future]) -> tuple[Request, bool]:
        """Hold the running request for ``key``, or ``start(stats)`` a new one; returns ``(request, joined)``."""
        with self._lock:
            req = self._by_key.get(key)
            if req is not None and not req.future.done():
                req.holders += 1
                return req, True
            stats = CallStats()
            req = Request(start(stats), stats)
            self._by_key[key] = req
        req.future.add_done_callback(lambda _f: self._forget(key, req))
        return req, False

    def release(self, req: Request) -> bool:
        """Drop one holder; the last one cancels the request if unfinished.  True for the last holder."""
        with self._lock:
            req.holders -= 1
            last = req.holders <= 0
        if last and not req.future.done():
            req.future.cancel()
        return last

    def claim(self, req: Request) -> bool:
        """True exactly once per request: for the caller that records its HTTP counts."""
        with self._lock:
            first = not req.recorded
            req.recorded = True
        return first

    def detach(self, req: Request, record: Callable[[Any], None]) -> None:
        """Drop one holder without cancelling.  If nobody holds the request when it finishes and
        nobody claimed it, ``record(result)`` is called with its result (errors ignored)."""
        with self._lock:
            req.holders -= 1

        def on_done(_f: concurrent.futures.Future) -> None:
            with self._lock:
                orphan = req.holders <= 0 and not req.recorded
                if orphan:
                    req.recorded = True
            if orphan and not req.future.cancelled():
                try:
                    record(req.future.result())
                except Exception:  # noqa: BLE001 - metrics only
                    pass

        req.future.add_done_callback(on_done)

    def clear(self) -> None:
        """Forget every request (they keep running; nobody new can join them)."""
        with self._lock:
            self._by_key.clear()

    def _forget(self, key: str, req: Request) -> None:
        with self._lock:
            if self._by_key.get(key) is req:
                del self._by_key[key]
