"""``verl-focal eval frontier``: the equal-pass@k comparison of methods with control families on scored runs.

    verl-focal eval frontier --families families.yaml --runs scored/ --out-dir frontier/
    verl-focal eval frontier --families families.yaml --runs dumps/ --step 300 --y pass@64 --benchmark ood ...
    verl-focal eval frontier --demo outputs/demo --out-dir frontier/      # a demo controls run, read back

Registered by :mod:`verl_focal.lab.eval.cli`; the maths is :mod:`verl_focal.lab.stats.frontier`'s, the data
:mod:`verl_focal.lab.eval.frontier`'s, the files :mod:`verl_focal.lab.eval.frontier_report`'s.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from verl_focal.config.errors import InputError

__all__ = ["add_frontier_parser", "add_plan_parser", "run_frontier", "run_plan"]


def add_frontier_parser(sub) -> None:
    """Add the ``frontier`` sub-command to ``eval``'s sub-parsers."""
    f = sub.add_parser("frontier", help="each method against each control family at equal pass@k (D, interval, "
                                        "verdict) and the frontier figure")
    src = f.add_mutually_exclusive_group(required=True)
    src.add_argument("--families", metavar="YAML",
                     help="the families file: reference, control families (points in knob order with the knob's "
                          "value), methods, and each run's training seed (docs/eval.md, 'eval frontier')")
    src.add_argument("--demo", metavar="DIR", help="a `verl-focal demo --arms controls` output folder instead")
    f.add_argument("--runs", help="folder with the runs the families file names: <run>.jsonl, or <run>/ holding "
                                  "*.jsonl files or a verl validation_data_dir (<step>.jsonl)")
    f.add_argument("--run", action="append", default=[], metavar="NAME=PATH", help="a run given explicitly; repeatable")
    f.add_argument("--step", type=int, help="for verl validation_data_dir runs: the step to read (default: latest)")
    f.add_argument("--data-source", default="unknown", help="data_source for lines that carry none")
    f.add_argument("--x", default="pass@1", metavar="pass@K", help="the accuracy axis (default pass@1)")
    f.add_argument("--y", default="pass@256", metavar="pass@K",
                   help="the coverage axis, a larger k than --x's (default pass@256; k <= samples per problem)")
    f.add_argument("--benchmark", default="in-domain",
                   help="a benchmark's short name, or in-domain / ood: the mean over those benchmarks "
                        "(default in-domain)")
    f.add_argument("--ood", default="gpqa,ifeval,synlogic",
                   help="comma list of substrings marking out-of-domain data sources (case-insensitive)")
    f.add_argument("--n-boot", type=int, default=4000, help="bootstrap resamples (default 4000)")
    f.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
    f.add_argument("--out-dir", "--out", dest="out_dir", required=True, metavar="DIR",
                   help="output folder for frontier.md, frontier.json and frontier.png")


def add_plan_parser(sub) -> None:
    """Add the ``plan`` sub-command: a design's smallest detectable D and cost from a pilot's frontier.json."""
    from verl_focal.lab.eval.plan import DEFAULT_SEEDS, PILOT_SEEDS

    p = sub.add_parser("plan", help="before training: the pilot's design (--propose), then the smallest D a design of "
                                    "S seeds per point detects, and its cost, projected from the pilot's `eval "
                                    "frontier` output (--pilot)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--pilot", metavar="PATH",
                     help="an `eval frontier` output folder (or its frontier.json) over 2 or more training seeds")
    src.add_argument("--propose", action="store_true",
                     help="propose the pilot itself from --methods and --controls: its points, training runs, "
                          "evaluations and H100-hours (the base model as the lower-lr family's free lr = 0 point)")
    p.add_argument("--methods", nargs="+", default=[], metavar="NAME", help="with --propose: the methods to compare")
    p.add_argument("--controls", nargs="+", default=[], metavar="FAMILY",
                   help="with --propose: control families besides the lower-lr one ('KL to SFT', 'entropy bonus', "
                        "'weight interpolation')")
    p.add_argument("--seeds", nargs="+", type=int, default=None, metavar="S",
                   help=f"seeds per point to tabulate (default {' '.join(map(str, DEFAULT_SEEDS))}; each >= 2); "
                        f"with --propose one value (default {PILOT_SEEDS})")
    p.add_argument("--untrained-points", type=int, default=None,
                   help="untrained points of one run each (the base model): one evaluation each, no training "
                        "(default: the pilot's)")
    p.add_argument("--interpolated-points", type=int, default=None,
                   help="points made without training at each seed (weight interpolation): one evaluation per seed "
                        "each (default: the pilot's)")
    p.add_argument("--target", type=float, default=0.02,
                   help="the D the design should detect; the plan says how many seeds per point it takes "
                        "(default 0.02)")
    p.add_argument("--points", type=int, default=None,
                   help="trained policy points of the design, reference included, for the cost (default: the "
                        "pilot's); "
                        "the smallest D is the pilot's comparisons' either way")
    for flag, default, what in (("--train-hours", 850.0, "training run (default 850: the recipes' defaults"),
                                ("--eval-hours", 75.0, "evaluation (default 75: n = 256 on the six math sets")):
        p.add_argument(flag, type=float, default=default,
                       help=f"GPU-hours per {what} on H100s, our estimate in docs/eval.md)")


def run_plan(args: argparse.Namespace) -> int:
    from verl_focal.lab.eval.plan import (
        DEFAULT_SEEDS,
        PILOT_SEEDS,
        load_pilot,
        plan_markdown,
        plan_rows,
        proposal_markdown,
        propose_pilot,
    )

    if not args.propose and (args.methods or args.controls):
        raise InputError("--methods / --controls describe a pilot to propose: add --propose (or leave them out with "
                         "--pilot)")
    if args.seeds is None:
        args.seeds = [PILOT_SEEDS] if args.propose else list(DEFAULT_SEEDS)
    if args.propose and len(args.seeds) != 1:
        raise InputError(f"--seeds {' '.join(map(str, args.seeds))}: --propose takes one number of seeds per point")
    for flag, v in (("--untrained-points", args.untrained_points),
                    ("--interpolated-points", args.interpolated_points)):
        if v is not None and v < 0:
            raise InputError(f"{flag} {v}: must be >= 0")
    bad = [s for s in args.seeds if s < 2]
    if bad:
        raise InputError(f"--seeds {' '.join(map(str, bad))}: each must be >= 2 (the interval is a t with S − 1 "
                         "degrees of freedom)")
    for flag, v in (("--target", args.target), ("--train-hours", args.train_hours), ("--eval-hours", args.eval_hours)):
        if not (v >= 0 if flag != "--target" else v > 0):
            raise InputError(f"{flag} {v:g}: must be {'> 0' if flag == '--target' else '>= 0'}")
    if args.points is not None and args.points < 2:
        raise InputError(f"--points {args.points}: must be >= 2 (the reference and at least one other policy)")
    if args.propose:
        design = propose_pilot(args.methods, args.controls, args.seeds[0])
        print(proposal_markdown(design, args.train_hours, args.eval_hours))
        return 0
    fr = load_pilot(args.pilot)
    rows = plan_rows(fr, sorted(set(args.seeds)), args.train_hours, args.eval_hours, args.points,
                     args.untrained_points, args.interpolated_points)
    print(plan_markdown(fr, rows, args.target, args.pilot, args.train_hours, args.eval_hours, args.points))
    return 0


def run_frontier(args: argparse.Namespace) -> int:
    from verl_focal.lab.eval.families import load_families, parse_families
    from verl_focal.lab.eval.frontier import frontier_table, parse_metric, read_demo, read_run, run_paths
    from verl_focal.lab.eval.frontier_report import frontier_markdown, write_frontier

    x, y = parse_metric("--x", args.x), parse_metric("--y", args.y)
    if args.n_boot < 2:
        raise InputError(f"--n-boot {args.n_boot}: must be >= 2")
    if args.demo:
        if args.runs or args.run:
            raise InputError("--demo reads the demo's own runs; leave out --runs / --run")
        doc, runs = read_demo(args.demo)
        fams = parse_families(doc, f"--demo {args.demo}")
    else:
        if not args.runs and not args.run:
            raise InputError("--families needs the runs: give --runs DIR (or --run NAME=PATH for each run)")
        fams = load_families(args.families)
        paths = run_paths(fams, args.runs, args.run, args.step)
        ood = [s for s in args.ood.split(",") if s]
        runs = {}
        for name, files in paths.items():
            runs[name], left = read_run(name, files, args.data_source, ood)
            if left.count:
                print(f"run {name}: {left.summary()}", file=sys.stderr)
    fr = frontier_table(fams, runs, x, y, args.benchmark, n_boot=args.n_boot, seed=args.seed)
    out = write_frontier(fr, args.out_dir)
    if args.demo:
        import yaml

        (Path(args.out_dir) / "families.yaml").write_text(
            yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    print(frontier_markdown(fr))
    for k, p in out.items():
        print(f"{k:>7}: {p}")
    return 0
