"""A method against a control family at equal pass@1: the frontier, D, its interval and the verdict (pure
numpy/scipy: no torch, no verl).

Every policy is a point (Δx, Δy): its paired differences from the reference policy on two metrics (pass@1 and
pass@256 in the demo; any pass@k_x and larger k_y in ``eval frontier``), averaged over the seeds.  A *family* is one
knob turned over a grid fixed beforehand; with the reference itself at (0, 0) as the knob's zero, its points sorted by
Δx and joined by straight lines form its *frontier* f_F.  For a method M and a family F on the seeds s = 1..n:

    D = ȳ_M − f_F(x̄_M),      x̄, ȳ = the seed means of Δx, Δy,

the method's y above (D > 0) or below (D < 0) what the family reaches at the method's x.  f_F is never
extrapolated: when x̄_M lies outside [min, max] of the family's Δx (the reference's 0 included) the verdict is
*outside the grid*.

Interval: a bootstrap of the whole procedure.  Over seeds (:func:`frontier_claim`): each of ``n_boot`` resamples
draws n seeds with replacement -- the same seeds for every policy -- and recomputes every policy's means, the
family's frontier, the method's position and D*.  The interval is D ± q · sd(D*), q = t_{n−1, 0.975} · √(n / (n − 1)):
for a plain mean (a flat frontier) it is the Student-t interval, and it carries the uncertainty of the frontier's
points and of where the method falls on it.  Over problems (one training seed per point, ``eval frontier``): the
caller resamples the problems (and samples) and passes every policy's resampled means to :func:`claim_from_resamples`,
q = z_{0.975}; training-run variance is then not in the interval.  When more than 2.5% of the resamples put the
method outside the family's range (so the interval would rest on extrapolation there), the verdict is *outside the
grid* as well.  Otherwise the verdict is :func:`verl_focal.lab.stats.verdict.verdict` of the interval.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats as _st

from verl_focal.lab.stats.verdict import BETTER, NOT_DETECTED, NOT_TESTED, WORSE, join_runs, verdict

__all__ = ["FrontierClaim", "OUTSIDE", "MAX_OUTSIDE_SHARE", "interpolate", "frontier_d", "claim_from_resamples",
           "frontier_claim", "frontier_claims", "replicate_frontier", "signed", "claim_cell"]

OUTSIDE = "outside the grid"
#: resamples allowed outside the family's range before the verdict is ``outside the grid``
MAX_OUTSIDE_SHARE = 0.025


@dataclass(frozen=True)
class FrontierClaim:
    """``method`` vs the frontier of ``family`` at the method's x (estimate D; None when outside the grid).

    ``x`` / ``y``: the method's mean Δx / Δy vs the reference; ``frontier_y``: f_F(x); ``grid``: the family's Δx
    range; ``outside_share``: resamples in which the method fell outside it; ``se``: the standard error of D behind
    the interval (half-width / its quantile: √(n/(n−1)) · sd(D*) over seeds, sd(D*) over problems);
    ``resampled``: what the bootstrap drew, ``seeds`` or ``problems``."""

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
    se: float | None = None
    resampled: str = "seeds"

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


def frontier_d(x: float, y: float, fx: Sequence[float], fy: Sequence[float]) -> float | None:
    """D = y − f_F(x) for the method's means (x, y) and the family's mean points (fx, fy), the reference's (0, 0)
    added; None when x lies outside the family's range."""
    f = interpolate(np.concatenate([[0.0], fx]), np.concatenate([[0.0], fy]), x)
    return None if f is None else y - f


def _resampled_d(bx: np.ndarray, by: np.ndarray, bfx: np.ndarray, bfy: np.ndarray) -> list[float]:
    """:func:`frontier_d` of every resample b (method at ``bx[b]``, ``by[b]``; family points ``bfx[:, b]``,
    ``bfy[:, b]``) that puts the method inside the family's range, in resample order: the same numbers as calling
    it per resample (the same sort and the same ``np.interp`` per column), with the per-call overhead taken out of
    the loop."""
    n_boot = bx.shape[0]
    zx = np.vstack([np.zeros((1, n_boot)), bfx.reshape(-1, n_boot)])  # the reference's (0, 0) first, as frontier_d
    zy = np.vstack([np.zeros((1, n_boot)), bfy.reshape(-1, n_boot)])
    inside = (zx.min(axis=0) <= bx) & (bx <= zx.max(axis=0))
    order = np.argsort(zx, axis=0, kind="stable")
    sx, sy = np.take_along_axis(zx, order, axis=0).T.copy(), np.take_along_axis(zy, order, axis=0).T.copy()
    return [by[b] - float(np.interp(bx[b], sx[b], sy[b])) for b in np.flatnonzero(inside)]


def claim_from_resamples(method: str, family: str, x: float, y: float, fx: np.ndarray, fy: np.ndarray,
                         bx: np.ndarray, by: np.ndarray, bfx: np.ndarray, bfy: np.ndarray, n_seeds: int,
                         resampled: str = "seeds", level: float = 0.95) -> FrontierClaim:
    """The claim from the point estimates (method ``x``, ``y``; family points ``fx``, ``fy``, shape (G,)) and the
    bootstrap's resamples of them (``bx``, ``by``: (B,); ``bfx``, ``bfy``: (G, B)), drawn together for every policy.

    Half-width q · sd(D*) with q = t_{n−1,(1+level)/2} · √(n/(n−1)) over ``seeds`` (n = ``n_seeds``) or
    z_{(1+level)/2} over ``problems``; *outside the grid* when D is, or when more than :data:`MAX_OUTSIDE_SHARE` of
    the D* are."""
    if resampled not in ("seeds", "problems"):
        raise ValueError(f"resampled={resampled!r}: choose 'seeds' or 'problems'")
    n_boot = len(bx)
    d = frontier_d(x, y, fx, fy)
    grid_x = np.concatenate([[0.0], fx])
    grid = (float(grid_x.min()), float(grid_x.max()))
    boot = _resampled_d(np.asarray(bx, dtype=float), np.asarray(by, dtype=float), np.asarray(bfx, dtype=float),
                        np.asarray(bfy, dtype=float))
    share = 1.0 - len(boot) / n_boot
    fy_at = None if d is None else y - d
    if d is None or share > MAX_OUTSIDE_SHARE:
        return FrontierClaim(method, family, x, y, fy_at, d, None, None, grid, share, n_seeds, OUTSIDE,
                             resampled=resampled)
    if resampled == "seeds":
        n = n_seeds
        half = float(_st.t.ppf(0.5 + level / 2, n - 1) * math.sqrt(n / (n - 1)) * np.std(boot, ddof=1))
        se = float(math.sqrt(n / (n - 1)) * np.std(boot, ddof=1))
    else:
        se = float(np.std(boot, ddof=1))
        half = float(_st.norm.ppf(0.5 + level / 2) * se)
    lo, hi = d - half, d + half
    return FrontierClaim(method, family, x, y, fy_at, d, lo, hi, grid, share, n_seeds, verdict(lo, hi), se, resampled)


def frontier_claim(method: str, family: str, mx: Sequence[float], my: Sequence[float],
                   fx: Sequence[Sequence[float]], fy: Sequence[Sequence[float]], n_boot: int = 4000,
                   level: float = 0.95, seed: int = 0) -> FrontierClaim:
    """The equal-x claim of the method (per-seed Δx ``mx``, Δy ``my`` vs the reference, length n) against the
    family whose points have per-seed differences ``fx``, ``fy`` (one row per grid point, n columns, seeds in the
    same order), by the paired bootstrap over seeds.  The reference at (0, 0) is the family's zero point and is
    added here."""
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
    if n < 2:
        d = frontier_d(x, y, fx_.mean(1), fy_.mean(1))
        grid_x = np.concatenate([[0.0], fx_.mean(1)])
        grid = (float(grid_x.min()), float(grid_x.max()))
        return FrontierClaim(method, family, x, y, None if d is None else y - d, d, None, None, grid, float("nan"), n,
                             OUTSIDE if d is None else NOT_TESTED)
    idx = np.random.default_rng(seed).integers(0, n, (n_boot, n))  # row b: the seeds of resample b
    bx, by = mx_[idx].mean(1), my_[idx].mean(1)
    bfx, bfy = fx_[:, idx].mean(2), fy_[:, idx].mean(2)  # (grid points, n_boot)
    return claim_from_resamples(method, family, x, y, fx_.mean(1), fy_.mean(1), bx, by, bfx, bfy, n, "seeds", level)


def frontier_claims(per_seed: Mapping[str, Mapping[str, Mapping[int, float]]], reference: str,
                    methods: Iterable[str], families: Mapping[str, Sequence[str]], n_boot: int = 4000,
                    level: float = 0.95, seed: int = 0, x: str = "pass@1", y: str = "pass@256") -> list[FrontierClaim]:
    """Every method against every family that ran: ``per_seed[policy][metric][seed]`` (metrics ``x`` and ``y``),
    ``families[name]`` = the family's grid, in knob order (``reference`` is its zero point).
    Methods that did not run are left out, as is a family with a point missing from ``per_seed`` (a partial grid is
    not the fixed grid); seeds that differ from the reference's are an error."""
    if reference not in per_seed:
        return []
    seeds = sorted(per_seed[reference][x])

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
        mx, my = diffs(m, x), diffs(m, y)
        for fam, arms in ran.items():
            fx = [diffs(a, x) for a in arms]
            fy = [diffs(a, y) for a in arms]
            out.append(frontier_claim(m, fam, mx, my, fx, fy, n_boot=n_boot, level=level, seed=seed))
    return out


def replicate_frontier(first: Iterable[dict | FrontierClaim], second: Iterable[dict | FrontierClaim]) -> list[dict]:
    """Join two runs' equal-x claims on (method, family): ``holds`` when both give the same verdict (better,
    worse, not detected, or outside the grid in both), ``not established`` otherwise."""
    return join_runs(first, second, ("method", "family"), (BETTER, WORSE, NOT_DETECTED, OUTSIDE))


def signed(v: float | None) -> str:
    """``+0.012`` / ``-0.003``; ``—`` for a missing or non-finite value (the tables' number format)."""
    return "—" if v is None or not math.isfinite(v) else f"{v:+.3f}"


def claim_cell(c: dict, x_name: str = "pass@1") -> str:
    """A claim (``FrontierClaim.as_json()``) as a table cell: ``D [low, high] **verdict**``, ``D (verdict)`` without
    an interval, ``outside the grid (<x_name> x; grid lo to hi)`` when the method's point lies outside the family's
    range, or, when the point lies inside it but too many resamples fall outside, the outside share and D at the
    point, which then has no interval and no verdict."""
    if c["verdict"] == OUTSIDE:
        lo, hi = c["grid"]
        where = f"{x_name} {signed(c['x'])}; grid {signed(lo)} to {signed(hi)}"
        if c.get("estimate") is None:
            return f"outside the grid ({where})"
        return (f"outside the grid in {c['outside_share']:.1%} of resamples (over {MAX_OUTSIDE_SHARE:.1%}; {where}): "
                f"D {signed(c['estimate'])} at the point, no interval")
    if c["ci_low"] is None:
        return f"{signed(c['estimate'])} ({c['verdict']})"
    return f"{signed(c['estimate'])} [{signed(c['ci_low'])}, {signed(c['ci_high'])}] **{c['verdict']}**"
