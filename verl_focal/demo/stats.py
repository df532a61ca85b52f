"""Paired statistics over seeds for the demo's claims (pure numpy/scipy: no torch, no verl).

Every arm is trained once per seed from the same SFT policy on the same
problem order, so arm A and arm B are *paired* by seed.  For a metric m the
per-seed difference is d_s = m_A(s) − m_B(s); the report gives its mean and the
two-sided Student-t interval

    d̄ ± t_{n−1, 1−α/2} · sd(d) / √n      (sd with ddof = 1),

and a verdict: the interval lies wholly on the good side of 0 -> ``better``,
wholly on the bad side -> ``worse``, otherwise ``not detected``.  With one seed
there is no interval (``not tested``).  Against the base (one SFT policy, no
seed) the same formula applies to m_A(s) − m_base.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats as _st

__all__ = ["Claim", "METRICS", "t_interval", "verdict", "paired_claim", "build_claims", "replicate"]

#: metric name -> True when higher is better (ΔNLL_rare: lower = less forgotten)
METRICS: dict[str, bool] = {"pass@1": True, "pass@16": True, "pass@256": True, "AUC@256": True, "ΔNLL_rare": False}

BETTER, WORSE, NOT_DETECTED, NOT_TESTED = "better", "worse", "not detected", "not tested (1 seed)"


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


def t_interval(diffs: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): two-sided Student-t interval of the mean of ``diffs``; NaN bounds when n < 2."""
    d = np.asarray(diffs, dtype=float)
    if d.size == 0:
        raise ValueError("t_interval needs at least one difference")
    if not np.all(np.isfinite(d)):
        raise ValueError(f"t_interval: non-finite difference in {d.tolist()}")
    mean = float(d.mean())
    if d.size < 2:
        return mean, float("nan"), float("nan")
    half = float(_st.t.ppf(0.5 + level / 2, d.size - 1) * d.std(ddof=1) / math.sqrt(d.size))
    return mean, mean - half, mean + half


def verdict(ci_low: float, ci_high: float, higher_is_better: bool) -> str:
    """``better`` / ``worse`` when the interval excludes 0 (direction by ``higher_is_better``),
    else ``not detected``."""
    if not (math.isfinite(ci_low) and math.isfinite(ci_high)):
        return NOT_TESTED
    if ci_low > 0:
        return BETTER if higher_is_better else WORSE
    if ci_high < 0:
        return WORSE if higher_is_better else BETTER
    return NOT_DETECTED


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
            out.append(paired_claim(arm, "base (SFT)", metric, by_metric[metric], base[metric], level))
        baselines = [reference] + [b for b in also_vs.get(arm, ()) if b != reference]
        for b in baselines:
            if arm != b and b in per_seed:
                for metric in METRICS:
                    out.append(paired_claim(arm, b, metric, by_metric[metric], per_seed[b][metric], level))
    return out


def replicate(first: Iterable[Claim | dict], second: Iterable[Claim | dict]) -> list[dict]:
    """Join two claim lists on (arm, baseline, metric): a verdict ``holds`` when both runs give the same
    better/worse/not-detected verdict, and is ``not established`` otherwise."""

    def key(c):
        c = c if isinstance(c, dict) else c.as_json()
        return (c["arm"], c["baseline"], c["metric"]), c

    a, b = dict(map(key, first)), dict(map(key, second))
    rows = []
    for k in a:
        if k not in b:
            continue
        va, vb = a[k]["verdict"], b[k]["verdict"]
        status = "holds" if va == vb and va in (BETTER, WORSE, NOT_DETECTED) else "not established"
        rows.append({"arm": k[0], "baseline": k[1], "metric": k[2], "verdict_1": va, "verdict_2": vb,
                     "estimate_1": a[k]["estimate"], "estimate_2": b[k]["estimate"], "status": status})
    return rows
