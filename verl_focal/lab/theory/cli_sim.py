"""``verl-focal sim``: the F-GRPO App. J categorical simulation (three regimes in N).

Examples::

    verl-focal sim --quick                      # < 1 min, shows the regimes
    verl-focal sim                              # the paper's full sweep (17 N x 2 gamma x 4 seeds x 1000 steps)
    verl-focal sim --mu 0.3 --tau 1e-4 --n-grid 4-4096 --steps 200   # your own policy / grid

Writes ``<out-dir>/<name>.csv`` (every recorded point) and ``<name>.png`` (M_ret
against N, one line per gamma, with a tail-miss panel); prints a summary table.
"""

from __future__ import annotations

import argparse
import os
import time

from verl_focal.config.errors import InputError
from verl_focal.lab.seeds import parse_seeds

from .sim import (
    SimConfig,
    initial_masses,
    paper_config,
    parse_group_sizes,
    plot_results,
    quick_config,
    read_results,
    run_simulation,
    summarise,
    write_csv,
    write_json,
)
from .tail_miss import tail_miss_argmax, tail_miss_probability


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true",
                        help="quick preset: 9 group sizes (powers of 4 from 2), 1 seed, 100 steps; < 1 min on 2 cores")
    parser.add_argument("--n-grid", nargs="+",
                        help="group sizes: integers and/or ranges LO-HI, meaning the powers of two from LO to HI "
                             "(LO and HI powers of two), e.g. 2-131072 or 8,16,64 (LO..HI is accepted too)")
    parser.add_argument("--gammas", nargs="+", type=float, help="focal exponents (default 0 1)")
    parser.add_argument("--seeds", nargs="+", metavar="SEED",
                        help="seeds: numbers and/or inclusive ranges LO-HI, e.g. 0-3 (default 0-3; quick: 0)")
    parser.add_argument("--steps", type=int, help="update steps per run (default 1000; quick: 100)")
    parser.add_argument("--eta", type=float, help="step size (default 1e-2)")
    parser.add_argument("--objective", choices=["prob", "logprob"],
                        help="prob: ascent on (g/N) sum rt_j p_j (paper App. J, default); "
                             "logprob: (g/N) sum rt_j log p_j (REINFORCE, for comparison)")
    parser.add_argument("--mu", type=float, help="initial correct mass (with --tau): replaces logits 5/3/0")
    parser.add_argument("--tau", type=float, help="initial mass of each non-anchor correct action (with --mu)")
    parser.add_argument("--n-actions", type=int, help="number of actions (default 128000)")
    parser.add_argument("--n-correct", type=int, help="number of correct actions (default 10000)")
    parser.add_argument("--record-every", type=int, help="record M_ret every this many steps (default 100)")
    parser.add_argument("--out-dir", default="outputs/theory", metavar="DIR",
                        help="where the CSV and PNG go (default outputs/theory)")
    parser.add_argument("--name", help="file stem (default sim or sim_quick)")
    parser.add_argument("--no-plot", action="store_true", help="skip the PNG")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--replot", metavar="STEM",
                        help="re-draw STEM.png from STEM.csv + STEM.json of an earlier run (no simulation)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default 1: on a shared 2-core machine one thread was faster)")


def build_config(args: argparse.Namespace) -> SimConfig:
    """The SimConfig the arguments describe (quick or paper preset, then overrides)."""
    over = {}
    if args.n_grid:
        over["group_sizes"] = parse_group_sizes(args.n_grid)
    if args.gammas:
        over["gammas"] = tuple(args.gammas)
    if args.seeds is not None:
        over["seeds"] = parse_seeds(args.seeds, example="0-3")
    for key in ("steps", "eta", "objective", "mu", "tau", "n_actions", "n_correct", "record_every"):
        val = getattr(args, key)
        if val is not None:
            over[key] = val
    if args.quick:
        return quick_config(**over)
    return paper_config(**over)


def run(args: argparse.Namespace) -> int:
    if args.replot:
        try:
            res = read_results(args.replot + ".csv", args.replot + ".json")
        except (OSError, KeyError, ValueError) as exc:
            raise InputError(f"--replot {args.replot}: cannot read {args.replot}.csv/.json ({exc}); give the "
                             f"file stem of an earlier run, e.g. outputs/theory/sim") from None
        plot_results(res, args.replot + ".png")
        print(f"wrote {args.replot}.png")
        return 0
    if os.path.exists(args.out_dir) and not os.path.isdir(args.out_dir):
        raise InputError(f"--out-dir {args.out_dir}: is a file; give a folder (it is created if missing)")
    try:
        cfg = build_config(args)
    except ValueError as exc:
        given = f" (--n-grid {' '.join(args.n_grid)})" if args.n_grid and "int()" in str(exc) else ""
        raise InputError(f"{exc}{given}") from None
    name = args.name or ("sim_quick" if args.quick else "sim")
    mu, tau = initial_masses(cfg)
    print(f"App. J simulation: K={cfg.n_actions} actions, {cfg.n_correct} correct, initial correct mass {mu:.4f}, "
          f"one non-anchor correct action {tau:.3g}; eta={cfg.eta:g}, objective={cfg.objective}, "
          f"{cfg.steps} steps, seeds {list(cfg.seeds)}, gammas {list(cfg.gammas)}, N {list(cfg.group_sizes)}")
    t0 = time.perf_counter()
    res = run_simulation(cfg, progress=not args.no_progress, threads=args.threads)
    wall = time.perf_counter() - t0
    csv_path = os.path.join(args.out_dir, f"{name}.csv")
    write_csv(res, csv_path)
    write_json(res, os.path.join(args.out_dir, f"{name}.json"), wall_seconds=wall)
    rows = summarise(res)
    print(f"\n{'N':>7} {'gamma':>5} {'M_ret mean':>14} {'1-M_ret mean':>13} {'1-M_ret range':>22} {'P_tail(N)':>10}")
    for r in rows:
        print(f"{r['n']:>7d} {r['gamma']:>5g} {r['m_ret_mean']:>14.10f} {1 - r['m_ret_mean']:>13.4g} "
              f"{1 - r['m_ret_max']:>10.3g}..{1 - r['m_ret_min']:<10.3g} "
              f"{float(tail_miss_probability(mu, tau, r['n'])):>10.4f}")
    for gm in cfg.gammas:
        sel = [r for r in rows if r["gamma"] == gm]
        worst = max(sel, key=lambda r: 1 - r["m_ret_mean"])
        print(f"gamma={gm:g}: largest loss of correct mass (danger zone) at N={worst['n']} "
              f"(1-M_ret={1 - worst['m_ret_mean']:.3g})")
    try:
        peak = tail_miss_argmax(mu, tau)
        print(f"tail-miss peak for the initial policy: N={peak.n} (P={peak.probability:.4f})")
    except ValueError:
        pass
    print(f"wall time {wall:.1f} s; per N: " + ", ".join(f"{n}:{s:.1f}s" for n, s in res.seconds.items()))
    print(f"wrote {csv_path} and {name}.json")
    if not args.no_plot:
        png_path = os.path.join(args.out_dir, f"{name}.png")
        plot_results(res, png_path)
        print(f"wrote {png_path}")
    return 0
