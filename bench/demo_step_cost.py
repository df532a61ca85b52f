"""Cost of one demo RL step per arm, as a ratio to GRPO N=8 measured in the same run.

    PYTHONPATH=$PWD python bench/demo_step_cost.py [--steps 20] [--threads 1]

Each arm trains a copy of the same (briefly fitted) policy for --steps steps of 8
prompts; the first step is a warm-up and is not timed.  Ratios show what the
estimator (focal weight, cue partition + credit) and the group size cost on
top of rollout + loss.  Costs are this process's CPU time (time.process_time), which a
busy shared machine disturbs far less than wall time; run with --threads 1.
"""

from __future__ import annotations

import argparse
import copy
import time

import torch

from verl_focal.lab.demo.arms import ARM_SETS
from verl_focal.lab.demo.experiment import DemoConfig
from verl_focal.lab.demo.model import ModelSpec, build_model, build_tokenizer, sft
from verl_focal.lab.demo.rl import RLConfig, estimator_available, train_rl
from verl_focal.lab.demo.task import sft_examples, split_problems


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    train, held = split_problems(0, DemoConfig().unfamiliar_frac)
    tok = build_tokenizer()
    base = build_model(tok, ModelSpec(), seed=0)
    cfg = DemoConfig()
    sft(base, tok, sft_examples(train, cfg.prior, 5000, 0), 200, 128, cfg.sft_lr, 0)
    problems = sorted(train + held)  # RL trains on the familiar and the unfamiliar problems
    per_step = {}
    for arm in ARM_SETS["all"]:
        name = arm.name
        if not arm.trained:  # the output mixture's points are computed, not trained: no RL step
            continue
        if not estimator_available(arm.estimator):
            print(f"{name:<30} skipped (estimator {arm.estimator!r} not registered)")
            continue
        model = copy.deepcopy(base)
        train_rl(model, tok, problems, arm, RLConfig(steps=1, lr=cfg.lr), seed=0)  # warm-up
        t0 = time.process_time()
        train_rl(model, tok, problems, arm, RLConfig(steps=args.steps, lr=cfg.lr), seed=1)
        per_step[name] = (time.process_time() - t0) / args.steps
    ref = per_step.get("GRPO N=8")
    print(f"{'arm':<30} {'cpu s/step':>10} {'x GRPO N=8':>11}")
    for name, s in per_step.items():
        print(f"{name:<30} {s:10.3f} {s / ref if ref else float('nan'):11.2f}")


if __name__ == "__main__":
    main()
