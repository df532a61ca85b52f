"""``verl-focal demo``: the CPU-scale RLVR experiment (GRPO vs F-GRPO vs Cue-GRPO).

    verl-focal demo                  # default run, a few minutes on 2 CPU cores
    verl-focal demo --quick          # smoke run (CI): training runs, losses finite, report complete
    verl-focal demo --device cuda    # the scaled-up configuration on a GPU

Writes results.json, report.md and PNG plots under ``--out``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true", help="smoke run (<= 60 s): one seed, 2 RL steps per arm")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="cpu: the default CPU run; cuda: the scaled-up configuration (bigger model, more steps and seeds)")
    parser.add_argument("--out", default="outputs/demo", help="output folder for report.md, results.json and plots (default: outputs/demo)")
    parser.add_argument("--seeds", type=int, nargs="+", default=None, help="RL seeds (default: 0 1 2; cuda: 0..4; quick: 0)")
    parser.add_argument("--steps", type=int, default=None, help="override the number of RL steps per run")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch CPU threads (default 1: on a shared 2-core machine one thread is faster)")
    parser.add_argument("--no-progress", action="store_true", help="disable the tqdm progress bar")


def _check_complete(results: dict, paths: dict[str, str]) -> list[str]:
    """What --quick asserts: training ran, every loss finite, every report file present and non-empty."""
    problems = []
    if not results["runs"]:
        problems.append("no RL run finished")
    for r in results["runs"]:
        if not r["history"]:
            problems.append(f"{r['arm']} seed {r['seed']}: no RL step recorded")
        if not all(math.isfinite(h["loss"]) for h in r["history"]):
            problems.append(f"{r['arm']} seed {r['seed']}: non-finite loss")
    for name, p in paths.items():
        if not os.path.isfile(p) or os.path.getsize(p) == 0:
            problems.append(f"report file missing or empty: {p}")
    return problems


def run(args: argparse.Namespace) -> int:
    from verl_focal.demo.experiment import preset, run_experiment
    from verl_focal.demo.report import write_report

    if args.quick and args.device == "cuda":
        print("verl-focal demo: --quick and --device cuda are separate modes; choose one", file=sys.stderr)
        return 2
    cfg = preset("quick" if args.quick else ("cuda" if args.device == "cuda" else "default"))
    if args.seeds is not None:
        cfg.seeds = tuple(args.seeds)
    if args.steps is not None:
        if args.steps < 1:
            print(f"verl-focal demo: --steps={args.steps} must be >= 1", file=sys.stderr)
            return 2
        cfg.rl_steps = args.steps
    if args.threads is not None:
        cfg.threads = args.threads
    try:
        cfg.validate()
    except ValueError as e:
        print(f"verl-focal demo: {e}", file=sys.stderr)
        return 2

    factory = None
    if not args.no_progress:
        from tqdm import tqdm

        factory = lambda total: tqdm(total=total, unit="step", dynamic_ncols=True)  # noqa: E731
    results = run_experiment(cfg, progress_factory=factory)
    paths = write_report(results, args.out)
    problems = _check_complete(results, paths)
    with open(paths["report.md"]) as f:
        print(f.read())
    print(f"report written to {os.path.abspath(args.out)}")
    if problems:
        for p in problems:
            print(f"verl-focal demo: FAILED: {p}", file=sys.stderr)
        return 1
    return 0
