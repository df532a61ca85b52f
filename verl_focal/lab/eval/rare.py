"""Rare-correct set and ΔNLL_rare (F-GRPO Sec. 5 / Table 2; docs/methods.md §8).

* :func:`select_rare`: among the *correct* base-model samples, keep the top fraction
  (paper: 1%, 1,263 of the correct rollouts of 256 prompts x 800 samples) by
  length-normalised NLL under the base model -- the solutions the base model finds least likely.
* :func:`delta_nll_rare`: ``ΔNLL_rare = mean_i (NLL_trained(y_i|x_i) - NLL_base(y_i|x_i))``
  over that set; lower means fewer rare solutions forgotten.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def select_rare(records: Sequence[dict], base_nll: Sequence[float], top_frac: float = 0.01) -> list[dict]:
    """The ``ceil(top_frac * len)`` records with the highest base NLL (ties by input order).

    ``records`` must already be the correct ones; NaN NLLs (empty responses) are dropped.
    Each returned record gets ``base_nll``.
    """
    if not 0 < top_frac <= 1:
        from verl_focal.config.errors import InputError

        raise InputError(f"--top-frac must lie in (0, 1], got {top_frac}")
    if len(records) != len(base_nll):
        raise ValueError(f"{len(records)} records but {len(base_nll)} NLL values")
    nll = np.asarray(base_nll, dtype=np.float64)
    ok = np.flatnonzero(~np.isnan(nll))
    if len(ok) == 0:
        return []
    keep = max(1, math.ceil(top_frac * len(ok)))
    order = ok[np.argsort(-nll[ok], kind="stable")][:keep]
    return [dict(records[i], base_nll=float(nll[i])) for i in order]


def delta_nll_rare(base_nll: Sequence[float], trained_nll: Sequence[float]) -> dict[str, float]:
    """ΔNLL_rare = mean(NLL_trained - NLL_base) over the rare set (items where both are finite)."""
    b = np.asarray(base_nll, dtype=np.float64)
    t = np.asarray(trained_nll, dtype=np.float64)
    if b.shape != t.shape:
        raise ValueError(f"base ({b.shape}) and trained ({t.shape}) NLL arrays differ in length")
    ok = np.isfinite(b) & np.isfinite(t)
    if not ok.any():
        raise ValueError("no rare-set item has a finite NLL under both models")
    d = t[ok] - b[ok]
    return {
        "delta_nll_rare": float(d.mean()),
        "nll_base": float(b[ok].mean()),
        "nll_trained": float(t[ok].mean()),
        "items": int(ok.sum()),
        "skipped": int((~ok).sum()),
        "stderr": float(d.std(ddof=1) / math.sqrt(len(d))) if len(d) > 1 else float("nan"),
    }
