"""``verl-focal eval plan``: what a design would detect, and what it would cost, before anyone trains it.

A pilot is an ``eval frontier`` run over seeds (its ``frontier.json``): every comparison inside a control family's
grid carries the standard error se of D on the pilot's n seeds.  A design of S seeds per point has standard error
se · √(n / S), so its smallest detectable D (80% power, two-sided, at the pilot's level) is

    m(S) = (t_{S−1, 1−α/2} + t_{S−1, 0.80}) · se · √(n / S)      (stats.power.minimum_detectable_d)

the same statistic as ``eval frontier``'s power line, which is m(n).  The projection keeps everything else of the
pilot: its benchmarks, problems, samples per problem, grid points and methods (other problems or samples change the
within-run noise inside se: measure it with a pilot at those).  Cost, counted exactly: every trained policy point
(reference, trained control points, methods) trained at S seeds and each run evaluated once; an untrained point of one
run (the base model as the lower-lr family's lr = 0, however many families it ends) one evaluation and no training;
a point made without training per seed (weight interpolation, ``trained: false``) one evaluation per seed.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from verl_focal.config.errors import InputError
from verl_focal.lab.stats.power import minimum_detectable_d

__all__ = ["DEFAULT_SEEDS", "PILOT_CONTROLS", "PILOT_SEEDS", "load_pilot", "point_counts", "design_cost", "plan_rows",
           "method_plans", "seeds_for", "plan_markdown", "propose_pilot", "proposal_markdown"]

#: the seeds per point the table shows when none are given
DEFAULT_SEEDS = (2, 3, 4, 6, 8, 12, 16, 24, 32, 48)
#: the largest number of seeds per point :func:`seeds_for` searches
MAX_SEEDS = 100_000
POWER = 0.80
#: seeds per point of a proposed pilot: the fewest with a usable t interval (t_{1} is 12.7 against z's 1.96)
PILOT_SEEDS = 3


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
                         "error to project; widen the pilot's control grid (the base model as the lower-lr family's "
                         "lr = 0 point costs one evaluation and no training; `eval plan --propose` designs such a "
                         "pilot)")
    return fr


def _ses(fr: dict[str, Any]) -> list[float]:
    """The standard errors of the methods' comparisons with the control families inside the grid (what `eval
    frontier`'s power line counts: not a reference family's points, not the comparisons with a reference family)."""
    refs = set(fr.get("references", []))
    controls = {f["name"] for f in fr.get("families", []) if f["control"]} or None
    return [float(c["se"]) for c in fr["claims"]
            if c.get("estimate") is not None and c.get("se") is not None and math.isfinite(c["se"])
            and c["method"] not in refs and (controls is None or c["family"] in controls)]


def point_counts(fr: dict[str, Any]) -> tuple[int, int, int]:
    """The pilot's (trained, untrained, per-seed untrained) policy points: trained = the reference and every point
    trained at each seed; untrained = the distinct runs that stand for every seed (the base model: one evaluation,
    however many families it ends); per-seed untrained = points made without training at each seed (weight
    interpolation: one evaluation per seed).  A frontier.json without the ``trained`` key counts a point given one
    run for every seed as untrained, every other as trained."""
    trained, once, per_seed = 1, set(), 0
    for p in fr["points"]:
        runs = p.get("runs", {})
        if set(runs) == {"None"}:
            once.add(runs["None"])
        elif p.get("trained", True):
            trained += 1
        else:
            per_seed += 1
    return trained, len(once), per_seed


def design_cost(seeds: int, trained: int, untrained: int, per_seed: int, train_hours: float,
                eval_hours: float) -> dict[str, float]:
    """``runs`` = trained · S trainings; ``evaluations`` = trained · S + untrained + per_seed · S (one per run made);
    ``hours`` = runs · train_hours + evaluations · eval_hours."""
    runs = trained * seeds
    evaluations = runs + untrained + per_seed * seeds
    return dict(runs=runs, evaluations=evaluations, hours=runs * train_hours + evaluations * eval_hours)


def plan_rows(fr: dict[str, Any], seeds: list[int], train_hours: float, eval_hours: float,
              points: int | None = None, untrained: int | None = None,
              per_seed: int | None = None) -> list[dict[str, Any]]:
    """One row per design of S seeds per point (S in ``seeds``): m(S) (module docstring) over every comparison of the
    pilot ``fr`` inside the grid as ``median`` / ``low`` / ``high``, and the cost (:func:`design_cost`) at ``points``
    trained policy points (reference included), ``untrained`` points of one run and ``per_seed`` points made without
    training at each seed, each by default the pilot's (:func:`point_counts`)."""
    ses, n = _ses(fr), len(fr["seeds"])
    t0, u0, p0 = point_counts(fr)
    t, u, p = (t0 if points is None else points, u0 if untrained is None else untrained,
               p0 if per_seed is None else per_seed)
    rows = []
    for s in seeds:
        ms = [minimum_detectable_d(se, n, s, level=fr["level"], power=POWER) for se in ses]
        rows.append(dict(seeds=s, median=float(np.median(ms)), low=min(ms), high=max(ms),
                         **design_cost(s, t, u, p, train_hours, eval_hours)))
    return rows


def method_plans(fr: dict[str, Any], target: float) -> list[dict[str, Any]]:
    """Per method of the pilot: the control families whose grid it falls inside, and the fewest seeds per point at
    which every one of those comparisons detects D = ``target`` (None: outside every grid, no plan; or more than
    :data:`MAX_SEEDS`)."""
    out = []
    refs = set(fr.get("references", []))
    for m in dict.fromkeys(c["method"] for c in fr["claims"] if c["method"] not in refs):
        inside = [c for c in fr["claims"] if c["method"] == m and c.get("estimate") is not None
                  and c.get("se") is not None and math.isfinite(c["se"])]
        seeds = _fewest(fr, [float(c["se"]) for c in inside], target, max) if inside else None
        out.append({"method": m, "families": [c["family"] for c in inside], "seeds": seeds})
    return out


def _fewest(fr: dict[str, Any], ses: list[float], target: float, reduce) -> int | None:
    n = len(fr["seeds"])

    def m(s: int) -> float:
        return float(reduce([minimum_detectable_d(se, n, s, level=fr["level"], power=POWER) for se in ses]))

    lo, hi = 2, 2
    while m(hi) > target:
        if hi >= MAX_SEEDS:
            return None
        lo, hi = hi, min(2 * hi, MAX_SEEDS)
    while lo < hi:  # m(hi) <= target; find the first such S in [lo, hi]
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if m(mid) <= target else (mid + 1, hi)
    return hi


def seeds_for(fr: dict[str, Any], target: float, which: str = "median") -> int | None:
    """The fewest seeds per point whose m(S) (the ``median`` over the comparisons, or the ``high`` = worst one) is at
    most ``target``; None beyond :data:`MAX_SEEDS`.  m(S) falls with S, so a doubling search then bisection."""
    return _fewest(fr, _ses(fr), target, np.median if which == "median" else max)


def plan_markdown(fr: dict[str, Any], rows: list[dict[str, Any]], target: float, pilot: str, train_hours: float,
                  eval_hours: float, points: int | None = None) -> str:
    """The plan as markdown: the pilot, the table over seeds per point (:func:`plan_rows`), the seeds per point
    that detect D = ``target`` (:func:`seeds_for`), and each method's own (:func:`method_plans`)."""
    n, level = len(fr["seeds"]), 1 - fr["level"]
    k = len(_ses(fr))
    t, u, ps = point_counts(fr)
    lines = [f"# Design plan from the pilot {pilot}", "",
             f"Pilot: {n} seeds per point, {t} trained policy points (reference included), {u} untrained point(s) "
             f"of one run and {ps} made without training at each seed; {fr['y']} against {fr['x']} on "
             f"{fr['benchmark']}; {k} comparisons inside a control family's grid. Smallest D detected with "
             f"{POWER:.0%} power at the {level:.0%} level, median [range] over those comparisons; the projection "
             "keeps the pilot's problems, samples per problem and grid"
             + (f"; the cost is for {points} trained policy points." if points else "."), "",
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
    lines += ["", "| method | inside the grid of | seeds per point to detect D = "
              f"{target:g} against each of them |", "|---|---|---:|"]
    for mp in method_plans(fr, target):
        if not mp["families"]:
            lines.append(f"| {mp['method']} | none: outside every control family's grid | no plan: widen the grid "
                         "(the base model as the lower-lr family's lr = 0 point costs one evaluation) |")
        else:
            lines.append(f"| {mp['method']} | {', '.join(mp['families'])} | {say.get(mp['seeds'], mp['seeds'])} |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# the pilot's design, before anything is trained
# ----------------------------------------------------------------------------------------------
#: the control families a pilot can hold: name -> (knob, the recipe that trains its point and the knob's value
#: there, or None for a family made without training, its points)
PILOT_CONTROLS: dict[str, tuple[str, str | None, tuple[str, ...]]] = {
    "lower lr": ("lr", "grpo_low_lr.sh", ("6.8e-7",)),
    "KL to SFT": ("kl_loss_coef", "grpo_kl.sh", ("0.001",)),
    "entropy bonus": ("entropy_coeff", "grpo_entropy.sh", ("0.001",)),
    "weight interpolation": ("λ", None, ("0.75", "0.5", "0.25")),
}
#: the family the base model ends (lr = 0: no update); it is in every proposed pilot
BASE_FAMILY = "lower lr"


def propose_pilot(methods: list[str], controls: list[str], seeds: int) -> dict[str, Any]:
    """The pilot's design (docs/eval.md, "Power before the GPU hours"): the reference, each control family in
    ``controls`` (:data:`PILOT_CONTROLS`) at one trained point (the recipe's value) or, made without training, at its
    λ grid per seed, the lower-lr family always (it ends at the base model, lr = 0: one evaluation, no training, so
    its grid spans every pass@1 between the base model and the reference), and the ``methods``; ``seeds`` each.
    Returns the points (name, family, value, how it is made) and the counts (trained, untrained, per_seed)."""
    from verl_focal.config.errors import did_you_mean

    for c in controls:
        if c not in PILOT_CONTROLS:
            raise InputError(f"--controls {c!r}: not a control family the pilot knows{did_you_mean(c, PILOT_CONTROLS)}"
                             f"; choose from {', '.join(repr(k) for k in PILOT_CONTROLS)}")
    if not methods:
        raise InputError("--methods: name at least one method (e.g. --methods 'F-GRPO γ=0.5')")
    if len(set(methods)) != len(methods):
        raise InputError(f"--methods {methods}: a method is named twice")
    chosen = [BASE_FAMILY] + [c for c in dict.fromkeys(controls) if c != BASE_FAMILY]
    points = [{"name": "GRPO (reference)", "family": "reference", "value": "", "made": f"trained, {seeds} seeds"}]
    for fam in chosen:
        knob, recipe, values = PILOT_CONTROLS[fam]
        for v in values:
            made = (f"trained ({recipe}), {seeds} seeds" if recipe else
                    f"eval interpolate of each seed's reference run with the base model, no training, {seeds} "
                    "evaluations")
            points.append({"name": f"{fam} {knob}={v}", "family": fam, "value": v, "made": made})
        if fam == BASE_FAMILY:
            points.append({"name": "base model", "family": fam, "value": "0 (base model)",
                           "made": "untrained: one evaluation, no training"})
    points += [{"name": m, "family": "method", "value": "", "made": f"trained, {seeds} seeds"} for m in methods]
    trained = sum(p["made"].startswith("trained") for p in points)
    per_seed = sum(p["made"].startswith("eval interpolate") for p in points)
    return {"points": points, "seeds": seeds, "trained": trained, "untrained": 1, "per_seed": per_seed}


def proposal_markdown(design: dict[str, Any], train_hours: float, eval_hours: float) -> str:
    """The proposed pilot as markdown: its points and what each costs, then the totals (:func:`design_cost`)."""
    s = design["seeds"]
    cost = design_cost(s, design["trained"], design["untrained"], design["per_seed"], train_hours, eval_hours)
    lines = [f"# Pilot design: {len(design['points'])} policy points at {s} seeds", "",
             "| point | family | how it is made |", "|---|---|---|"]
    lines += [f"| {p['name']} | {p['family']} | {p['made']} |" for p in design["points"]]
    lines += ["", f"Training runs: {cost['runs']}; evaluations: {cost['evaluations']}; H100-hours: "
              f"{cost['hours']:,.0f} ({train_hours:g} per training, {eval_hours:g} per evaluation).", "",
              "The base model ends the lower-lr family at lr = 0, so every method whose pass@1 lies between the base "
              "model's and the reference's falls inside its grid. Then: `eval families` writes the families file "
              "from the run folders, `eval frontier` compares, and `eval plan --pilot` projects the full design."]
    return "\n".join(lines)
