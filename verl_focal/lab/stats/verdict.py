"""The verdict vocabulary: an interval of a difference -> *better* / *worse* / *not detected*, and the join of two runs.

A claim compares two policies on one metric by an estimate of their difference and a two-sided interval of it.  The
interval lies wholly on the good side of 0 -> ``better``, wholly on the bad side -> ``worse``, otherwise ``not
detected``; with no interval (one seed) the claim is ``not tested (1 seed)``.  A second run on other seeds
*replicates* a verdict when it gives the same one; a verdict that did not settle anything (not tested, or one the
caller does not count) is never established.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from typing import Any

import numpy as np
from scipy import stats as _st

__all__ = ["BETTER", "WORSE", "NOT_DETECTED", "NOT_TESTED", "SETTLED", "t_interval", "verdict", "join_runs"]

BETTER, WORSE, NOT_DETECTED, NOT_TESTED = "better", "worse", "not detected", "not tested (1 seed)"
#: the verdicts a replication can confirm
SETTLED = (BETTER, WORSE, NOT_DETECTED)


def t_interval(diffs: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): the two-sided Student-t interval d̄ ± t_{n−1, (1+level)/2} · sd(d) / √n of the mean of the
    ``n`` differences ``diffs`` (sd with ddof = 1); NaN bounds when n < 2."""
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


def verdict(ci_low: float | None, ci_high: float | None, higher_is_better: bool = True) -> str:
    """``better`` / ``worse`` when the interval [ci_low, ci_high] excludes 0 (direction by ``higher_is_better``),
    ``not detected`` when it holds 0, ``not tested (1 seed)`` when a bound is missing or not finite."""
    if ci_low is None or ci_high is None or not (math.isfinite(ci_low) and math.isfinite(ci_high)):
        return NOT_TESTED
    if ci_low > 0:
        return BETTER if higher_is_better else WORSE
    if ci_high < 0:
        return WORSE if higher_is_better else BETTER
    return NOT_DETECTED


def join_runs(first: Iterable[Any], second: Iterable[Any], keys: Sequence[str],
              settled: Collection[str] = SETTLED) -> list[dict]:
    """Join two runs' claims (dicts, or objects with ``as_json()``) on the fields ``keys``: one row per key both runs
    hold, in the first run's order, with ``verdict_1``, ``verdict_2``, ``estimate_1``, ``estimate_2`` and ``status`` =
    ``holds`` when both verdicts are equal and in ``settled``, else ``not established``."""

    def index(claims: Iterable[Any]) -> dict[tuple, dict]:
        out = {}
        for c in claims:
            c = c if isinstance(c, dict) else c.as_json()
            out[tuple(c[k] for k in keys)] = c
        return out

    a, b = index(first), index(second)
    rows = []
    for k, ca in a.items():
        if k not in b:
            continue
        va, vb = ca["verdict"], b[k]["verdict"]
        rows.append({**dict(zip(keys, k)), "verdict_1": va, "verdict_2": vb, "estimate_1": ca["estimate"],
                     "estimate_2": b[k]["estimate"], "status": "holds" if va == vb and va in settled else
                     "not established"})
    return rows
