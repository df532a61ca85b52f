"""Differential smoothing, DS-GRPO (arXiv 2511.19942; docs/methods.md §12).

A term proportional to a rollout's mean log-probability under the rollout policy is added to
its group advantage, with opposite signs for correct and wrong rollouts:

    A_i = A_GRPO,i − c₊ · 1[correct_i] · ℓ̄_i + c₋ · 1[wrong_i] · ℓ̄_i

ℓ̄_i = (1/|y_i|) Σ_t log π_old(y_i,t | x, y_i,<t) ≤ 0, the token mean over the response.
Since ℓ̄ ≤ 0 the term raises a correct rollout's advantage and lowers a wrong one's, each the
more the less likely the rollout was; it applies in every group, all-correct and all-wrong
groups included.  No verl import.
"""

from __future__ import annotations

import torch

__all__ = ["COEF_DEFAULT", "STD_READINGS", "mean_log_prob", "smoothing_term"]

#: c₊ = c₋ of the authors' code
COEF_DEFAULT = 0.05
#: ``algorithm.ds_grpo.std``: the std of A_GRPO (population: the authors' code; sample: verl's GRPO)
STD_READINGS = ("population", "sample")


def mean_log_prob(log_prob_sum: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """ℓ̄_i = Σ_t log π_old / |y_i| per row, float64 (a row with no token gets its sum, 0 for padding).

    Shapes: both (bs,).
    """
    s = torch.as_tensor(log_prob_sum, dtype=torch.float64)
    return s / torch.as_tensor(tokens, dtype=torch.float64).clamp(min=1.0)


def smoothing_term(
    mean_lp: torch.Tensor, correct: torch.Tensor, valid: torch.Tensor, c_pos: float, c_neg: float
) -> torch.Tensor:
    """− c₊·1[correct_i]·ℓ̄_i + c₋·1[wrong_i]·ℓ̄_i per row (DS-GRPO, arXiv 2511.19942; docs/methods.md §12).

    Args:
        mean_lp: (bs,) ℓ̄_i; a non-finite value gives that row no term (the caller counts it).
        correct: (bs,) 0/1 correctness.
        valid: (bs,) 1 for real rows, 0 for padding rows (which get 0).
        c_pos, c_neg: c₊, c₋ ≥ 0.

    Returns:
        (bs,) float64.
    """
    if not (c_pos >= 0 and c_neg >= 0):
        raise ValueError(f"the DS-GRPO coefficients must be >= 0, got c+={c_pos}, c-={c_neg}; "
                         "set algorithm.ds_grpo.correct_coef=0.05 and algorithm.ds_grpo.incorrect_coef=0.05 (defaults)")
    lp = torch.as_tensor(mean_lp, dtype=torch.float64)
    real = torch.as_tensor(valid, dtype=torch.float64) > 0
    is_corr = torch.as_tensor(correct, dtype=torch.float64) > 0
    coef = torch.where(is_corr, torch.full_like(lp, -float(c_pos)), torch.full_like(lp, float(c_neg)))
    ok = real & torch.isfinite(lp)
    return torch.where(ok, coef * torch.where(ok, lp, torch.zeros_like(lp)), torch.zeros_like(lp))
