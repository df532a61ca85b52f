"""``verl-focal eval plan``: what a design would detect, and what it would cost, before anyone trains it.

A pilot is an ``eval frontier`` run over seeds (its ``frontier.json``): every comparison inside a control family's
grid carries the standard error se of D on the pilot's n seeds.  A design of S seeds per point has standard error
se · √(n / S), so its smallest detectable D (80% power, two-sided, at the pilot's level) is

    m(S) = (t_{S−1, 1−α/2} + t_{S−1, 0.80}) · se · √(n / S)      (stats.power.minimum_detectable_d)

the same statistic as ``eval frontier``'s power line, which is m(n).  The projection keeps everything else of the
pilot: its benchmarks, problems, samples per problem, grid points and methods (other problems or samples change the
within-run noise inside se: measure it with a pilot at those).  Cost: every policy point of the design (reference,
control points, methods) trained at S seeds, each run evaluated once, and the base model once.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from verl_focal.config.errors import InputError
from verl_focal.lab.stats.power import minimum_detectable_d

__all__ = ["DEFAULT_SEEDS", "load_pilot", "plan_rows", "seeds_for", "plan_markdown"]

#: the seeds per point the table shows when none are given
DEFAULT_SEEDS = (2, 3, 4, 6, 8, 12, 16, 24, 32, 48)
#: the largest number of seeds per point :func:`seeds_for` searches
MAX_SEEDS = 100_000
POWER = 0.80


def load_pilot(path: str | Path) -> dict[str, Any]:
    """The pilot's ``frontier.json`` (a file, or an ``eval frontier`` output folder holding one), checked to be a
    comparison over seeds with at least one standard error inside a grid; :class:`InputError` otherwise."""
    p = Path(path)
    f = p / "frontier.json" if p.is_dir() else p
    if not f.is_file():
        raise InputError(f"--pilot {path}: no frontier.json there; give an `eval frontier` output folder or its "
                         "frontier.json")
    try:
        fr = json.loads(f.read_text(encoding="utf-8"))
        resampled, seeds = fr["resampled"], fr["seeds"]
        _ = list(fr["claims"])
    except (ValueError, KeyError, TypeError) as e:
        raise InputError(f"--pilot {f}: not an `eval frontier` frontier.json ({e})") from None
    if resampled != "seeds" or len(seeds) < 2:
        raise InputError(f"--pilot {f}: one training run per point measures no seed-to-seed spread; a pilot needs "
                         "2 or more training seeds per point (`eval frontier` with seeds in the families file)")
    if not _ses(fr):
        raise InputError(f"--pilot {f}: no comparison falls inside a control family's grid, so none has a standard "
                         "error to project; widen the pilot's control grid")
    return fr


def _ses(fr: dict[str, Any]) -> list[float]:
    return [float(c["se"]) for c in fr["claims"]
            if c.get("estimate") is not None and c.get("se") is not None and math.isfinite(c["se"])]


def plan_rows(fr: dict[str, Any], seeds: list[int], train_hours: float, eval_hours: float,
              points: int | None = None) -> list[dict[str, Any]]:
    """One row per design of S seeds per point (S in ``seeds``): m(S) (module docstring) over every comparison of the
    pilot ``fr`` inside the grid as ``median`` / ``low`` / ``high``, and the cost: ``runs`` = P · S trainings (P =
    ``points``, default the pilot's policy points, reference included), ``evaluations`` = runs + 1 (the base model
    once), ``hours`` at ``train_hours`` per training and ``eval_hours`` per evaluation."""
    ses, n = _ses(fr), len(fr["seeds"])
    policies = points or 1 + len(fr["points"])
    rows = []
    for s in seeds:
        ms = [minimum_detectable_d(se, n, s, level=fr["level"], power=POWER) for se in ses]
        runs = policies * s
        rows.append(dict(seeds=s, median=float(np.median(ms)), low=min(ms), high=max(ms), runs=runs,
                            evaluations=runs + 1, hours=runs * train_hours + (runs + 1) * eval_hours))
    return rows


def seeds_for(fr: dict[str, Any], target: float, which: str = "median") -> int | None:
    """The fewest seeds per point whose m(S) (the ``median`` over the comparisons, or the ``high`` = worst one) is at
    most ``target``; None beyond :data:`MAX_SEEDS`.  m(S) falls with S, so a doubling search then bisection."""
    ses, n = _ses(fr), len(fr["seeds"])

    def m(s: int) -> float:
        ms = [minimum_detectable_d(se, n, s, level=fr["level"], power=POWER) for se in ses]
        return float(np.median(ms)) if which == "median" else max(ms)

    lo, hi = 2, 2
    while m(hi) > target:
        if hi >= MAX_SEEDS:
            return None
        lo, hi = hi, min(2 * hi, MAX_SEEDS)
    while lo < hi:  # m(hi) <= target; find the first such S in [lo, hi]
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if m(mid) <= target else (mid + 1, hi)
    return hi


def plan_markdown(fr: dict[str, Any], rows: list[dict[str, Any]], target: float, pilot: str, train_hours: float,
                  eval_hours: float, points: int | None = None) -> str:
    """The plan as markdown: the pilot, the table over seeds per point (:func:`plan_rows`), and the seeds per point
    that detect D = ``target`` (:func:`seeds_for`)."""
    n, level = len(fr["seeds"]), 1 - fr["level"]
    k = len(_ses(fr))
    lines = [f"# Design plan from the pilot {pilot}", "",
             f"Pilot: {n} seeds per point, {1 + len(fr['points'])} policy points, {fr['y']} against {fr['x']} on "
             f"{fr['benchmark']}; {k} comparisons inside a control family's grid. Smallest D detected with "
             f"{POWER:.0%} power at the {level:.0%} level, median [range] over those comparisons; the projection "
             "keeps the pilot's problems, samples per problem and grid"
             + (f"; the cost is for {points} policy points." if points else "."), "",
             "| seeds per point | smallest detectable D | training runs | evaluations | "
             f"GPU-hours ({train_hours:g} per training, {eval_hours:g} per evaluation) |",
             "|---:|---|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['seeds']} | {r['median']:.3f} [{r['low']:.3f}, {r['high']:.3f}] | {r['runs']} | "
                     f"{r['evaluations']} | {r['hours']:,.0f} |")
    lines.append("")
    med, worst = seeds_for(fr, target, "median"), seeds_for(fr, target, "high")
    say = {None: f"more than {MAX_SEEDS:,}"}
    lines.append(f"To detect D = {target:g}: {say.get(med, med)} seeds per point for the median comparison, "
                 f"{say.get(worst, worst)} for every comparison.")
    return "\n".join(lines)
