"""The MaxRL advantage (Tajwar et al., "Maximum Likelihood Reinforcement Learning", arXiv 2602.02710;
docs/methods.md §11).

With 0/1 correctness c_i and a group's success rate p̂_g = mean of its c_i,

    Â_i = (c_i − p̂_g) / (p̂_g + ε)

GRPO's centring, divided by the success rate instead of the std: a correct rollout of a
group that solves the prompt once in N gets about N − 1, one of a group that solves it every
time gets 0.  For 0/1 rewards it is GRPO's population-std advantage times √((1 − p̂)/p̂), a
per-group weight that rises on hard prompts.

Two guards where the formula has no meaning: a group with no correct rollout (p̂ = 0) gets 0
(its numerator is 0 already), and a group with one valid rollout gets 0 (there is no group to
compare with; the authors' code gives it r/ε).  No verl import.
"""

from __future__ import annotations

import torch

from verl_focal.core.groups import group_success_rate

__all__ = ["EPSILON_DEFAULT", "maxrl_advantage"]

#: the authors' ε (their verl fork's default)
EPSILON_DEFAULT = 1e-6


def maxrl_advantage(
    correct: torch.Tensor, gid: torch.Tensor, n_groups: int, valid: torch.Tensor, epsilon: float = EPSILON_DEFAULT
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Â_i = (c_i − p̂_g)/(p̂_g + ε) per row (MaxRL, arXiv 2602.02710, as the authors' code computes it;
    docs/methods.md §11).

    Args:
        correct: (bs,) 0/1 correctness (0 on padding rows).
        gid: (bs,) int64 contiguous group ids.
        n_groups: the number of groups G.
        valid: (bs,) 1 for real rows, 0 for padding rows (which leave every statistic and get 0).
        epsilon: ε > 0 in the denominator.

    Returns:
        ``(advantage (bs,), p_hat (G,), n (G,))``, float64: the advantage is 0 on padding rows, in
        groups with no correct rollout and in groups with a single valid row.
    """
    if not epsilon > 0:
        raise ValueError(f"algorithm.maxrl.epsilon must be > 0, got {epsilon}; set algorithm.maxrl.epsilon=1e-06 "
                         "(default)")
    c = torch.as_tensor(correct, dtype=torch.float64)
    v = torch.as_tensor(valid, dtype=torch.float64)
    p_hat, n = group_success_rate(c, gid, n_groups, v)
    p_row = p_hat[gid]
    adv = (c - p_row) / (p_row + float(epsilon))
    keep = (v > 0) & (n[gid] > 1) & (p_row > 0)
    return torch.where(keep, adv, torch.zeros_like(adv)), p_hat, n
