"""``maxrl``: the MaxRL advantage.

    Â_i = (c_i − p̂_g) / (p̂_g + ε)        (Tajwar et al., arXiv 2602.02710; docs/methods.md §11)

c_i is the rollout's 0/1 correctness, read as for ``f_grpo`` (the reward extra ``acc`` where the
reward writes it, else ``reward > algorithm.focal.correct_threshold``), never the shaped reward:
the formula is defined for 0/1 rewards only.  ε is ``algorithm.maxrl.epsilon``.  A group with no
correct rollout and a group of one valid rollout get 0; the singletons are counted in
``maxrl/singleton_groups``.  ``algorithm.norm_adv_by_std_in_grpo`` is not read (no std enters).
DAPO's group filter and CISPO's loss are verl settings and compose with it as with ``f_grpo``.
"""

from __future__ import annotations

from typing import Any

import torch

from verl_focal.core.maxrl import maxrl_advantage
from verl_focal.estimators.context import AdvantageContext
from verl_focal.estimators.inputs import broadcast, gather_inputs
from verl_focal.estimators.spec import EstimatorSpec

__all__ = ["SPEC", "compute_maxrl_advantage"]


def _diagnostics(p_hat: torch.Tensor, n: torch.Tensor, epsilon: float) -> dict[str, float]:
    present = n > 0
    out = {"maxrl/groups": float(present.sum()), "maxrl/singleton_groups": float((n == 1).sum())}
    active = present & (n > 1) & (p_hat > 0) & (p_hat < 1)
    out["maxrl/frac_active"] = float(active.sum()) / max(1.0, out["maxrl/groups"])
    if bool(active.any()):
        p = p_hat[active]
        # the per-group weight over GRPO's population-std advantage, √((1 − p̂)/p̂) at ε = 0
        out["maxrl/weight_mean_active"] = float((p * (1 - p)).sqrt().div(p + epsilon).mean())
    return out


def compute_maxrl_advantage(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    config: Any = None,
    index: Any = None,
    ctx: AdvantageContext | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """MaxRL advantage (arXiv 2602.02710; docs/methods.md §11), broadcast over response tokens and masked.

    Args:
        token_level_rewards: (bs, L); read only for correctness without ``acc``.
        response_mask: (bs, L); an all-zero row is padding (advantage 0, in no group).
        config: verl's ``algorithm`` config; reads ``algorithm.maxrl`` and the correctness keys.
        index: (bs,) group uid of every row.
        ctx: the step's context, which the hook passes (None: called without it, no extras).
        **kwargs: other arguments verl passes (``epsilon``, the GRPO std's, is not MaxRL's ε: ignored).

    Returns:
        ``(advantages, returns)``, both (bs, L), equal.
    """
    with torch.no_grad():
        inp = gather_inputs(token_level_rewards, response_mask, config, index, "maxrl", ctx)
        eps = inp.settings.maxrl.epsilon
        adv, p_hat, n = maxrl_advantage(inp.correct, inp.gid, inp.n_groups, inp.valid, eps)
        if inp.ctx is not None:
            inp.ctx.metrics.update(_diagnostics(p_hat, n, eps))
        return broadcast(adv, token_level_rewards, response_mask)


SPEC = EstimatorSpec("maxrl", compute_maxrl_advantage, needs=frozenset({"acc"}), sections=frozenset({"maxrl"}))
