"""Time pass@k curves and the significance test against straightforward loops.

Synthetic result: P problems x n samples (default 10,000 x 1,024).  Baselines,
measured in the same run:

* pass@k: a per-problem Python loop over ``1 - math.comb(n-c, k) / math.comb(n, k)``
  (exact integers, then a float division) for every k of the curve;
* significance: a per-iteration loop that subsamples m of n sample indices per
  problem with ``rng.choice`` and recounts -- timed on a few iterations and
  extrapolated to the full iteration count.

Usage:  PYTHONPATH=$PWD python bench/eval_passk.py [--problems 10000] [--n 1024]
"""

from __future__ import annotations

import argparse
import math
import time
from contextlib import contextmanager

import numpy as np

from verl_focal.lab.eval import DEFAULT_KS, paired_subsampling_test, pass_at_k_curve


@contextmanager
def timed(store: dict, key: str):
    """Wall and CPU (process) seconds: on a shared machine the CPU time is the steadier number."""
    w, c = time.perf_counter(), time.process_time()
    yield
    store[key] = (time.perf_counter() - w, time.process_time() - c)


def loop_curve(n: int, c: np.ndarray, ks) -> list[float]:
    out = []
    for k in ks:
        denom = math.comb(n, k)
        out.append(sum(1 - math.comb(n - int(ci), k) / denom for ci in c) / len(c))
    return out


def loop_significance_iter(correct_a: np.ndarray, correct_b: np.ndarray, m: int, k: int, rng) -> float:
    """One iteration of the naive subsampling test: explicit index draws per problem."""
    n = correct_a.shape[1]
    denom = math.comb(m, k)
    tot = 0.0
    for j in range(correct_a.shape[0]):
        ia = rng.choice(n, m, replace=False)
        ib = rng.choice(n, m, replace=False)
        ca, cb = int(correct_a[j, ia].sum()), int(correct_b[j, ib].sum())
        tot += (1 - math.comb(m - cb, k) / denom) - (1 - math.comb(m - ca, k) / denom)
    return tot / correct_a.shape[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", type=int, default=10_000)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--m", type=int, default=256)
    ap.add_argument("--iterations", type=int, default=50_000)
    ap.add_argument("--loop-iterations", type=int, default=2, help="naive-significance iterations actually timed")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    rng = np.random.default_rng(a.seed)
    p = rng.beta(0.3, 0.6, a.problems)
    ca = rng.binomial(a.n, p)
    cb = rng.binomial(a.n, np.minimum(1, p * 1.02))
    ks = [k for k in DEFAULT_KS if k <= a.m]

    T: dict[str, tuple[float, float]] = {}
    with timed(T, "curve"):
        fast = pass_at_k_curve(a.n, ca, ks)
    with timed(T, "curve_loop"):
        slow = loop_curve(a.n, ca, ks)
    err = float(np.max(np.abs(np.array(slow) - fast.values)))
    (w1, c1), (w0, c0) = T["curve"], T["curve_loop"]
    print(f"pass@k curve (k={ks[0]}..{ks[-1]}, {len(ks)} points), {a.problems} problems x n={a.n}   [wall | cpu]")
    print(f"  vectorised {w1*1e3:8.1f} | {c1*1e3:8.1f} ms   math.comb loop {w0*1e3:8.1f} | {c0*1e3:8.1f} ms   "
          f"ratio {w0/w1:6.1f}x | {c0/c1:6.1f}x   max |diff| {err:.1e}")

    with timed(T, "sig"):
        res = paired_subsampling_test(a.n, ca, a.n, cb, ks=[a.m], m=a.m, iterations=a.iterations, seed=a.seed)
    # naive baseline needs the sample-level matrices
    correct_a = np.zeros((a.problems, a.n), dtype=bool)
    correct_b = np.zeros((a.problems, a.n), dtype=bool)
    for j in range(a.problems):
        correct_a[j, rng.permutation(a.n)[: ca[j]]] = True
        correct_b[j, rng.permutation(a.n)[: cb[j]]] = True
    with timed(T, "sig_loop"):
        for _ in range(a.loop_iterations):
            loop_significance_iter(correct_a, correct_b, a.m, a.m, rng)
    scale = a.iterations / a.loop_iterations
    (w1, c1), (w0, c0) = T["sig"], T["sig_loop"]
    w0, c0 = w0 * scale, c0 * scale
    r = res[0]
    print(f"significance pass@{a.m} (m={a.m}, {a.iterations} iterations), {a.problems} problems   [wall | cpu]")
    print(f"  vectorised {w1:8.2f} | {c1:8.2f} s   naive loop (extrapolated from {a.loop_iterations} it.) "
          f"{w0:9.0f} | {c0:9.0f} s   ratio {w0/w1:7.0f}x | {c0/c1:7.0f}x")
    print(f"  delta={r.delta:+.4f} CI=[{r.ci_low:+.4f}, {r.ci_high:+.4f}] p={r.p_value:.4f}")

    # the report's use: every grid k <= m on one MATH500-sized benchmark (general path)
    P = min(500, a.problems)
    with timed(T, "grid"):
        paired_subsampling_test(a.n, ca[:P], a.n, cb[:P], ks=ks, m=a.m, iterations=a.iterations, seed=a.seed)
    w, c = T["grid"]
    print(
        f"significance at all {len(ks)} grid ks, {P} problems, {a.iterations} iterations: "
        f"{w:.2f} s wall | {c:.2f} s cpu"
    )


if __name__ == "__main__":
    main()
