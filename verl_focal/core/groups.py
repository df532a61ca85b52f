"""Group statistics over verl's ``index`` (uid) array, vectorised.

Every estimator in this package is *group-relative*: rollouts of one prompt share
a uid and are compared only with each other.  These helpers turn the uid array
into contiguous group ids and compute per-group sums with ``index_add_`` (a
segment reduction), so no Python loop runs over rows.

Padding rows -- rows whose ``response_mask`` sums to 0, which verl's batch
balancing appends -- are *invalid*: they are left out of every group statistic
and receive advantage 0 (docs/methods.md §1; verl PR #6452 fixed the same
bug in verl's own GRPO).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

__all__ = [
    "BASES",
    "group_ids",
    "segment_sum",
    "group_counts",
    "group_advantage",
    "group_success_rate",
]

#: Base group-relative advantages that the focal weight can wrap.
#: ``grpo``   A_i = (R_i - mean_g R) / (std_g R + eps)       (GRPO; verl ``grpo``)
#: ``drgrpo`` A_i =  R_i - mean_g R                          (Dr.GRPO; verl ``grpo`` with norm_adv_by_std_in_grpo=False)
#: ``rloo``   A_i =  n/(n-1) (R_i - mean_g R)                (RLOO leave-one-out baseline; verl ``rloo``)
BASES = ("grpo", "drgrpo", "rloo")


def group_ids(index: Sequence | np.ndarray, device: torch.device | str | None = None) -> tuple[torch.Tensor, int]:
    """Map uids to contiguous group ids 0..G-1 (order of first appearance).

    Works for any hashable uid type (verl uses ``str``); the mapping is stable
    and independent of ``PYTHONHASHSEED``.
    """
    arr = np.asarray(index, dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"index must be one-dimensional, got shape {arr.shape}")
    codes, uniques = pd.factorize(arr, sort=False)  # hash-based, C speed, first-appearance order
    if (codes < 0).any():
        raise ValueError("index contains a missing uid (None/NaN); every row needs a uid")
    return torch.from_numpy(codes.astype(np.int64, copy=False)).to(device), len(uniques)


def segment_sum(values: torch.Tensor, gid: torch.Tensor, n_groups: int) -> torch.Tensor:
    """Per-group sums: out[g] = Σ_{i: gid_i = g} values_i."""
    out = torch.zeros(n_groups, dtype=values.dtype, device=values.device)
    return out.index_add_(0, gid, values)


def group_counts(valid: torch.Tensor, gid: torch.Tensor, n_groups: int) -> torch.Tensor:
    """Number of valid (non-padding) rows in each group."""
    return segment_sum(valid.to(torch.float64), gid, n_groups)


def group_advantage(
    scores: torch.Tensor,
    gid: torch.Tensor,
    n_groups: int,
    valid: torch.Tensor,
    base: str = "grpo",
    epsilon: float = 1e-6,
    unbiased: bool = True,
) -> torch.Tensor:
    """Scalar group-relative advantage per row (docs/methods.md §1).

    ``grpo``:   A_i = (R_i − μ_g) / (σ_g + ε), σ_g the unbiased std of the group (verl's), or the
                population std with ``unbiased=False`` (``ds_grpo``'s default, as its authors' code).
    ``drgrpo``: A_i =  R_i − μ_g.
    ``rloo``:   A_i = n_g/(n_g − 1) · (R_i − μ_g)  (= R_i − mean of the others).

    Groups with a single valid row follow verl's conventions exactly, so that
    γ = 0 reproduces verl: GRPO uses μ=0, σ=1 (A_i = R_i / (1 + ε)), Dr.GRPO
    μ=0 (A_i = R_i), RLOO A_i = R_i.  Invalid (padding) rows get 0 and do not
    enter any statistic.  Arithmetic runs in float64 and is cast back to
    ``scores.dtype``.
    """
    if base not in BASES:
        raise ValueError(f"algorithm.focal.base={base!r} is not supported; choose one of {BASES}")
    out_dtype = scores.dtype
    s = scores.to(torch.float64) * valid
    n = group_counts(valid, gid, n_groups)
    n_row = n[gid]
    multi = n_row > 1
    mean = segment_sum(s, gid, n_groups) / n.clamp(min=1)
    mean_row = torch.where(multi, mean[gid], torch.zeros_like(s))
    centred = (s - mean_row) * valid
    if base == "grpo":
        var = segment_sum(centred.square(), gid, n_groups) / ((n - 1) if unbiased else n).clamp(min=1)
        std_row = torch.where(multi, var.sqrt()[gid], torch.ones_like(s))
        adv = centred / (std_row + epsilon)
    elif base == "drgrpo":
        adv = centred
    else:  # rloo
        factor = torch.where(multi, n_row / (n_row - 1).clamp(min=1), torch.ones_like(s))
        adv = centred * factor
    return (adv * valid).to(out_dtype)


def group_success_rate(
    correct: torch.Tensor, gid: torch.Tensor, n_groups: int, valid: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Empirical success rate p̂_g = X_g / N_g over valid rows (docs/methods.md §1).

    Returns ``(p_hat, n)``, both of shape (G,); groups with no valid row get
    p̂ = 0 and n = 0.
    """
    c = correct.to(torch.float64) * valid
    n = group_counts(valid, gid, n_groups)
    return segment_sum(c, gid, n_groups) / n.clamp(min=1), n
