"""``verl-focal demo``: the CPU-scale RLVR experiment (GRPO vs F-GRPO vs Cue-GRPO), with paired claims.

    verl-focal demo                          # default run: 5 arms x the default seeds, <= 10 min on 2 CPU cores
    verl-focal demo --seeds 1000-1019        # the same design on other seeds (replication)
    verl-focal demo --arms n-sweep           # GRPO at N = 2..32 and F-GRPO N=8: the group-size curve
    verl-focal demo --arms controls          # the papers' controls and each method's knob, at equal pass@1
    verl-focal demo --seeds 0-99 --budget 1800   # buy power: as many seeds as 30 min allow
    verl-focal demo --quick                  # smoke run (CI): checks the pipeline and that every estimator acts
    verl-focal demo --device cuda            # the scaled-up configuration on a GPU
    verl-focal demo --replicate DIR1 DIR2    # which verdicts of two runs agree
    verl-focal demo --replicate D1 D2 D3 D4 --out-dir P   # runs of one design pooled: verdicts over all their seeds

Writes results.json (with a ``claims`` list), report.md and PNG plots under ``--out-dir``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

from verl_focal.lab.seeds import parse_seeds


def check_out_dir(path: str) -> None:
    """Make sure ``--out-dir`` is a folder this process can write, before the run: create it if missing and write a
    probe file there.  Raises ValueError naming the folder and why (a file, not writable, ...)."""
    import tempfile

    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"--out-dir {path}: is a file; give a folder (it is created if missing)")
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as e:
        where = f" ({e.filename})" if e.filename and os.path.abspath(e.filename) != os.path.abspath(path) else ""
        raise ValueError(f"--out-dir {path}: cannot write there{where}: {e.strerror or e}; give a folder you can "
                         f"write (it is created if missing)") from None


def _seed_text(seeds: tuple[int, ...]) -> str:
    """``0-19`` for a contiguous range, else the list."""
    if len(seeds) > 1 and list(seeds) == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return " ".join(map(str, seeds))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from verl_focal.lab.demo.experiment import DEFAULT_SEEDS, preset

    quick_seeds, cuda_seeds = _seed_text(preset("quick").seeds), _seed_text(preset("cuda").seeds)
    parser.add_argument("--quick", action="store_true",
                        help="smoke run (< 60 s of CPU): one seed, a small SFT policy, 8 RL steps per arm; checks that "
                             "every stage runs and every estimator changes the advantages, not which method is better")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="cpu: the default CPU run; cuda: the scaled-up configuration (bigger model, more steps)")
    parser.add_argument(
        "--out-dir",
        "--out",
        dest="out_dir",
        default=None,
        help=f"output folder for report.md, results.json and plots (default: {DEFAULT_OUT_DIR}; --out is an alias); "
             "with --replicate, where the pooled runs' report goes (nothing is written without it)",
    )
    parser.add_argument(
        "--seeds",
        nargs="+",
        default=None,
        metavar="SEED",
        help="seeds, numbers and/or inclusive ranges, e.g. 1000-1019; each seed fits its own SFT policy and then "
             f"trains every arm from it (default {_seed_text(DEFAULT_SEEDS)}; --quick: {quick_seeds}; "
             f"--device cuda: {cuda_seeds})",
    )
    parser.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                        help="wall-clock budget: seeds run in the given order and no new seed starts once the "
                             "estimate says it would finish late (more seeds = narrower intervals)")
    parser.add_argument(
        "--jobs", type=int, default=None,
        help="worker processes, one seed at a time each (>= 1; default: min(2, CPUs, seeds))",
    )
    parser.add_argument("--arms", nargs="+", default=None, metavar="ARM",
                        help="arms by name, or a set: 'default', 'family' (GRPO N=8, F-GRPO γ=1, Pass@k, "
                             "Unlikely sum and mean), 'n-sweep' (GRPO N=2,4,8,16,32 and F-GRPO γ=1 N=8), "
                             "'controls' (GRPO at lower lr, with an entropy bonus, with a KL loss, with F-GRPO's "
                             "weights shuffled, and each method, MaxRL, DS-GRPO and F-GRPO at GRPO's step size "
                             "included, over its own knob, the output mixture of GRPO N=8 and the SFT policy, "
                             "computed, and their weight interpolation, evaluated: compared at equal pass@1) or 'all' "
                             "(every arm)")
    parser.add_argument(
        "--steps", type=int, default=None, help="override the number of RL steps per run (changes the design)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch CPU threads per process (default 1: with two worker processes on 2 cores, one each)",
    )
    parser.add_argument(
        "--replicate",
        nargs="+",
        default=None,
        metavar="DIR",
        help="two or more finished runs of one design on disjoint seeds (folders or results.json files): print "
             "which verdicts hold (two runs: both agree), then the verdicts of all their seeds pooled, which hold "
             "when the runs' two halves in the given order (the first half of the runs, the rest) each give the "
             "same one; --out-dir DIR writes the pooled report (report.md, results.json, frontier.png)",
    )
    parser.add_argument("--no-progress", action="store_true", help="disable the tqdm progress bar")


def _check_complete(results: dict, paths: dict[str, str]) -> list[str]:
    """What a run asserts: training ran, every loss finite, every report file present and non-empty; and, in a
    --quick run, that every arm's estimator acted (changed the advantages; GRPO: had a nonzero one)."""
    from verl_focal.lab.demo.effect import not_exercised

    problems = []
    if results["config"]["mode"] == "quick":
        problems += [f"{arm}: estimator not exercised (see 'Estimator effect' in the report)"
                     for arm in not_exercised(results["runs"])]
    if not results["runs"]:
        problems.append("no RL run finished")
    for r in results["runs"]:
        if not r["history"]:
            problems.append(f"{r['arm']} seed {r['seed']}: no RL step recorded")
        if not all(math.isfinite(h["loss"]) for h in r["history"]):
            problems.append(f"{r['arm']} seed {r['seed']}: non-finite loss")
    for p in paths.values():
        if not os.path.isfile(p) or os.path.getsize(p) == 0:
            problems.append(f"report file missing or empty: {p}")
    return problems


def _load_claims(path: str) -> tuple[list[dict], list[int], dict]:
    f = os.path.join(path, "results.json") if os.path.isdir(path) else path
    if not os.path.isfile(f):
        raise ValueError(f"--replicate: no results.json at {path!r}; pass a demo output folder or its results.json")
    with open(f) as fh:
        try:
            res = json.load(fh)
        except json.JSONDecodeError as e:  # a run killed while writing: name the file
            raise ValueError(f"--replicate: {f} is not valid JSON ({e.msg}, line {e.lineno}): the demo that wrote "
                             "it was cut short; re-run it, or pass another demo output folder") from None
    if not isinstance(res, dict) or "claims" not in res:
        raise ValueError(f"--replicate: {f} has no 'claims' (written by an older demo); re-run `verl-focal demo`")
    return res["claims"], res.get("seeds_completed", []), res


def _replicate(paths: list[str], out_dir: str | None = None) -> int:
    from verl_focal.lab.demo.frontier_report import frontier_replication_markdown, power_markdown
    from verl_focal.lab.demo.pool import runs_refusal
    from verl_focal.lab.demo.report import headline_markdown, replication_markdown

    def fail(msg: str) -> int:
        print(f"verl-focal demo: {msg}", file=sys.stderr)
        return 2

    if len(paths) < 2:
        return fail(f"--replicate needs two or more runs, got {len(paths)}: --replicate RUN1 RUN2 [RUN3 ...]")
    try:
        loaded = [_load_claims(p) for p in paths]
        if out_dir is not None:
            check_out_dir(out_dir)
    except ValueError as e:
        return fail(str(e))
    results = [r for _, _, r in loaded]
    refusal = runs_refusal(results, paths)  # different experiments, or shared seeds: agreement would replicate nothing
    if refusal:
        return fail(refusal)
    print("; ".join(f"run {i}: {p} (seeds {s[0]}..{s[-1]}, {len(s)})" for i, (p, (_, s, _)) in
                    enumerate(zip(paths, loaded), start=1) if s))
    if len(paths) == 2:  # the two-run replication, as before; the pooled verdicts follow
        (c1, _, r1), (c2, _, r2) = loaded
        print("\n".join(replication_markdown(c1, c2)))
        if "summary" in r1 and "summary" in r2:
            print("\nHeadline: range of the two runs' means; Δ = paired difference (GRPO N=8 vs its seed's SFT "
                  "policy, every other arm vs GRPO N=8), range of the two estimates, verdict where both runs "
                  "agree:\n")
            print("\n".join(headline_markdown(r1, r2)))
        frontier = frontier_replication_markdown(r1, r2)
        if frontier:
            print("\nEqual pass@1 (the controls): D = the method's Δ pass@256 − the control family's frontier at its "
                  "Δ pass@1, run 1 | run 2, and the verdict where both runs agree:\n")
            print("\n".join(frontier))
            print("\n" + "\n".join(power_markdown([r1["frontier"], r2["frontier"]])))
    return _pooled(results, out_dir, claims_table=len(paths) > 2)


def _pooled(results: list[dict], out_dir: str | None, claims_table: bool) -> int:
    """The runs' seeds pooled (docs/demo.md, "One design of 48 seeds"): the equal-pass@1 verdicts over all the
    seeds with each half's and each run's (and, for more than two runs, the per-metric claims likewise); with
    ``out_dir``, the pooled report written there."""
    from verl_focal.lab.demo.frontier_report import frontier_results, pooled_frontier_markdown
    from verl_focal.lab.demo.pool import halves, pool_results
    from verl_focal.lab.demo.report import pooled_claims_markdown, write_report

    pooled = pool_results(results)
    parts = [pool_results(h) if len(h) > 1 else h[0] for h in halves(results)]  # a half of one run is that run
    if claims_table:
        print(f"\nPooled claims ({len(pooled['seeds_completed'])} seeds; paired by seed, 95% Student-t interval), "
              "each half's and each run's verdict beside them:\n")
        print("\n".join(pooled_claims_markdown(pooled["claims"], [p["claims"] for p in parts],
                                                [r["claims"] for r in results])))
    fr = frontier_results(pooled)  # the bootstrap over all the seeds (a run's own is in its results.json)
    if fr:
        pooled["frontier"] = fr  # computed once: the pooled report below uses it
        part_frs = [p.get("frontier") or frontier_results(p) for p in parts]
        run_frs = [r.get("frontier") or frontier_results(r) for r in results]
        if all(part_frs) and all(run_frs):
            print("\nEqual pass@1, all runs' seeds pooled:\n")
            # two runs: their power lines were printed with their join above
            print("\n".join(pooled_frontier_markdown(fr, part_frs, run_frs, run_power=claims_table)))
    if out_dir is not None:
        write_report(pooled, out_dir)
        print(f"\npooled report written to {os.path.abspath(out_dir)}")
    return 0


#: the exit status of a run stopped by Ctrl-C (128 + SIGINT, as a shell reports it)
EXIT_INTERRUPTED = 130


def _interrupted(results: dict, out_dir: str) -> int:
    """Ctrl-C: write the finished seeds' report (if any seed finished) and say so in one line; exit 130."""
    from verl_focal.lab.demo.report import write_report

    done = results["seeds_completed"]
    if done:
        write_report(results, out_dir)
        kept = f"kept the {len(done)} finished seed(s) {done} in {os.path.abspath(out_dir)}"
    else:
        kept = "no seed had finished, nothing written"
    print(f"verl-focal demo: interrupted; {kept}", file=sys.stderr)
    return EXIT_INTERRUPTED


def _time_refusal(cfg, seeds_arg) -> str | None:
    """A run estimated over a day without --budget is refused with its estimate (one line); one over 15 minutes
    prints its estimate and the --budget option on stderr before it starts."""
    from verl_focal.lab.demo.experiment import MAX_UNBUDGETED_S, duration_text, estimate_seconds

    est = estimate_seconds(cfg)
    trained = sum(a.trained for a in cfg.arms)
    what = (f"{len(cfg.seeds):,} seeds × {trained} trained arms: about {duration_text(est)} on an idle machine, up "
            "to twice that on a loaded one (docs/demo.md, 'Run time and power')")
    given = f"--seeds {' '.join(seeds_arg)}: " if seeds_arg else ""
    if est > MAX_UNBUDGETED_S and cfg.budget_s is None:
        return (f"{given}{what}; give --budget SECONDS to run as many of these seeds as fit (in the given order), "
                "or fewer seeds")
    if est > 15 * 60:
        budget = f"--budget {cfg.budget_s:.0f} s stops starting seeds when one would end late" if cfg.budget_s \
            else "--budget SECONDS would stop starting seeds when one would end late"
        print(f"verl-focal demo: {given}{what}; {budget}", file=sys.stderr)
    return None


#: where a run's report goes without --out-dir
DEFAULT_OUT_DIR = "outputs/demo"


def run(args: argparse.Namespace) -> int:
    if args.replicate:
        return _replicate(args.replicate, args.out_dir)
    if args.out_dir is None:
        args.out_dir = DEFAULT_OUT_DIR
    from verl_focal.lab.demo.arms import arms_by_name
    from verl_focal.lab.demo.experiment import preset, run_experiment
    from verl_focal.lab.demo.report import SMOKE_BANNER, write_report

    def fail(msg: str) -> int:
        print(f"verl-focal demo: {msg}", file=sys.stderr)
        return 2

    if args.quick and args.device == "cuda":
        return fail("--quick and --device cuda are separate modes; choose one")
    cfg = preset("quick" if args.quick else ("cuda" if args.device == "cuda" else "default"))
    try:
        if args.seeds is not None:
            cfg.seeds = parse_seeds(args.seeds)
        if args.arms is not None:
            cfg.arms = arms_by_name(args.arms)
    except ValueError as e:
        return fail(str(e))
    if args.steps is not None:
        if args.steps < 1:
            return fail(f"--steps={args.steps} must be >= 1")
        cfg.rl_steps = args.steps
    if args.threads is not None:
        if args.threads < 1:
            return fail(f"--threads={args.threads} must be >= 1")
        cfg.threads = args.threads
    if args.jobs is not None:
        if args.jobs < 1:
            return fail(f"--jobs={args.jobs} must be >= 1 (leave it out for the default, min(2, CPUs, seeds))")
        cfg.jobs = args.jobs
    if args.budget is not None:
        cfg.budget_s = args.budget
    try:
        cfg.validate()
        check_out_dir(args.out_dir)  # a file or an unwritable place is refused now, not after the run
    except ValueError as e:
        return fail(str(e))
    late = _time_refusal(cfg, args.seeds)
    if late:
        return fail(late)

    if cfg.mode == "quick":
        print(f"verl-focal demo --quick: {SMOKE_BANNER}", file=sys.stderr)
    factory = None
    if not args.no_progress:
        from tqdm import tqdm

        factory = lambda total: tqdm(total=total, unit="step", dynamic_ncols=True)  # noqa: E731
    results = run_experiment(cfg, progress_factory=factory, log=lambda line: print(line, file=sys.stderr))
    if results.get("interrupted"):
        return _interrupted(results, args.out_dir)
    paths = write_report(results, args.out_dir)
    problems = _check_complete(results, paths)
    with open(paths["report.md"]) as f:
        print(f.read())
    print(f"report written to {os.path.abspath(args.out_dir)}")
    if problems:
        for p in problems:
            print(f"verl-focal demo: FAILED: {p}", file=sys.stderr)
        return 1
    return 0
