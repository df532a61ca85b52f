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

import numpy as np

from verl_focal.eval import DEFAULT_KS, paired_subsampling_test, pass_at_k_curve


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

    t = time.perf_counter()
    fast = pass_at_k_curve(a.n, ca, ks)
    t_fast = time.perf_counter() - t
    t = time.perf_counter()
    slow = loop_curve(a.n, ca, ks)
    t_slow = time.perf_counter() - t
    err = float(np.max(np.abs(np.array(slow) - fast.values)))
    print(f"pass@k curve (k={ks[0]}..{ks[-1]}, {len(ks)} points), {a.problems} problems x n={a.n}")
    print(f"  vectorised {t_fast*1e3:9.1f} ms | math.comb loop {t_slow*1e3:9.1f} ms | ratio {t_slow/t_fast:7.1f}x | max |diff| {err:.1e}")

    t = time.perf_counter()
    res = paired_subsampling_test(a.n, ca, a.n, cb, ks=[a.m], m=a.m, iterations=a.iterations, seed=a.seed)
    t_sig = time.perf_counter() - t
    # naive baseline needs the sample-level matrices
    correct_a = np.zeros((a.problems, a.n), dtype=bool)
    correct_b = np.zeros((a.problems, a.n), dtype=bool)
    for j in range(a.problems):
        correct_a[j, rng.permutation(a.n)[: ca[j]]] = True
        correct_b[j, rng.permutation(a.n)[: cb[j]]] = True
    t = time.perf_counter()
    for _ in range(a.loop_iterations):
        loop_significance_iter(correct_a, correct_b, a.m, a.m, rng)
    t_loop = (time.perf_counter() - t) / a.loop_iterations * a.iterations
    r = res[0]
    print(f"significance pass@{a.m} (m={a.m}, {a.iterations} iterations), {a.problems} problems")
    print(f"  vectorised {t_sig:9.2f} s  | naive loop (extrapolated from {a.loop_iterations} it.) {t_loop:9.0f} s | ratio {t_loop/t_sig:7.0f}x")
    print(f"  delta={r.delta:+.4f} CI=[{r.ci_low:+.4f}, {r.ci_high:+.4f}] p={r.p_value:.4f}")
    # the report's use: every grid k <= m on one MATH500-sized benchmark (general, non-binary path)
    P = min(500, a.problems)
    t = time.perf_counter()
    paired_subsampling_test(a.n, ca[:P], a.n, cb[:P], ks=ks, m=a.m, iterations=a.iterations, seed=a.seed)
    t_grid = time.perf_counter() - t
    print(f"significance at all {len(ks)} grid ks, {P} problems, {a.iterations} iterations: {t_grid:.2f} s")
    per_it = t_sig / a.iterations / a.problems * 1e9
    print(f"  {per_it:.0f} ns per (iteration, problem) for both runs -> 500 problems x 50,000 iterations: {per_it*500*50_000/1e9:.1f} s")


if __name__ == "__main__":
    main()
