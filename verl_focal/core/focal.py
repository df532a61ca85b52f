"""The focal weight of F-GRPO (arXiv 2602.06717, Sec. 4; docs/methods.md §2).

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


def focal_weight(p_hat: torch.Tensor, gamma: float | torch.Tensor) -> torch.Tensor:
    """g = (1 − p̂)^γ, elementwise (F-GRPO Sec. 4; docs/methods.md §2).

    ``p_hat`` must lie in [0, 1].  ``gamma`` is one finite number ≥ 0, or a tensor
    of them that broadcasts against ``p_hat`` (one γ per row, as in the categorical
    simulation).  Where γ = 0 the weight is exactly 1, including p̂ = 1 (0^0 := 1).

    >>> focal_weight(torch.tensor([0.125, 0.5, 0.875], dtype=torch.float64), 0.5).round(decimals=3).tolist()
    [0.935, 0.707, 0.354]
    >>> focal_weight(torch.tensor([1.0, 1.0]), torch.tensor([0.0, 1.0])).tolist()
    [1.0, 0.0]
    """
    p_hat = torch.as_tensor(p_hat)
    if p_hat.numel() and (bool((p_hat < 0).any()) or bool((p_hat > 1).any())):
        raise ValueError("p_hat must lie in [0, 1]")
    if isinstance(gamma, torch.Tensor):
        if gamma.numel() and not bool((torch.isfinite(gamma) & (gamma >= 0)).all()):
            raise ValueError(f"every gamma must be finite and >= 0, got {gamma.cpu().tolist()}")
        dtype = p_hat.dtype if p_hat.is_floating_point() else torch.float64
        # torch.pow(x, 0.) == 1 for every x, 0 included: γ = 0 rows are exactly 1.
        return torch.pow(1.0 - p_hat.to(dtype), gamma.to(dtype=dtype, device=p_hat.device))
    gamma = float(gamma)
    if not math.isfinite(gamma) or gamma < 0:
        raise ValueError(f"algorithm.focal.gamma must be finite and >= 0, got {gamma}")
    if gamma == 0.0:
        return torch.ones_like(p_hat, dtype=torch.float64 if not p_hat.is_floating_point() else p_hat.dtype)
    return torch.pow(1.0 - p_hat, gamma)
