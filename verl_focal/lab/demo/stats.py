"""Paired statistics over seeds for the demo's claims (pure numpy/scipy: no torch, no verl).

Every arm is trained once per seed from the same SFT policy on the same
problem order, so arm A and arm B are *paired* by seed.  For a metric m the
per-seed difference is d_s = m_A(s) − m_B(s); the report gives its mean and the
two-sided Student-t interval

    d̄ ± t_{n−1, 1−α/2} · sd(d) / √n      (sd with ddof = 1),

and a verdict: the interval lies wholly on the good side of 0 -> ``better``,
wholly on the bad side -> ``worse``, otherwise ``not detected``.  With one seed
there is no interval (``not tested``).  Against the base (one SFT policy, no
seed) the same formula applies to m_A(s) − m_base.  The interval, the verdict rule and the join of two
runs are :mod:`verl_focal.lab.stats.verdict`'s, shared with the equal-pass@1 claims.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from verl_focal.lab.demo.arms import BASE, REFERENCE_ARM
from verl_focal.lab.stats.verdict import BETTER, NOT_DETECTED, WORSE, join_runs, t_interval, verdict

__all__ = ["Claim", "METRICS", "paired_claim", "build_claims", "replicate", "metric_table", "mean_eval", "trough",
           "run_claims"]

#: metric name -> True when higher is better (ΔNLL_rare: lower = less forgotten)
METRICS: dict[str, bool] = {"pass@1": True, "pass@16": True, "pass@256": True, "AUC@256": True, "ΔNLL_rare": False}


@dataclass(frozen=True)
class Claim:
    """One comparison: ``arm`` vs ``baseline`` on ``metric`` (estimate = mean paired difference arm − baseline)."""

    arm: str
    baseline: str
    metric: str
    estimate: float
    ci_low: float
    ci_high: float
    n_seeds: int
    verdict: str

    def as_json(self) -> dict:
        d = asdict(self)
        for k in ("estimate", "ci_low", "ci_high"):
            d[k] = None if not math.isfinite(d[k]) else d[k]
        return d


def paired_claim(arm: str, baseline: str, metric: str, a: Mapping[int, float], b: Mapping[int, float] | float,
                 level: float = 0.95) -> Claim:
    """Claim for ``arm`` vs ``baseline`` from per-seed values ``a`` and ``b`` (a dict by seed, or one
    number for the base).

    Only seeds present in both are paired; a seed missing from either side is an error (no silent drop).
    """
    if isinstance(b, Mapping):
        if set(a) != set(b):
            raise ValueError(
                f"{arm} vs {baseline} on {metric}: seeds differ ({sorted(set(a) ^ set(b))} only on one side)"
            )
        diffs = [a[s] - b[s] for s in sorted(a)]
    else:
        diffs = [a[s] - float(b) for s in sorted(a)]
    mean, lo, hi = t_interval(diffs, level)
    return Claim(arm, baseline, metric, mean, lo, hi, len(diffs), verdict(lo, hi, METRICS[metric]))


def build_claims(per_seed: Mapping[str, Mapping[str, Mapping[int, float]]], base: Mapping[str, float],
                 reference: str, level: float = 0.95,
                 also_vs: Mapping[str, Sequence[str]] | None = None) -> list[Claim]:
    """Every arm vs the base, and every other arm vs ``reference``, on every metric of :data:`METRICS`.

    ``per_seed[arm][metric][seed]`` = value; ``base[metric]`` = the SFT policy's value.
    ``also_vs[arm]`` lists further baselines for ``arm`` (same paired claims); a
    baseline that did not run in this experiment is left out (it has no seeds to pair with).
    """
    out: list[Claim] = []
    also_vs = also_vs or {}
    for arm, by_metric in per_seed.items():
        for metric in METRICS:
            out.append(paired_claim(arm, BASE, metric, by_metric[metric], base[metric], level))
        baselines = [reference] + [b for b in also_vs.get(arm, ()) if b != reference]
        for b in baselines:
            if arm != b and b in per_seed:
                for metric in METRICS:
                    out.append(paired_claim(arm, b, metric, by_metric[metric], per_seed[b][metric], level))
    return out


def replicate(first: Iterable[Claim | dict], second: Iterable[Claim | dict]) -> list[dict]:
    """Join two claim lists on (arm, baseline, metric): a verdict ``holds`` when both runs give the same
    better/worse/not-detected verdict, and is ``not established`` otherwise."""
    return join_runs(first, second, ("arm", "baseline", "metric"), (BETTER, WORSE, NOT_DETECTED))


def metric_table(ev: Mapping) -> dict[str, float]:
    """The five claim metrics (keys of :data:`METRICS`) of one evaluation (in memory or read back from JSON)."""
    pk = {int(k): v for k, v in ev["pass_at_k"].items()}
    return {"pass@1": pk[1], "pass@16": pk[16], "pass@256": pk[256], "AUC@256": ev["auc_at_k"],
            "ΔNLL_rare": ev.get("delta_nll_rare", 0.0)}


def mean_eval(evals: Sequence[Mapping]) -> dict:
    """Mean over seeds of the base policies' evaluations (numbers and one level of nested dicts)."""
    out: dict = {}
    for key, v in evals[0].items():
        if isinstance(v, Mapping):
            out[key] = {k: float(np.mean([e[key][k] for e in evals])) for k in v}
        elif isinstance(v, (int, float)):
            out[key] = float(np.mean([e[key] for e in evals]))
    return out


def trough(runs: Sequence[Mapping], arms: Sequence[Mapping]) -> dict:
    """With plain GRPO (no actor settings, no focal weights) at three or more group sizes among ``arms`` (their
    ``Arm.as_json()``): the GRPO arm whose mean pass@256 is lowest (the trough of the curve in N), chosen from the
    ``runs``' own means; ``{}`` otherwise."""
    grpo = sorted({a["n"]: a["name"] for a in arms
                   if a["estimator"] == "grpo" and not a.get("actor") and not a.get("focal_weights")}.items())
    if len(grpo) < 3 or not runs:
        return {}
    means = {name: float(np.mean([{int(k): v for k, v in r["eval"]["pass_at_k"].items()}[256]
                                  for r in runs if r["arm"] == name])) for _, name in grpo}
    return {"grpo_arms": [name for _, name in grpo], "pass@256_mean": means, "trough": min(means, key=means.get)}


def run_claims(runs: Sequence[Mapping], base_evals: Mapping[int, Mapping], arms: Sequence[Mapping],
               trained: Sequence[Mapping] | None = None, reference: str = REFERENCE_ARM) -> tuple[list[Claim], dict]:
    """A run's claims and its group-size trough, from its RL runs (``{"arm", "seed", "eval"}``), each seed's base
    (SFT) evaluation and its arms (``Arm.as_json()``; ``trained``: those that ran, default all): every arm against
    its seed's SFT policy and against ``reference``, plus each arm's ``compare_with``; with GRPO at three or more
    group sizes, F-GRPO N=8 also against GRPO at the trough (:func:`trough`).  The same function for one run and for
    several runs of one design pooled, so that a pooled analysis is one analysis over the concatenated seeds."""
    trained = arms if trained is None else trained
    per_seed: dict[str, dict[str, dict[int, float]]] = {}
    for r in runs:
        for metric, v in metric_table(r["eval"]).items():
            per_seed.setdefault(r["arm"], {}).setdefault(metric, {})[int(r["seed"])] = v
    base_per_seed: dict[str, dict[int, float]] = {}
    for seed, ev in base_evals.items():
        for metric, v in metric_table(ev).items():
            base_per_seed.setdefault(metric, {})[int(seed)] = v
    also_vs = {a["name"]: tuple(a.get("compare_with", ())) for a in arms}
    group_size = trough(runs, trained)
    if group_size.get("trough"):  # F-GRPO N=8 against GRPO at the trough of its pass@256 curve in N
        for a in trained:
            if a["estimator"] == "f_grpo" and a["n"] == 8:
                also_vs[a["name"]] = tuple(dict.fromkeys(also_vs[a["name"]] + (group_size["trough"],)))
    claims = build_claims(per_seed, base_per_seed, reference=reference, also_vs=also_vs) if base_evals else []
    return claims, group_size
