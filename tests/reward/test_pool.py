"""verl_focal.pool.KillablePool: the one process pool behind the maths and IFEval/SynLogic scorers."""

import os
import subprocess
import sys
import textwrap
import time

from verl_focal.pool import KillablePool


def test_a_stuck_worker_is_killed_and_the_pool_rebuilt():
    pool = KillablePool("test", 1)
    try:
        # (None, True): killed at the bound; had it waited for the sleep, it would be (None, False)
        assert pool.run(time.sleep, (120,), hard_timeout_s=1.0) == (None, True)
        assert pool.run(divmod, (7, 2), hard_timeout_s=60.0) == ((3, 1), False)
    finally:
        pool.shutdown()


def test_a_dying_worker_is_retried_once_then_reported():
    pool = KillablePool("test", 1)
    try:
        assert pool.run(os._exit, (3,), hard_timeout_s=60.0) == (None, True)  # broke on both tries
        assert pool.run(divmod, (9, 4), hard_timeout_s=60.0) == ((2, 1), False)
    finally:
        pool.shutdown()


def test_exit_is_quiet_after_scoring_from_a_thread():
    """verl calls the scorer from executor threads; the interpreter must exit without
    'Exception ignored in ...' noise from the pools' teardown."""
    script = textwrap.dedent(
        r"""
        import threading
        from verl_focal.reward import compute_score
        from verl_focal.ood.runner import score_ood

        def go(out):
            out["m"] = compute_score("math", r"\boxed{2}", "2")
            gt = '{"task": "operation", "answer": "1", "metadata": {}}'
            out["s"] = score_ood("synlogic", "verl_focal/synlogic", r"\boxed{1}", gt, timeout_s=5.0,
                                 hard_timeout_s=60.0)

        if __name__ == "__main__":
            out = {}
            t = threading.Thread(target=go, args=(out,))
            t.start()
            t.join()
            print("acc", out["m"]["acc"], out["s"]["acc"])
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "acc 1.0 1.0" in proc.stdout  # both pools ran a check
    assert "Exception ignored" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-2000:]
