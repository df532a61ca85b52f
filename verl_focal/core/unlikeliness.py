"""The unlikeliness reward of "Rewarding the Unlikely" (He, Fried & Welleck,
arXiv 2506.02355, Sec. "Unlikeliness reward"; docs/methods.md §10).

GRPO's update favours correct rollouts the policy already finds likely (the
paper's *rank bias*).  The unlikeliness reward lowers the reward of a correct
rollout by how likely it is among its group before the group advantage:

    r_i = R_i · (1 − β · (G − rank_i) / G)

where G is the number of (valid) rollouts of the prompt, rank_i ∈ {1, …, G}
the position of rollout i when the group is sorted by its likelihood under the
rollout (old) policy π_θold, 1 = most likely, and β (the paper's β_rank) the
strength.  The most likely rollout loses β·(G−1)/G of its reward, the least
likely nothing.  Wrong rollouts (R = 0 in the paper) are unchanged.  The usual
GRPO advantage is then computed from the r_i.

Ties in likelihood are broken by row order (the paper's ranking is a strict
order and does not say; identical sequences have identical likelihoods).
No verl import; vectorised with one lexicographic sort.
"""

from __future__ import annotations

import torch

from verl_focal.core.groups import group_counts

__all__ = ["likelihood_ranks", "sequence_log_likelihood", "unlikeliness_factor", "LIKELIHOODS", "BETA_MIN", "BETA_MAX"]

#: allowed ``algorithm.unlikely.likelihood`` values and ``algorithm.unlikely.beta`` range (the schema reads them here)
LIKELIHOODS = ("sum", "mean")
BETA_MIN, BETA_MAX = 0.0, 1.0


def sequence_log_likelihood(log_prob_sum: torch.Tensor, tokens: torch.Tensor, likelihood: str = "sum") -> torch.Tensor:
    """The per-rollout likelihood score used for ranking.

    ``sum``:  log π_θold(y|x) = Σ_t log π_θold(y_t | x, y_<t)  (the sequence likelihood).
    ``mean``: the per-token mean of the same log-probs (length-normalised).
    """
    s = torch.as_tensor(log_prob_sum, dtype=torch.float64)
    if likelihood == "sum":
        return s
    if likelihood == "mean":
        return s / torch.as_tensor(tokens, dtype=torch.float64).clamp(min=1.0)
    raise ValueError(f"algorithm.unlikely.likelihood={likelihood!r} is not one of {list(LIKELIHOODS)}; "
                     "set algorithm.unlikely.likelihood=sum (default) or mean")


def likelihood_ranks(
    score: torch.Tensor, gid: torch.Tensor, n_groups: int, valid: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """rank_i ∈ {1..G_g}: 1 for the most likely valid row of its group (ties: earlier row first).

    Returns ``(rank (bs,) float64 — 0 on padding rows, G (G,) valid rows per group)``.
    One stable sort on (group, −score, row) gives every group's order at once.
    """
    bs = score.shape[0]
    valid_b = valid > 0
    score = torch.as_tensor(score, dtype=torch.float64)
    if bool((~torch.isfinite(score) & valid_b).any()):
        i = int(torch.nonzero(~torch.isfinite(score) & valid_b)[0])
        raise ValueError(f"row {i} has a non-finite old log-probability ({score[i].cpu().item()}); cannot rank it")
    # padding rows go last inside their group by using +inf as their (negated) key
    key = torch.where(valid_b, -score, torch.full_like(score, float("inf")))
    order = torch.argsort(key, stable=True)
    order = order[torch.argsort(gid[order], stable=True)]  # group-major, likelihood-descending within
    g_sorted = gid[order]
    counts = torch.bincount(gid, minlength=n_groups)
    starts = torch.cumsum(counts, 0) - counts
    pos = torch.arange(bs, device=score.device) - starts[g_sorted]
    rank = torch.empty(bs, dtype=torch.float64, device=score.device)
    rank[order] = (pos + 1).to(torch.float64)
    n_valid = group_counts(valid.to(torch.float64), gid, n_groups)
    return rank * valid_b.to(torch.float64), n_valid


def unlikeliness_factor(
    score: torch.Tensor, correct: torch.Tensor, gid: torch.Tensor, n_groups: int, valid: torch.Tensor, beta: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-row reward multiplier: 1 − β(G − rank)/G on correct rows, 1 elsewhere (docs/methods.md §10).

    Returns ``(factor (bs,), rank (bs,))``, float64.
    """
    if not BETA_MIN <= float(beta) <= BETA_MAX:
        raise ValueError(f"algorithm.unlikely.beta must be in [{BETA_MIN}, {BETA_MAX}], got {beta}; "
                         "set algorithm.unlikely.beta=0.25 (the paper's) or another value in range")
    rank, n_valid = likelihood_ranks(score, gid, n_groups, valid)
    G = n_valid[gid].clamp(min=1.0)
    factor = 1.0 - float(beta) * (G - rank) / G
    is_corr = (correct > 0) & (valid > 0)
    return torch.where(is_corr, factor, torch.ones_like(factor)), rank
