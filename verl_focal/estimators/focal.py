"""``f_grpo``: the focal estimator (F-GRPO, F-DAPO, F-CISPO).

    Â_i = (1 − p̂_g)^γ · A_i        (F-GRPO, arXiv 2602.06717, Sec. 3.3; docs/methods.md §2)

A_i is the base group advantage (``algorithm.focal.base``: GRPO, Dr.GRPO or
RLOO) and p̂_g the group's success rate.  F-DAPO and F-CISPO are this same
estimator combined with verl's DAPO settings or ``loss_mode=cispo``.
"""

from __future__ import annotations

from typing import Any

import torch

from verl_focal.core.focal import focal_weight
from verl_focal.core.groups import group_advantage, group_success_rate
from verl_focal.estimators.context import AdvantageContext
from verl_focal.estimators.inputs import EstimatorInputs, broadcast, gather_inputs, resolve_base
from verl_focal.estimators.spec import EstimatorSpec

__all__ = ["SPEC", "compute_f_grpo_advantage", "focal_diagnostics", "base_advantage", "focal_row_weights"]


def focal_diagnostics(
    inp: EstimatorInputs, p_hat: torch.Tensor, n: torch.Tensor, weight: torch.Tensor
) -> dict[str, float]:
    """Step metrics: how many groups carry signal and how the focal weight treats them."""
    present = n > 0
    n_groups = int(present.sum())
    if n_groups == 0:
        return {"focal/groups": 0.0}
    p = p_hat[present]
    active = (p > 0) & (p < 1)
    q = torch.quantile(p, torch.tensor([0.1, 0.5, 0.9], dtype=p.dtype, device=p.device))
    out = {
        "focal/groups": float(n_groups),
        "focal/frac_all_correct": float((p == 1).double().mean()),
        "focal/frac_all_wrong": float((p == 0).double().mean()),
        "focal/frac_active": float(active.double().mean()),
        "focal/p_hat_mean": float(p.mean()),
        "focal/p_hat_p10": float(q[0]),
        "focal/p_hat_p50": float(q[1]),
        "focal/p_hat_p90": float(q[2]),
        "focal/p_hat_active_mean": float(p[active].mean()) if bool(active.any()) else 0.0,
        "focal/weight_mean_active": float(weight[present][active].mean()) if bool(active.any()) else 0.0,
        "focal/acc_from_extra_frac": inp.acc_rows / max(1, inp.acc_rows + inp.threshold_rows),
    }
    return out


def base_advantage(inp: EstimatorInputs, epsilon: float) -> torch.Tensor:
    """A_i: the group advantage of ``algorithm.focal.base`` (float64, 0 on padding rows)."""
    base = resolve_base(inp.settings.focal.base, inp.settings)
    return group_advantage(inp.scores, inp.gid, inp.n_groups, inp.valid, base=base, epsilon=epsilon).to(torch.float64)


def focal_row_weights(inp: EstimatorInputs) -> torch.Tensor:
    """g(x_i) = (1 − p̂_g)^γ for every row; the step diagnostics go to the hook's context, if any."""
    p_hat, n = group_success_rate(inp.correct, inp.gid, inp.n_groups, inp.valid)
    weight = focal_weight(p_hat, inp.settings.focal.gamma)
    if inp.ctx is not None:
        inp.ctx.metrics.update(focal_diagnostics(inp, p_hat, n, weight))
    return weight[inp.gid]


def compute_f_grpo_advantage(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    config: Any = None,
    index: Any = None,
    epsilon: float = 1e-6,
    ctx: AdvantageContext | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """F-GRPO advantage: the group advantage down-weighted on groups the policy already solves.

    F-GRPO (arXiv 2602.06717, Sec. 3.3; docs/methods.md §2):

        Â_i = (1 − p̂_g)^γ · A_i

    with A_i the base group advantage (``algorithm.focal.base``: GRPO, Dr.GRPO or RLOO), p̂_g
    the success rate of row i's group and γ = ``algorithm.focal.gamma``.  With ``gamma=0`` it
    equals verl's ``grpo`` / ``rloo`` (and Dr.GRPO with ``norm_adv_by_std_in_grpo=false``).

    Args:
        token_level_rewards: (bs, response_length) token-level rewards; a row's score is their sum.
        response_mask: (bs, response_length) 1 on response tokens; an all-zero row is padding.
        config: verl's ``algorithm`` config; reads ``algorithm.focal``.
        index: (bs,) group uid of every row.
        epsilon: added to the group std in the base advantage, as in verl's GRPO.
        ctx: the step's context, which the hook passes (None: called without it, no extras).
        **kwargs: other arguments verl passes (ignored).

    Returns:
        ``(advantages, returns)``: both (bs, response_length), equal (as verl's outcome
        estimators return them), Â_i broadcast over the row's response tokens and masked.
    """
    with torch.no_grad():
        inp = gather_inputs(token_level_rewards, response_mask, config, index, "f_grpo", ctx)
        g = focal_row_weights(inp)
        return broadcast(base_advantage(inp, epsilon) * g, token_level_rewards, response_mask)


SPEC = EstimatorSpec("f_grpo", compute_f_grpo_advantage, needs=frozenset({"acc"}), sections=frozenset({"focal"}))
