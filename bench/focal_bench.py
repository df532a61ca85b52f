"""Time f_grpo against verl's grpo and grpo_vectorized in the same run.

    python bench/focal_bench.py [--repeats 5]

Batch: B rows = B/8 prompts x N=8 responses, response length 512, 0/1 rewards,
2 padding rows.  Prints median wall times and the ratios the foundation issue
targets: f_grpo <= 1.5x grpo_vectorized, and >= 5x faster than grpo at 16,384 rows.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch
import verl  # noqa: F401  (registers f_grpo through the entry point)
from omegaconf import OmegaConf
from verl.trainer.ppo import core_algos


def make_batch(rows: int, length: int = 512, n: int = 8, seed: int = 0):
    rng = np.random.default_rng(seed)
    index = np.array([f"uid-{i // n}" for i in range(rows)], dtype=object)
    lengths = torch.as_tensor(rng.integers(16, length + 1, size=rows))
    mask = (torch.arange(length)[None, :] < lengths[:, None]).float()
    mask[-2:] = 0  # padding rows
    index[-2:] = ["pad-0", "pad-1"]
    rewards = torch.zeros(rows, length)
    rewards[torch.arange(rows), lengths - 1] = torch.as_tensor(rng.integers(0, 2, rows), dtype=torch.float32)
    return rewards * mask, mask, index


def timeit(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1024, 16384])
    args = ap.parse_args()
    cfg = OmegaConf.create({"focal": {"gamma": 0.5}, "norm_adv_by_std_in_grpo": True})
    f_grpo = core_algos.get_adv_estimator_fn("f_grpo")
    grpo_vec = core_algos.get_adv_estimator_fn("grpo_vectorized")
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}")
    print(f"{'rows':>6} {'grpo (s)':>10} {'grpo_vec (s)':>13} {'f_grpo (s)':>11} {'f/vec':>7} {'grpo/f':>7}")
    for rows in args.sizes:
        r, m, idx = make_batch(rows)
        # each lambda runs (and is timed) within this iteration: bind this size's batch explicitly
        t_grpo = timeit(lambda r=r, m=m, idx=idx: core_algos.compute_grpo_outcome_advantage(r, m, idx),
                        max(1, args.repeats // 2))
        t_vec = timeit(lambda r=r, m=m, idx=idx: grpo_vec(r, m, index=idx, config=cfg), args.repeats)
        t_f = timeit(lambda r=r, m=m, idx=idx: f_grpo(r, m, index=idx, config=cfg), args.repeats)
        print(f"{rows:>6} {t_grpo:>10.4f} {t_vec:>13.4f} {t_f:>11.4f} {t_f / t_vec:>7.2f} {t_grpo / t_f:>7.1f}")


if __name__ == "__main__":
    main()
