"""``unlikely_grpo``: GRPO on the unlikeliness reward.

    r_i = R_i · (1 − β · (G − rank_i)/G)   for correct rollouts, r_i = R_i otherwise
    A_i = (r_i − mean_g r) / (std_g r + ε)                 (GRPO on the r_i)

(He, Fried & Welleck, arXiv 2506.02355, Sec. "Unlikeliness reward";
docs/methods.md §10.)  rank_i ∈ {1..G} orders the group's valid rollouts by
their likelihood under the rollout policy π_θold, 1 = most likely;
``algorithm.unlikely.likelihood`` picks the sequence log-probability (``sum``,
the paper's π_θold(y|x)) or its per-token mean (``mean``, the authors' code).
β is ``algorithm.unlikely.beta``; correctness is read as for ``f_grpo``.
``algorithm.norm_adv_by_std_in_grpo=false`` gives the Dr.GRPO variant.

The log-probs are verl's ``old_log_probs`` (the actor's recomputed ones, or the rollout's in
verl's bypass mode), which verl does not pass to an estimator: the hook around verl's
``compute_advantage`` reduces them from the DataProto it is handed
(:func:`~verl_focal.estimators.old_log_probs.sequence_log_prob_columns`) into the
:class:`~verl_focal.estimators.context.AdvantageContext`, and :mod:`.old_log_probs` reads them
there.  Called without the hook, the estimator refuses; a config without old log-probs
(bypass mode without the rollout's) is refused at start-up.
"""

from __future__ import annotations

from typing import Any

import torch

from verl_focal.core.groups import group_advantage
from verl_focal.core.unlikeliness import sequence_log_likelihood, unlikeliness_factor
from verl_focal.estimators.context import AdvantageContext
from verl_focal.estimators.inputs import broadcast, gather_inputs, resolve_base
from verl_focal.estimators.old_log_probs import (
    OLD_LOG_PROBS,
    MissingLogProbsError,
    check_old_log_probs_startup,
    read_old_log_probs,
)
from verl_focal.estimators.spec import EstimatorSpec

__all__ = ["SPEC", "MissingLogProbsError", "compute_unlikely_grpo_advantage"]


def _diagnostics(factor: torch.Tensor, correct: torch.Tensor, valid: torch.Tensor, beta: float) -> dict[str, float]:
    corr = (correct > 0) & (valid > 0)
    if not bool(corr.any()):
        return {"unlikely/correct_rows": 0.0, "unlikely/beta": float(beta)}
    f = factor[corr]
    return {
        "unlikely/correct_rows": float(corr.sum()),
        "unlikely/beta": float(beta),
        "unlikely/factor_mean": float(f.mean()),
        "unlikely/factor_min": float(f.min()),
    }


def compute_unlikely_grpo_advantage(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    config: Any = None,
    index: Any = None,
    epsilon: float = 1e-6,
    ctx: AdvantageContext | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """GRPO advantage of the unlikeliness-reweighted rewards, broadcast over tokens and masked.

    Returns ``(advantages, returns)``, both (bs, L), equal.  Padding rows get 0
    and are neither ranked nor counted in G.  With ``algorithm.unlikely.beta=0``
    it equals verl's ``grpo`` (``norm_adv_by_std_in_grpo`` honoured).  ``ctx`` is the step's context,
    which the hook passes, with the old log-probs.

    Raises:
        MissingLogProbsError: no hook context with the old log-probs.
    """
    with torch.no_grad():
        inp = gather_inputs(token_level_rewards, response_mask, config, index, "unlikely_grpo", ctx)
        section = inp.settings.unlikely
        lp_sum, lp_tokens = read_old_log_probs(inp, "unlikely_grpo ranks rollouts by their old log-probs")
        score = sequence_log_likelihood(lp_sum, lp_tokens, section.likelihood)
        # a NaN/inf log-prob (numerical fault in the old-log-prob pass) must not end the step: rank that
        # rollout as the least likely of its group (no penalty) and count it
        bad = ~torch.isfinite(score) & (inp.valid > 0)
        score = torch.where(bad, torch.full_like(score, -1e300), score)
        factor, _ = unlikeliness_factor(score, inp.correct, inp.gid, inp.n_groups, inp.valid, section.beta)
        rewards = inp.scores * factor
        base = resolve_base("grpo", inp.settings)
        adv = group_advantage(rewards, inp.gid, inp.n_groups, inp.valid, base=base, epsilon=epsilon)
        if inp.ctx is not None:
            inp.ctx.metrics.update(_diagnostics(factor, inp.correct, inp.valid, section.beta))
            inp.ctx.metrics["unlikely/nonfinite_logprob_rows"] = float(bad.sum())
        return broadcast(adv, token_level_rewards, response_mask)


SPEC = EstimatorSpec("unlikely_grpo", compute_unlikely_grpo_advantage, needs=frozenset({"acc", OLD_LOG_PROBS}),
                     startup_check=check_old_log_probs_startup, sections=frozenset({"unlikely"}))
