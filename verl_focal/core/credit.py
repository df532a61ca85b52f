"""Rarity-aware credit redistribution (Cue-GRPO, arXiv 2608.03467, "CR"; docs/methods.md §5).

Within one group let P be the correct rollouts (n₊ = |P|), split into strategy
clusters; C(i) is the cluster of rollout i.  The raw multiplier is

    w_i = n₊ · |C(i)|^(−α) / Σ_{j∈P} |C(j)|^(−α)                    (docs/methods.md §5)

so mean_{i∈P} w_i = 1 and a cluster of size n_k receives total credit ∝ n_k^(1−α).
The advantage of a correct rollout becomes Â_i = w_i · A_i; incorrect rollouts keep A_i.

Stabilisers (the paper's Algorithm 1, applied here in this order):

1. ``clip=(lo, hi)``: w ← clamp(w, lo, hi).  Paper default [0.3, 3.0].
2. ``renormalize=True``: w ← w / mean_{i∈P} w, restoring unit mean (clipping alone
   breaks mass preservation).  One pass: after it a value may again lie slightly
   outside [lo, hi]; mass preservation is the property we keep exact.
3. ``floor_mode``/``floor`` τ: ``"additive"`` w ← w + (τ − 1); ``"max"`` w ← max(w, τ);
   ``"none"`` leaves w alone.  The paper's floor τ = 1.05 is known only through
   summaries and its form is **uncertain**; both readings are offered.  Any floor
   deliberately raises the total positive credit above GRPO's.

The default (clip to [0.3, 3.0], renormalise, no floor) is the one unambiguous
variant: the paper's "no floor, renormalised to unit mean" ablation.

Pure numpy, no verl import.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["credit_multipliers", "credit_multipliers_batch", "validate_credit_args", "FLOOR_MODES"]

FLOOR_MODES = ("none", "additive", "max")


def validate_credit_args(alpha: float, clip, floor_mode: str, floor: float, prefix: str = "algorithm.cue.") -> None:
    """Raise ``ValueError`` naming the key, the value and the fix for bad credit-rule settings."""
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not math.isfinite(alpha) or alpha < 0:
        raise ValueError(f"{prefix}alpha={alpha!r}: must be a finite number >= 0 (paper default 0.8; 0 means GRPO)")
    if clip is not None:
        try:
            lo, hi = (float(x) for x in clip)
        except (TypeError, ValueError):
            raise ValueError(
                f"{prefix}clip={clip!r}: give a pair [min, max] such as [0.3, 3.0], or null for no clipping"
            ) from None
        if not (math.isfinite(lo) and math.isfinite(hi) and 0 <= lo <= 1 <= hi):
            raise ValueError(f"{prefix}clip={clip!r}: need 0 <= min <= 1 <= max (finite), e.g. [0.3, 3.0]")
    if floor_mode not in FLOOR_MODES:
        raise ValueError(f"{prefix}floor_mode={floor_mode!r}: choose one of {list(FLOOR_MODES)}")
    if not isinstance(floor, (int, float)) or isinstance(floor, bool) or not math.isfinite(floor) or floor <= 0:
        raise ValueError(f"{prefix}floor={floor!r}: must be a finite number > 0 (paper: 1.05)")


def credit_multipliers_batch(
    group_ids,
    cluster_ids,
    alpha: float = 0.8,
    clip: tuple[float, float] | None = (0.3, 3.0),
    renormalize: bool = True,
    floor_mode: str = "none",
    floor: float = 1.05,
) -> np.ndarray:
    """Vectorised multipliers w_i for many groups at once (docs/methods.md §5, segment form).

    ``group_ids``: int array (n,), the group of each row.  ``cluster_ids``: int array (n,),
    the strategy cluster of each row *within its group*, or a negative value for rows
    that are not correct rollouts (not partitioned).  Returns float64 (n,): w_i for the
    partitioned rows, exactly 1.0 for the others.  No Python loop over rows or groups:
    cluster sizes come from ``np.unique`` over (group, cluster) pairs and the per-group
    sums Σ|C(j)|^(−α) from ``np.bincount``.
    """
    validate_credit_args(alpha, clip, floor_mode, floor, prefix="")
    g = np.asarray(group_ids, dtype=np.int64).reshape(-1)
    c = np.asarray(cluster_ids, dtype=np.int64).reshape(-1)
    if g.shape != c.shape:
        raise ValueError(f"group_ids has {g.size} rows but cluster_ids has {c.size}; they must be row-aligned")
    if g.size and g.min() < 0:
        raise ValueError("group_ids must be >= 0 (use a negative cluster id to exclude a row)")
    w = np.ones(g.size, dtype=np.float64)
    sel = c >= 0
    if not sel.any():
        return w
    gs, cs = g[sel], c[sel]
    # Dense group index so bincount stays small even for sparse group ids.
    _, gd = np.unique(gs, return_inverse=True)
    n_groups = int(gd.max()) + 1
    pair = np.stack([gd, cs], axis=1)
    _, pair_inv, pair_cnt = np.unique(pair, axis=0, return_inverse=True, return_counts=True)
    size = pair_cnt[pair_inv.reshape(-1)].astype(np.float64)
    u = size ** (-float(alpha))
    n_pos = np.bincount(gd, minlength=n_groups).astype(np.float64)
    denom = np.bincount(gd, weights=u, minlength=n_groups)
    ws = n_pos[gd] * u / denom[gd]
    if clip is not None:
        lo, hi = float(clip[0]), float(clip[1])
        ws = np.clip(ws, lo, hi)
        if renormalize:
            ws = ws * n_pos[gd] / np.bincount(gd, weights=ws, minlength=n_groups)[gd]
    if floor_mode == "additive":
        ws = ws + (float(floor) - 1.0)
    elif floor_mode == "max":
        ws = np.maximum(ws, float(floor))
    w[sel] = ws
    return w


def credit_multipliers(
    cluster_ids: Sequence[int],
    alpha: float = 0.8,
    clip: tuple[float, float] | None = (0.3, 3.0),
    renormalize: bool = True,
    floor_mode: str = "none",
    floor: float = 1.05,
) -> np.ndarray:
    """Multipliers w for ONE group's correct rollouts, given their cluster labels.

    w_i = n₊ · |C(i)|^(−α) / Σ_{j∈P} |C(j)|^(−α)  (Cue-GRPO, docs/methods.md §5), then the
    stabilisers described in the module docstring.  Labels are arbitrary hashables
    compared for equality only.

    >>> [round(float(x), 3) for x in credit_multipliers([0] * 6 + [1] * 3 + [2])[[0, 6, 9]]]
    [0.649, 1.129, 2.72]
    """
    labels = list(cluster_ids)
    seen: dict = {}
    dense = np.fromiter((seen.setdefault(x, len(seen)) for x in labels), dtype=np.int64, count=len(labels))
    return credit_multipliers_batch(
        np.zeros(len(labels), dtype=np.int64), dense, alpha=alpha, clip=clip,
        renormalize=renormalize, floor_mode=floor_mode, floor=floor,
    )
