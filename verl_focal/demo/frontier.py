"""Comparisons at equal pass@1: a method against a control family's frontier (pure numpy/scipy: no torch, no verl).

Every arm is a point (Δpass@1, Δpass@256): its paired differences from GRPO N=8, averaged over the seeds.  A
*family* is one knob turned over a grid fixed beforehand (docs/demo.md, "The controls"); with GRPO N=8 itself at
(0, 0) as the knob's zero, its points sorted by Δpass@1 and joined by straight lines form its *frontier* f_F.  For
a method M (one arm) and a family F on the seeds s = 1..n:

    D = ȳ_M − f_F(x̄_M),      x̄, ȳ = the seed means of Δpass@1, Δpass@256,

the method's pass@256 above (D > 0) or below (D < 0) what the family reaches at the method's pass@1.  f_F is
never extrapolated: when x̄_M lies outside [min, max] of the family's Δpass@1 (GRPO's 0 included) the verdict is
*outside the grid*.

Interval: a paired bootstrap over seeds of the whole procedure.  Each of ``n_boot`` resamples draws n seeds with
replacement -- the same seeds for every arm -- recomputes every arm's means, the family's frontier, the method's
position and D*.  The interval is D ± t_{n−1, 0.975} · √(n / (n − 1)) · sd(D*): for a plain mean (a flat frontier)
it is the Student-t interval of the demo's other claims, and it carries the uncertainty of the frontier's points
and of where the method falls on it.  When more than 2.5% of the resamples put the method outside the family's
range (so the interval would rest on extrapolation there), the verdict is *outside the grid* as well.  Verdict:
*better* / *worse* when the interval excludes 0, else *not detected*.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats as _st

__all__ = ["FrontierClaim", "OUTSIDE", "interpolate", "frontier_claim", "frontier_claims", "replicate_frontier"]

OUTSIDE = "outside the grid"
#: resamples allowed outside the family's range before the verdict is ``outside the grid``
MAX_OUTSIDE_SHARE = 0.025


@dataclass(frozen=True)
class FrontierClaim:
    """``method`` vs the frontier of ``family`` at the method's pass@1 (estimate D; None when outside the grid).

    ``x`` / ``y``: the method's mean Δpass@1 / Δpass@256 vs GRPO N=8; ``frontier_y``: f_F(x); ``grid``: the family's
    Δpass@1 range; ``outside_share``: resamples in which the method fell outside it."""

    method: str
    family: str
    x: float
    y: float
    frontier_y: float | None
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    grid: tuple[float, float]
    outside_share: float
    n_seeds: int
    verdict: str

    def as_json(self) -> dict:
        d = asdict(self)
        d["grid"] = list(self.grid)
        return d


def interpolate(xs: Sequence[float], ys: Sequence[float], x: float) -> float | None:
    """f(x) of the polyline through the points (xs, ys) sorted by xs; None when x lies outside [min xs, max xs]."""
    xs_, ys_ = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    if xs_.size == 0 or not (xs_.min() <= x <= xs_.max()):
        return None
    order = np.argsort(xs_, kind="stable")
    return float(np.interp(x, xs_[order], ys_[order]))


def _d(x: float, y: float, fx: np.ndarray, fy: np.ndarray) -> float | None:
    """D = y − f_F(x) for the method's means (x, y) and the family's mean points (fx, fy), GRPO's (0, 0) added."""
    f = interpolate(np.concatenate([[0.0], fx]), np.concatenate([[0.0], fy]), x)
    return None if f is None else y - f


def frontier_claim(method: str, family: str, mx: Sequence[float], my: Sequence[float],
                   fx: Sequence[Sequence[float]], fy: Sequence[Sequence[float]], n_boot: int = 4000,
                   level: float = 0.95, seed: int = 0) -> FrontierClaim:
    """The equal-pass@1 claim of the method (per-seed Δpass@1 ``mx``, Δpass@256 ``my`` vs GRPO N=8, length n)
    against the family whose points have per-seed differences ``fx``, ``fy`` (one row per grid point, n columns,
    seeds in the same order).  GRPO N=8 at (0, 0) is the family's zero point and is added here."""
    mx_, my_ = np.asarray(mx, dtype=float), np.asarray(my, dtype=float)
    fx_, fy_ = np.atleast_2d(np.asarray(fx, dtype=float)), np.atleast_2d(np.asarray(fy, dtype=float))
    n = mx_.size
    if not (my_.size == n and fx_.shape == fy_.shape and fx_.shape[1] == n):
        raise ValueError(f"frontier_claim({method!r}, {family!r}): per-seed arrays differ in length "
                         f"(method {mx_.size}/{my_.size}, family {fx_.shape}/{fy_.shape})")
    for arr in (mx_, my_, fx_, fy_):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"frontier_claim({method!r}, {family!r}): non-finite per-seed difference")
    x, y = float(mx_.mean()), float(my_.mean())
    d = _d(x, y, fx_.mean(1), fy_.mean(1))
    grid_x = np.concatenate([[0.0], fx_.mean(1)])
    grid = (float(grid_x.min()), float(grid_x.max()))
    if n < 2:
        return FrontierClaim(method, family, x, y, None if d is None else y - d, d, None, None, grid, float("nan"), n,
                             OUTSIDE if d is None else "not tested (1 seed)")
    idx = np.random.default_rng(seed).integers(0, n, (n_boot, n))  # row b: the seeds of resample b
    bx, by = mx_[idx].mean(1), my_[idx].mean(1)
    bfx, bfy = fx_[:, idx].mean(2), fy_[:, idx].mean(2)  # (grid points, n_boot)
    ds = [_d(bx[b], by[b], bfx[:, b], bfy[:, b]) for b in range(n_boot)]
    boot = [v for v in ds if v is not None]
    share = 1.0 - len(boot) / n_boot
    if d is None or share > MAX_OUTSIDE_SHARE:
        return FrontierClaim(method, family, x, y, None if d is None else y - d, d, None, None, grid, share, n, OUTSIDE)
    half = float(_st.t.ppf(0.5 + level / 2, n - 1) * math.sqrt(n / (n - 1)) * np.std(boot, ddof=1))
    lo, hi = d - half, d + half
    verdict = "better" if lo > 0 else ("worse" if hi < 0 else "not detected")
    return FrontierClaim(method, family, x, y, y - d, d, lo, hi, grid, share, n, verdict)


def frontier_claims(per_seed: Mapping[str, Mapping[str, Mapping[int, float]]], reference: str,
                    methods: Iterable[str], families: Mapping[str, Sequence[str]], n_boot: int = 4000,
                    level: float = 0.95, seed: int = 0) -> list[FrontierClaim]:
    """Every method against every family that ran: ``per_seed[arm][metric][seed]`` (metrics ``pass@1`` and
    ``pass@256``), ``families[name]`` = the family's grid arms (GRPO N=8, ``reference``, is its zero point).
    Methods and families that did not run, or whose seeds differ from the reference's, are an error or left out:
    a family with an arm missing from ``per_seed`` is left out whole (a partial grid is not the fixed grid)."""
    if reference not in per_seed:
        return []
    seeds = sorted(per_seed[reference]["pass@1"])

    def diffs(arm: str, metric: str) -> np.ndarray:
        vals, ref = per_seed[arm][metric], per_seed[reference][metric]
        if sorted(vals) != seeds:
            raise ValueError(f"{arm}: seeds {sorted(vals)} differ from {reference}'s {seeds}")
        return np.array([vals[s] - ref[s] for s in seeds])

    out = []
    ran = {f: arms for f, arms in families.items() if arms and all(a in per_seed for a in arms)}
    for m in methods:
        if m not in per_seed:
            continue
        mx, my = diffs(m, "pass@1"), diffs(m, "pass@256")
        for fam, arms in ran.items():
            fx = [diffs(a, "pass@1") for a in arms]
            fy = [diffs(a, "pass@256") for a in arms]
            out.append(frontier_claim(m, fam, mx, my, fx, fy, n_boot=n_boot, level=level, seed=seed))
    return out


def replicate_frontier(first: Iterable[dict | FrontierClaim], second: Iterable[dict | FrontierClaim]) -> list[dict]:
    """Join two runs' equal-pass@1 claims on (method, family): ``holds`` when both give the same verdict (better,
    worse, not detected, or outside the grid in both), ``not established`` otherwise."""

    def key(c):
        c = c if isinstance(c, dict) else c.as_json()
        return (c["method"], c["family"]), c

    a, b = dict(map(key, first)), dict(map(key, second))
    rows = []
    for k, ca in a.items():
        if k not in b:
            continue
        cb = b[k]
        same = ca["verdict"] == cb["verdict"] and ca["verdict"] in ("better", "worse", "not detected", OUTSIDE)
        rows.append({"method": k[0], "family": k[1], "verdict_1": ca["verdict"], "verdict_2": cb["verdict"],
                     "estimate_1": ca["estimate"], "estimate_2": cb["estimate"],
                     "status": "holds" if same else "not established"})
    return rows
