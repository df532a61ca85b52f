"""The focal weight of F-GRPO (arXiv 2602.06717, Sec. 3.3).

    g(x) = (1 − p̂(x))^γ,   Â_i = g(x) · A_i

one scalar per group, applied to every rollout and token of the group.  γ = 0
gives the base estimator exactly (0^0 := 1).  With binary rewards only mixed
groups (0 < X < N) carry signal, so the weight matters only there; it
down-weights groups the policy already solves often, where GRPO's updates
concentrate mass on the already-likely correct solutions.
"""

from __future__ import annotations

import math

import torch

__all__ = ["focal_weight"]


def focal_weight(p_hat: torch.Tensor, gamma: float) -> torch.Tensor:
    """g = (1 − p̂)^γ, elementwise (F-GRPO focal weight; methods.md Sec. 2).

    ``p_hat`` must lie in [0, 1]; ``gamma`` must be finite and ≥ 0.  With γ = 0
    the weight is exactly 1 everywhere, including p̂ = 1 (0^0 := 1).

    >>> focal_weight(torch.tensor([0.125, 0.5, 0.875]), 0.5).round(decimals=3).tolist()
    [0.935, 0.707, 0.354]
    """
    gamma = float(gamma)
    if not math.isfinite(gamma) or gamma < 0:
        raise ValueError(f"algorithm.focal.gamma must be finite and >= 0, got {gamma}")
    p_hat = torch.as_tensor(p_hat)
    if p_hat.numel() and (bool((p_hat < 0).any()) or bool((p_hat > 1).any())):
        raise ValueError("p_hat must lie in [0, 1]")
    if gamma == 0.0:
        return torch.ones_like(p_hat, dtype=torch.float64 if not p_hat.is_floating_point() else p_hat.dtype)
    return torch.pow(1.0 - p_hat, gamma)
