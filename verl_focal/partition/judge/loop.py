"""The judge's background event loop: one daemon thread running one asyncio loop.

Started on the first :meth:`EventLoopThread.submit`, stopped by :meth:`EventLoopThread.stop`
(which cancels what still runs), started again by the next ``submit``.  Pure Python: no verl import.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

__all__ = ["EventLoopThread"]


class EventLoopThread:
    """Runs coroutines from any thread on one private asyncio loop."""

    def __init__(self, name: str = "verl-focal-judge") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def submit(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future:
        """Schedule ``coro`` on the loop (starting it if needed); its result arrives in the returned future."""
        with self._lock:
            if self._loop is None:
                try:
                    self._start()
                except BaseException:
                    coro.close()  # never scheduled: do not leave it "never awaited"
                    raise
            return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def stop(self, cleanup: Callable[[], Awaitable[None]] | None = None) -> bool:
        """Cancel every task on the loop, await ``cleanup()`` there, and stop the thread.

        Returns False when the loop was not running (nothing to do).  Never raises.
        """
        with self._lock:
            loop, thread = self._loop, self._thread
            if loop is None or thread is None:
                return False
            self._loop = self._thread = None

            async def shutdown() -> None:
                tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
                for t in tasks:
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                if cleanup is not None:
                    await cleanup()

            try:
                asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout=5)
            except Exception:  # noqa: BLE001 - shutting down; nothing to save
                pass
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
            if not thread.is_alive():
                loop.close()
            return True

    def _start(self) -> None:
        loop = asyncio.new_event_loop()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_forever()

        self._thread = threading.Thread(target=run, name=self._name, daemon=True)
        self._thread.start()
        self._loop = loop
