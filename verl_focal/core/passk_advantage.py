"""The analytic group advantage of Pass@k Training (Chen et al., arXiv 2508.10751,
Sec. "Analytical Derivation"; docs/methods.md §9).

Pass@k Training rewards a *set* of k rollouts with the maximum of their 0/1
rewards.  Instead of sampling k-subsets, the paper takes the expectation over
all C(n, k) subsets of a group of n rollouts with c correct:

    ρ   = 1 − C(n−c, k) / C(n, k)                      (group pass@k, the mean subset reward)
    σ   = sqrt(ρ (1 − ρ))                              (std of the Bernoulli subset reward)
    Â⁺  = (1 − ρ) / (σ + ε)                            (every correct rollout)
    Â⁻  = (1 − ρ − C(n−c−1, k−1) / C(n−1, k−1)) / (σ + ε)   (every wrong rollout)

A correct rollout makes every subset containing it succeed, so it gets the
advantage of a successful subset; a wrong rollout's subsets fail exactly when
the other k−1 members are all wrong, whence the second ratio.  With k = 1 this
is GRPO with the population std: Â⁺ = (1−p)/σ, Â⁻ = −p/σ, p = c/n.

The binomial ratios are evaluated in the product form
C(a, k)/C(b, k) = Π_{j<k} (a−j)/(b−j), summed in log space, which is exact to a
few ulps for any n (tested against :mod:`fractions` up to n = 512) and never
overflows.  Everything is vectorised over groups; no verl import.
"""

from __future__ import annotations

import torch

from verl_focal.core.groups import group_counts, segment_sum

__all__ = ["comb_ratio", "passk_group_advantages", "passk_row_advantage"]


#: the allowed range of k (``algorithm.passk.k``); the schema reads it from here
K_MIN, K_MAX = 1, 512


def comb_ratio(a: torch.Tensor, b: torch.Tensor, k: int) -> torch.Tensor:
    """C(a, k) / C(b, k) elementwise for integer tensors ``a ≤ b`` with ``b ≥ k ≥ 0``.

    Product form Π_{j=0}^{k−1} (a − j)/(b − j) accumulated as a sum of logs
    (float64); a factor a − j ≤ 0 (i.e. a < k) makes the ratio exactly 0.
    """
    a = torch.as_tensor(a, dtype=torch.float64)
    b = torch.as_tensor(b, dtype=torch.float64)
    if k == 0:
        return torch.ones_like(a)
    j = torch.arange(k, dtype=torch.float64, device=a.device)
    num = (a.unsqueeze(-1) - j).clamp(min=0.0)
    den = (b.unsqueeze(-1) - j).clamp(min=1.0)  # b ≥ k by contract; the clamp only guards unused groups
    return torch.exp((num.log() - den.log()).sum(-1))


def passk_group_advantages(
    n: torch.Tensor, c: torch.Tensor, k: int, epsilon: float = 1e-6, norm_by_std: bool = True
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-group (Â⁺, Â⁻, ρ) of Pass@k Training's analytic advantage (docs/methods.md §9).

    Args:
        n: (G,) valid rollouts per group; groups with n = 0 get zeros.
        c: (G,) correct rollouts per group, 0 ≤ c ≤ n.
        k: subset size, 1 ≤ k ≤ n for every group with n > 0 (the caller checks
           and names the offending uid).
        epsilon: ε in the denominators σ + ε (verl's ``epsilon``).
        norm_by_std: divide by σ + ε as the paper does; ``False`` keeps the
           centred values (the Dr.GRPO-style choice of
           ``algorithm.norm_adv_by_std_in_grpo=false``).

    Returns:
        ``(adv_correct, adv_wrong, rho)``, each (G,) float64.
    """
    if not K_MIN <= k <= K_MAX:
        raise ValueError(
            f"algorithm.passk.k must be in [{K_MIN}, {K_MAX}] (the binomial ratios are checked up to n = {K_MAX}), "
            f"got {k}; set algorithm.passk.k=4 (default) or another value in range"
        )
    n = torch.as_tensor(n, dtype=torch.float64)
    c = torch.as_tensor(c, dtype=torch.float64)
    present = n > 0
    if bool((present & (n < k)).any()):
        raise ValueError(f"k={k} exceeds a group's size {int(n[present & (n < k)].min())}")
    nn = torch.where(present, n, torch.full_like(n, float(k)))  # absent groups: any n ≥ k, result zeroed below
    cc = torch.where(present, c, torch.zeros_like(c))
    rho = 1.0 - comb_ratio(nn - cc, nn, k)
    # C(n−c−1, k−1)/C(n−1, k−1): the chance that the other k−1 members of a wrong rollout's subsets are all wrong
    miss_others = comb_ratio((nn - cc - 1).clamp(min=0.0), nn - 1, k - 1)
    sigma = (rho * (1.0 - rho)).clamp(min=0.0).sqrt()
    scale = (sigma + epsilon) if norm_by_std else torch.ones_like(sigma)
    adv_pos = (1.0 - rho) / scale
    adv_neg = (1.0 - rho - miss_others) / scale
    zero = torch.zeros_like(rho)
    # Â⁺ exists only where a correct rollout does, Â⁻ only where a wrong one does (else 1/ε artefacts)
    has_pos, has_neg = present & (cc > 0), present & (cc < nn)
    return torch.where(has_pos, adv_pos, zero), torch.where(has_neg, adv_neg, zero), torch.where(present, rho, zero)


def passk_row_advantage(
    correct: torch.Tensor,
    gid: torch.Tensor,
    n_groups: int,
    valid: torch.Tensor,
    k: int,
    epsilon: float = 1e-6,
    norm_by_std: bool = True,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Pass@k advantage of every row: Â⁺ for correct rows, Â⁻ for wrong ones, 0 on padding rows.

    Returns ``(advantage (bs,), n (G,), rho (G,))``, float64.
    """
    valid = valid.to(torch.float64)
    corr = correct.to(torch.float64) * valid
    n = group_counts(valid, gid, n_groups)
    c = segment_sum(corr, gid, n_groups)
    pos, neg, rho = passk_group_advantages(n, c, k, epsilon=epsilon, norm_by_std=norm_by_std)
    adv = torch.where(corr > 0, pos[gid], neg[gid]) * valid
    return adv, n, rho
