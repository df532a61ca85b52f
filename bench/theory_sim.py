"""Per-step cost of the App. J simulation against a NumPy-only reference, same run.

    PYTHONPATH=$PWD python bench/theory_sim.py [--steps 10] [--n 2 1024 131072] [--threads 1]

For each group size N it times
  * ours: ``run_simulation`` on the paper's policy (128,000 actions) with 4 seeds x 2 gammas
    = 8 runs batched in one float64 torch computation (inverse-CDF sampling of sorted
    uniforms, sparse scatter of the sampled part, one fused dense pass for the rest);
  * reference: the same 8 runs one after another in plain NumPy: softmax, counts from
    ``Generator.multinomial``, then ``numpy_reference_step``,
and prints milliseconds per step (all 8 runs) and the speed-up ratio.  Timings on a
shared machine are noisy: compare the ratio, measured in the same process.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from verl_focal.lab.theory.sim import initial_logits, numpy_reference_step, paper_config, run_simulation


def reference_steps(cfg, n: int, steps: int) -> float:
    """Seconds for `steps` NumPy-only steps of every (seed, gamma) run."""
    z0 = initial_logits(cfg)
    runs = [(s, g) for s in cfg.seeds for g in cfg.gammas]
    zs = [z0.copy() for _ in runs]
    rngs = [np.random.default_rng([s, n]) for s, _ in runs]
    t0 = time.perf_counter()
    for _ in range(steps):
        for i, (_, gamma) in enumerate(runs):
            z = zs[i]
            pi = np.exp(z - z.max())
            pi /= pi.sum()
            counts = rngs[i].multinomial(n, pi).astype(np.float64)
            zs[i] = numpy_reference_step(z, counts, cfg.n_correct, cfg.eta, gamma)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--n", nargs="+", type=int, default=[2, 1024, 131072])
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s); 128,000 actions, 8 runs (4 seeds x 2 gammas)")
    print(f"{'N':>7} {'ours ms/step':>13} {'numpy ms/step':>14} {'speed-up':>9}")
    for n in args.n:
        cfg = paper_config(group_sizes=(n,), steps=args.steps, record_every=args.steps)
        run_simulation(paper_config(group_sizes=(n,), steps=1, record_every=1), progress=False)  # warm-up
        t0 = time.perf_counter()
        run_simulation(cfg, progress=False)
        ours = (time.perf_counter() - t0) / args.steps
        ref = reference_steps(cfg, n, args.steps) / args.steps
        print(f"{n:>7d} {ours * 1e3:>13.1f} {ref * 1e3:>14.1f} {ref / ours:>8.2f}x")


if __name__ == "__main__":
    main()
