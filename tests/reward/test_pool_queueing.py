"""KillablePool's hard time-out counts from when a job starts in a worker, not from when it was submitted.

verl's reward loop calls the scorer from up to 32 executor threads into a pool of a few processes, so
calls wait in the queue.  A wait is not a stuck check: it must neither time out nor kill the worker
that is busy with another call (docs/gpu-readiness finding 4, test T5).
"""

import concurrent.futures as cf
import os
import threading
import time

from verl_focal.pool import KillablePool


def test_queued_calls_do_not_time_out_nor_kill_the_busy_worker():
    """1 worker, 4 threads, 0.9 s jobs under a 2 s bound: the last call waits 2.7 s in the queue, yet
    runs for 0.9 s only.  Before the fix, the 3rd and 4th calls timed out and the worker was killed."""
    pool = KillablePool("t", 1)
    try:
        warm_pid, failed = pool.run(os.getpid, (), hard_timeout_s=60.0)  # the worker is up before the clock
        assert failed is False
        t0 = time.monotonic()
        with cf.ThreadPoolExecutor(max_workers=4) as ex:
            results = list(ex.map(lambda _: pool.run(time.sleep, (0.9,), hard_timeout_s=2.0), range(4)))
        elapsed = time.monotonic() - t0
        assert results == [(None, False)] * 4  # time.sleep returns None; no call reported a time-out
        assert elapsed >= 4 * 0.9  # one worker ran them one after the other
        # the same process ran them all: the worker was never killed, the pool never rebuilt
        assert pool.run(os.getpid, (), hard_timeout_s=60.0) == (warm_pid, False)
    finally:
        pool.shutdown()


def test_a_stuck_job_times_out_its_worker_is_replaced_and_the_queued_call_runs():
    """A job that never ends is cut at its bound, counted from its own start; its worker is replaced and
    the call queued behind it runs in the new worker (and is not counted as timed out)."""
    pool = KillablePool("t", 1)
    try:
        warm_pid, _ = pool.run(os.getpid, (), hard_timeout_s=60.0)
        out: dict = {}

        def stuck():
            t = time.monotonic()
            out["stuck"] = pool.run(time.sleep, (5.0,), hard_timeout_s=1.0)
            out["stuck_s"] = time.monotonic() - t

        th = threading.Thread(target=stuck)
        th.start()
        time.sleep(0.3)  # the stuck job is running; the next call waits behind it
        out["next"] = pool.run(os.getpid, (), hard_timeout_s=1.0)
        th.join()
        assert out["stuck"] == (None, True)  # cut at 1 s; had it waited for the sleep it would be (None, False)
        assert 1.0 <= out["stuck_s"] < 5.0, out
        new_pid, failed = out["next"]
        assert failed is False and new_pid != warm_pid  # ran, in the replacement worker
        assert pool.run(divmod, (7, 2), hard_timeout_s=60.0) == ((3, 1), False)
    finally:
        pool.shutdown()
