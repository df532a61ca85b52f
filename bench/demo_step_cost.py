"""Cost of one demo RL step per arm, as a ratio to GRPO N=8 measured in the same run.

    PYTHONPATH=$PWD python bench/demo_step_cost.py [--steps 20] [--threads 1]

Each arm trains a copy of the same (briefly fitted) policy for --steps steps of 8
prompts; the first step is a warm-up and is not timed.  Ratios show what the
estimator (focal weight, cue partition + credit) and the group size cost on
top of rollout + loss.  Machine load changes the absolute numbers, not much the ratios.
"""

from __future__ import annotations

import argparse
import copy
import time

import torch

from verl_focal.demo.experiment import DEFAULT_ARMS
from verl_focal.demo.model import ModelSpec, build_model, build_tokenizer, sft
from verl_focal.demo.rl import Arm, RLConfig, estimator_available, train_rl
from verl_focal.demo.task import sft_examples, split_problems


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    train, _ = split_problems(0)
    tok = build_tokenizer()
    base = build_model(tok, ModelSpec(), seed=0)
    sft(base, tok, sft_examples(train, {"add": 0.7, "sub": 0.22, "mul": 0.08}, 5000, 0), 60, 128, 3e-3, 0)
    per_step = {}
    for name, est, n, g, a in DEFAULT_ARMS:
        if not estimator_available(est):
            print(f"{name:<20} skipped (estimator {est!r} not registered)")
            continue
        arm = Arm(name, est, n, g, a)
        model = copy.deepcopy(base)
        train_rl(model, tok, train, arm, RLConfig(steps=1), seed=0)  # warm-up
        t0 = time.perf_counter()
        train_rl(model, tok, train, arm, RLConfig(steps=args.steps), seed=1)
        per_step[name] = (time.perf_counter() - t0) / args.steps
    ref = per_step.get("GRPO N=8")
    print(f"{'arm':<20} {'s/step':>8} {'x GRPO N=8':>11}")
    for name, s in per_step.items():
        print(f"{name:<20} {s:8.3f} {s / ref if ref else float('nan'):11.2f}")


if __name__ == "__main__":
    main()
