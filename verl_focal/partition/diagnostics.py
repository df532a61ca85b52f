"""Step diagnostics of the Cue-GRPO partition and credit (pure numpy, no verl import).

Computed over the *partitioned* rows (correct rollouts of the groups that were
partitioned), given their dense group id, cluster id within the group and
multiplier w:

``cue/clusters_per_group``        mean number of clusters m per partitioned group
``cue/frac_groups_multi_cluster`` fraction of partitioned groups with m ≥ 2
``cue/w_mean|w_min|w_max``        multiplier statistics
``cue/singleton_credit_share``    Σ w over rollouts alone in their cluster / Σ w
``cue/credit_size_slope``         OLS slope of log(cluster credit Σ_{i∈C} w_i) on
                                  log(cluster size n_k) over all clusters; 1.00 under
                                  GRPO (w ≡ 1), 1 − α for the raw rule; the paper reports
                                  0.72 under Cue-GRPO.  Omitted when all sizes are equal.
"""

from __future__ import annotations

import numpy as np

__all__ = ["credit_diagnostics"]


def credit_diagnostics(group_ids, cluster_ids, w, prefix: str = "cue/") -> dict[str, float]:
    """Diagnostics over rows with ``cluster_ids >= 0``; see the module docstring."""
    g = np.asarray(group_ids, dtype=np.int64)
    c = np.asarray(cluster_ids, dtype=np.int64)
    w = np.asarray(w, dtype=np.float64)
    sel = c >= 0
    out: dict[str, float] = {f"{prefix}groups_partitioned": 0.0}
    if not sel.any():
        return out
    g, c, w = g[sel], c[sel], w[sel]
    _, gd = np.unique(g, return_inverse=True)
    n_groups = int(gd.max()) + 1
    pairs, inv, size = np.unique(np.stack([gd, c], 1), axis=0, return_inverse=True, return_counts=True)
    inv = inv.reshape(-1)
    clusters_per_group = np.bincount(pairs[:, 0], minlength=n_groups)
    credit = np.bincount(inv, weights=w, minlength=len(pairs))
    out.update({
        f"{prefix}groups_partitioned": float(n_groups),
        f"{prefix}clusters_per_group": float(clusters_per_group.mean()),
        f"{prefix}frac_groups_multi_cluster": float((clusters_per_group >= 2).mean()),
        f"{prefix}w_mean": float(w.mean()),
        f"{prefix}w_min": float(w.min()),
        f"{prefix}w_max": float(w.max()),
        f"{prefix}singleton_credit_share": float(w[size[inv] == 1].sum() / w.sum()) if w.sum() > 0 else 0.0,
    })
    x = np.log(size.astype(np.float64))
    if np.ptp(x) > 0 and np.all(credit > 0):
        y = np.log(credit)
        xc = x - x.mean()
        out[f"{prefix}credit_size_slope"] = float((xc * (y - y.mean())).sum() / (xc * xc).sum())
    return out
