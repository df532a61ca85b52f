"""``verl-focal tail-miss``: the tail-miss probability table and its peak N (F-GRPO Lemma 3.1).

Example::

    verl-focal tail-miss --mu 0.64 --tau 6.3e-5
    verl-focal tail-miss --mu 0.8 --rho 0.01 --n 4 8 16 32
    verl-focal tail-miss --spec-table
"""

from __future__ import annotations

import argparse

import numpy as np

from .sim.config import parse_group_sizes
from .tail_miss import SPEC_ARGMAX_TABLE, active_group_probability, tail_miss_argmax, tail_miss_probability


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mu", type=float, help="correct mass of the prompt's policy, in (0, 1)")
    g = parser.add_mutually_exclusive_group()
    g.add_argument("--tau", type=float, help="mass of the rare-correct subset, 0 < tau < mu")
    g.add_argument("--rho", type=float, help="rare fraction of the correct mass: tau = rho * mu")
    parser.add_argument("--n", nargs="+", default=["1-131072"],
                        help="group sizes: integers and/or ranges LO-HI, meaning the powers of two from LO to HI "
                             "(LO..HI is accepted too; default 1-131072)")
    parser.add_argument("--spec-table", action="store_true",
                        help="print the paper's argmax table (mu, rho -> argmax N) next to ours and exit")


def _print_spec_table() -> int:
    print(f"{'mu':>5} {'rho':>6} {'tau':>9} {'paper argmax N':>15} {'ours':>6} {'P(peak)':>9}")
    bad = 0
    for mu, rho, paper in SPEC_ARGMAX_TABLE:
        peak = tail_miss_argmax(mu, mu * rho)
        bad += peak.n != paper
        print(f"{mu:>5g} {rho:>6g} {mu * rho:>9.3g} {paper:>15d} {peak.n:>6d} {peak.probability:>9.4f}")
    return 1 if bad else 0


def run(args: argparse.Namespace) -> int:
    if args.spec_table:
        return _print_spec_table()
    if args.mu is None or (args.tau is None and args.rho is None):
        raise SystemExit("verl-focal tail-miss: give --mu and one of --tau / --rho (or --spec-table)")
    mu = args.mu
    if not 0.0 < mu < 1.0:
        raise SystemExit(f"verl-focal tail-miss: --mu {mu:g} must lie strictly between 0 and 1 (e.g. --mu 0.64)")
    if args.rho is not None and not 0.0 < args.rho < 1.0:
        raise SystemExit(f"verl-focal tail-miss: --rho {args.rho:g} must lie strictly between 0 and 1 (e.g. 0.01)")
    tau = args.tau if args.tau is not None else args.rho * mu
    if args.tau is not None and not 0.0 < tau < mu:
        raise SystemExit(
            f"verl-focal tail-miss: --tau {tau:g} must lie strictly between 0 and --mu {mu:g} (e.g. --tau {mu / 100:g})"
        )
    try:
        ns = np.array(sorted(set(parse_group_sizes(args.n))), dtype=np.float64)
        p = tail_miss_probability(mu, tau, ns)
        act = active_group_probability(mu, ns)
        peak = tail_miss_argmax(mu, tau)
    except ValueError as exc:
        raise SystemExit(f"verl-focal tail-miss: {exc}") from None
    print(f"tail-miss P(N) = (1-tau)^N - (mu-tau)^N - (1-mu)^N   mu={mu:g}  tau={tau:.4g}  (rho={tau / mu:.4g})")
    print(f"{'N':>8} {'P(tail miss)':>13} {'P(active)':>10} {'P(miss | active)':>17}")
    for n, pv, av in zip(ns, p, act):
        cond = pv / av if av > 0 else float("nan")
        print(f"{int(n):>8d} {pv:>13.4g} {av:>10.4g} {cond:>17.4g}")
    print(f"peak: N = {peak.n} with P = {peak.probability:.4f}")
    danger = ns[p >= 0.5 * peak.probability]
    if danger.size:
        print(f"danger zone (P >= half the peak, on the grid above): N = {int(danger.min())} .. {int(danger.max())}")
    return 0
