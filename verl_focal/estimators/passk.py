"""``passk_grpo``: Pass@k Training's analytic group advantage.

    ρ  = 1 − C(n−c, k)/C(n, k),   σ = sqrt(ρ(1−ρ))
    Â⁺ = (1 − ρ)/(σ + ε)                                  (correct rollouts)
    Â⁻ = (1 − ρ − C(n−c−1, k−1)/C(n−1, k−1))/(σ + ε)      (wrong rollouts)

(Chen et al., arXiv 2508.10751, Sec. "Analytical Derivation"; docs/methods.md §9.)
n and c count a group's valid rollouts and its correct ones; correctness comes
from the ``acc`` reward extra when the hook supplies it, else
``reward > algorithm.focal.correct_threshold`` -- exactly as for ``f_grpo``.
``k`` is ``algorithm.passk.k``; a group with fewer valid rollouts than k falls back
to k = 1 (GRPO) and is counted.  ``algorithm.norm_adv_by_std_in_grpo=false`` drops the division by
σ + ε, as it does for verl's ``grpo``.
"""

from __future__ import annotations

from typing import Any

import torch

from verl_focal.config.key_names import config_get
from verl_focal.config.schema import ConfigError, parse_settings
from verl_focal.core.passk_advantage import passk_row_advantage
from verl_focal.estimators.context import AdvantageContext
from verl_focal.estimators.inputs import broadcast, gather_inputs
from verl_focal.estimators.spec import EstimatorSpec

__all__ = ["SPEC", "check_passk_startup", "compute_passk_grpo_advantage"]


def check_passk_startup(config: Any) -> None:
    """Refuse ``algorithm.passk.k`` larger than ``actor_rollout_ref.rollout.n`` before anything starts."""
    passk = parse_settings(config.algorithm).passk
    n = config_get(config, "actor_rollout_ref.rollout.n")
    if n is not None and passk.k > int(n):
        raise ConfigError(
            f"algorithm.passk.k={passk.k} is larger than actor_rollout_ref.rollout.n={n}: a group cannot hold a "
            f"{passk.k}-subset; set algorithm.passk.k<={n} or raise actor_rollout_ref.rollout.n"
        )


def _diagnostics(
    n: torch.Tensor, rho: torch.Tensor, correct: torch.Tensor, gid: torch.Tensor, k: int
) -> dict[str, float]:
    present = n > 0
    if not bool(present.any()):
        return {"passk/groups": 0.0}
    c = torch.zeros_like(n).index_add_(0, gid, correct)
    active = present & (rho > 0) & (rho < 1)
    return {
        "passk/groups": float(present.sum()),
        "passk/k": float(k),
        "passk/rho_mean": float(rho[present].mean()),
        "passk/frac_active": float(active[present].double().mean()),
        # groups with some wrong rollouts that still pass at k: their wrong rollouts are not pushed down
        "passk/frac_saturated": float((present & (rho == 1) & (c < n)).double().sum() / present.sum()),
    }


def compute_passk_grpo_advantage(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    config: Any = None,
    index: Any = None,
    epsilon: float = 1e-6,
    ctx: AdvantageContext | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Pass@k Training's analytic advantage, broadcast over response tokens and masked.

    Returns ``(advantages, returns)``, both (bs, L), equal, as verl's outcome
    estimators do; ``ctx`` is the step's context, which the hook passes (None: no extras).
    Padding rows (``response_mask`` all zero) get 0 and are not counted in n.  With
    ``algorithm.passk.k=1`` it equals GRPO with the population std of the 0/1 correctness.

    A group with 0 < n < k valid rollouts (a dropped or failed session; k ≤ rollout.n is
    checked at start-up) cannot hold a k-subset: it falls back to k = 1 (GRPO with the
    population std) and is counted in ``passk/short_groups``; the step goes on
    (docs/methods.md §9).
    """
    with torch.no_grad():
        inp = gather_inputs(token_level_rewards, response_mask, config, index, "passk_grpo", ctx)
        k = inp.settings.passk.k
        n = torch.zeros(inp.n_groups, dtype=torch.float64, device=inp.valid.device).index_add_(0, inp.gid, inp.valid)
        short = (n > 0) & (n < k)  # a dropped or failed rollout left fewer than k: such a group falls back to k = 1
        norm = inp.settings.norm_adv_by_std_in_grpo
        long_rows = inp.valid * (~short[inp.gid]).to(torch.float64)
        adv, _, rho = passk_row_advantage(inp.correct, inp.gid, inp.n_groups, long_rows, k, epsilon, norm)
        if bool(short.any()):
            short_rows = inp.valid * short[inp.gid].to(torch.float64)
            adv1, _, rho1 = passk_row_advantage(inp.correct, inp.gid, inp.n_groups, short_rows, 1, epsilon, norm)
            adv = torch.where(short[inp.gid], adv1, adv)
            rho = torch.where(short, rho1, rho)
        if inp.ctx is not None:
            inp.ctx.metrics.update(_diagnostics(n, rho, inp.correct, inp.gid, k))
            inp.ctx.metrics["passk/short_groups"] = float(short.sum())
        return broadcast(adv, token_level_rewards, response_mask)


SPEC = EstimatorSpec("passk_grpo", compute_passk_grpo_advantage, needs=frozenset({"acc"}),
                     startup_check=check_passk_startup, sections=frozenset({"passk"}))
