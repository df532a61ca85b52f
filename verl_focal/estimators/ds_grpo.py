"""``ds_grpo``: GRPO with differential smoothing.

    A_i = A_GRPO,i − c₊ · 1[correct_i] · ℓ̄_i + c₋ · 1[wrong_i] · ℓ̄_i     (arXiv 2511.19942; docs/methods.md §12)

A_GRPO is GRPO's advantage of the summed reward with the group's population std (the authors'
code; ``algorithm.ds_grpo.std=sample`` for verl's), ℓ̄_i the token mean of the rollout policy's
log-probs over the response, correctness read as for ``f_grpo``, c₊ and c₋
``algorithm.ds_grpo.correct_coef`` / ``incorrect_coef``.  Groups are verl's uids, in any row order
and of any size; padding rows are in no group and get 0.  A group of one valid rollout takes
verl's GRPO convention (mean 0, std 1, as the authors' code) plus its smoothing term, and is
counted in ``ds_grpo/singleton_groups``.  ``algorithm.norm_adv_by_std_in_grpo=false`` drops the std.

The old log-probs reach it exactly as they reach ``unlikely_grpo`` (:mod:`.old_log_probs`); a
non-finite one gives its row no smoothing term and is counted in ``ds_grpo/nonfinite_logprob_rows``.
"""

from __future__ import annotations

from typing import Any

import torch

from verl_focal.core.groups import group_advantage, group_counts
from verl_focal.core.smoothing import mean_log_prob, smoothing_term
from verl_focal.estimators.context import AdvantageContext
from verl_focal.estimators.inputs import broadcast, gather_inputs, resolve_base
from verl_focal.estimators.old_log_probs import OLD_LOG_PROBS, check_old_log_probs_startup, read_old_log_probs
from verl_focal.estimators.spec import EstimatorSpec

__all__ = ["SPEC", "compute_ds_grpo_advantage"]


def compute_ds_grpo_advantage(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    config: Any = None,
    index: Any = None,
    epsilon: float = 1e-6,
    ctx: AdvantageContext | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """DS-GRPO advantage (arXiv 2511.19942; docs/methods.md §12), broadcast over response tokens and masked.

    Args:
        token_level_rewards: (bs, L); a row's reward is their sum.
        response_mask: (bs, L); an all-zero row is padding.
        config: verl's ``algorithm`` config; reads ``algorithm.ds_grpo`` and the correctness keys.
        index: (bs,) group uid of every row.
        epsilon: added to the group std, as in verl's GRPO.
        ctx: the step's context, which the hook passes (None: called without it, no extras).

    Returns:
        ``(advantages, returns)``, both (bs, L), equal.

    Raises:
        MissingLogProbsError: no hook context with the old log-probs.
    """
    with torch.no_grad():
        inp = gather_inputs(token_level_rewards, response_mask, config, index, "ds_grpo", ctx)
        section = inp.settings.ds_grpo
        lp_sum, lp_tokens = read_old_log_probs(inp, "ds_grpo smooths each rollout's advantage by its old log-probs")
        base = resolve_base("grpo", inp.settings)
        adv = group_advantage(inp.scores, inp.gid, inp.n_groups, inp.valid, base=base, epsilon=epsilon,
                              unbiased=section.std == "sample").to(torch.float64)
        lp_mean = mean_log_prob(lp_sum, lp_tokens)
        adv = adv + smoothing_term(lp_mean, inp.correct, inp.valid, section.correct_coef, section.incorrect_coef)
        if inp.ctx is not None:
            n = group_counts(inp.valid, inp.gid, inp.n_groups)
            real = inp.valid > 0
            inp.ctx.metrics.update({
                "ds_grpo/singleton_groups": float((n == 1).sum()),
                "ds_grpo/nonfinite_logprob_rows": float((~torch.isfinite(lp_mean) & real).sum()),
                "ds_grpo/mean_log_prob": float(lp_mean[real & torch.isfinite(lp_mean)].mean())
                if bool((real & torch.isfinite(lp_mean)).any()) else 0.0,
            })
        return broadcast(adv, token_level_rewards, response_mask)


SPEC = EstimatorSpec("ds_grpo", compute_ds_grpo_advantage, needs=frozenset({"acc", OLD_LOG_PROBS}),
                     startup_check=check_old_log_probs_startup, sections=frozenset({"ds_grpo"}))
