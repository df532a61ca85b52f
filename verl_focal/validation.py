"""Validation-set metrics (the v1 hook logs them at every validation): unbiased pass@k, next to verl's ``best@k``.

verl 0.9.1's ``best@k`` (``bootstrap_metric`` in verl/trainer/ppo/metric_utils.py) is a
with-replacement bootstrap of the best of k rewards: biased low for pass@k, and it
reseeds NumPy's global RNG.  This module computes the unbiased
estimator (Chen et al. 2021, Eq. 1; :func:`verl_focal.core.pass_at_k.pass_at_k`) from the rows the
validation loop already has: the prompt uid and the ``acc`` reward extra of every sample.
Pure numpy, no verl import; the trainer hook adds the returned dict to its metrics.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from verl_focal.core.pass_at_k import default_ks, pass_at_k


def unbiased_pass_at_k_metrics(
    uids: Sequence,
    accs: Sequence,
    ks: Sequence[int] | None = None,
    data_sources: Sequence[str] | None = None,
    prefix: str = "val-aux",
) -> dict[str, float]:
    """``{f"{prefix}/{data_source}/unbiased_pass@{k}": mean over prompts of pass@k}``.

    Rows are grouped by ``uid`` (one prompt, its n validation samples); a sample is
    correct when its ``acc`` is > 0.  For each data source (``"all"`` when
    ``data_sources`` is None) and each ``k`` in ``ks`` (default 1, 2, 4, ... up to the
    smallest n of that source), pass@k = 1 - C(n-c, k)/C(n, k) is averaged over the
    prompts; a k larger than the smallest n of a source is left out for that source.
    Rows whose ``acc`` is missing or not finite are dropped and counted in
    ``{prefix}/{data_source}/unbiased_pass@k_dropped_rows`` (never an exception inside
    a training step).  Each source also reports ``.../unbiased_pass@k_prompts``.
    """
    uids = np.asarray(list(uids), dtype=object)
    acc = np.array([np.nan if a is None else float(a) for a in accs], dtype=np.float64)
    if len(uids) != len(acc):
        raise ValueError(f"unbiased_pass_at_k_metrics: {len(uids)} uids but {len(acc)} accs (they must be row-aligned)")
    if data_sources is None:
        srcs = np.full(len(uids), "all", dtype=object)
    else:
        srcs = np.asarray(list(data_sources), dtype=object)
        if len(srcs) != len(uids):
            raise ValueError(f"unbiased_pass_at_k_metrics: {len(srcs)} data_sources but {len(uids)} uids")
    if ks is not None and any(int(k) < 1 for k in ks):
        raise ValueError(f"unbiased_pass_at_k_metrics: every k must be >= 1, got {list(ks)}")
    out: dict[str, float] = {}
    for src in sorted(set(srcs.tolist()), key=str):
        sel = srcs == src
        ok = sel & np.isfinite(acc)
        name = f"{prefix}/{src}"
        out[f"{name}/unbiased_pass@k_dropped_rows"] = float((sel & ~np.isfinite(acc)).sum())
        if not ok.any():
            out[f"{name}/unbiased_pass@k_prompts"] = 0.0
            continue
        # sorted unique uids (stable, no Python hash order) -> per-prompt n and c
        keys, inv = np.unique(uids[ok].astype(str), return_inverse=True)
        n = np.bincount(inv, minlength=len(keys))
        c = np.bincount(inv, weights=(acc[ok] > 0).astype(np.float64), minlength=len(keys)).astype(np.int64)
        nmin = int(n.min())
        grid = default_ks(nmin) if ks is None else sorted({int(k) for k in ks if int(k) <= nmin})
        for k in grid:
            out[f"{name}/unbiased_pass@{k}"] = float(pass_at_k(n, c, k).mean())
        out[f"{name}/unbiased_pass@k_prompts"] = float(len(keys))
    return out
