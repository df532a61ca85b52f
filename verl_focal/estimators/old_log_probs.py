"""The rollout policy's log-probs for the estimators that read them (``unlikely_grpo``, ``ds_grpo``).

verl does not pass ``old_log_probs`` to an estimator: the trainer hooks reduce them per row
(:func:`~verl_focal.estimators.rows.sequence_log_prob_columns`: Σ_t log π_old over the response and
the token count) into the :class:`~verl_focal.estimators.context.AdvantageContext` of an estimator
whose ``needs`` hold :data:`~verl_focal.estimators.rows.OLD_LOG_PROBS`.  :func:`read_old_log_probs`
takes them from there, and :func:`check_old_log_probs_startup` refuses, before anything starts, the one
configuration in which verl has none: bypass mode (``algorithm.rollout_correction.bypass_mode=true``,
old log-probs := the rollout's) without the rollout's log-probs
(``actor_rollout_ref.rollout.calculate_log_probs=false``).  No verl import.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from verl_focal.config.key_names import config_get
from verl_focal.config.schema import ConfigError
from verl_focal.estimators.rows import OLD_LOG_PROB_SUM, OLD_LOG_PROB_TOKENS

__all__ = ["MissingLogProbsError", "check_old_log_probs_startup", "read_old_log_probs"]


class MissingLogProbsError(ConfigError):
    """An estimator that reads the rollout policy's log-probs ran without them."""


def read_old_log_probs(inp: Any, why: str) -> tuple[torch.Tensor, torch.Tensor]:
    """``(Σ_t log π_old (bs,), token count (bs,))``, float64 on the batch's device, from the hook's context of ``inp``
    (:class:`~verl_focal.estimators.inputs.EstimatorInputs`).

    ``why`` starts the error message (``"unlikely_grpo ranks rollouts by their old log-probs"``).

    Raises:
        MissingLogProbsError: no hook context, or one without the columns.
        ValueError: the columns do not have one row per batch row.
    """
    ctx = inp.ctx
    extras = {} if ctx is None else ctx.extras
    if OLD_LOG_PROB_SUM not in extras or OLD_LOG_PROB_TOKENS not in extras:
        where = "no verl-focal trainer hook is active" if ctx is None else f"the hook ({ctx.source}) found none"
        raise MissingLogProbsError(
            f"{why}, which verl does not pass to an estimator, and "
            f"{where}: launch with `python -m verl_focal.main_ppo` (or trainer.v1.trainer_mode=focal_sync with "
            "stock main_ppo) and keep the old-log-prob pass on (it is on by default)"
        )
    device = inp.scores.device  # the columns are host arrays; the batch's tensors may be on a GPU
    s = torch.as_tensor(np.asarray(extras[OLD_LOG_PROB_SUM], dtype=np.float64), device=device)
    t = torch.as_tensor(np.asarray(extras[OLD_LOG_PROB_TOKENS], dtype=np.float64), device=device)
    if s.shape[0] != inp.scores.shape[0]:
        raise ValueError(f"{why.split()[0]}: {s.shape[0]} old log-prob rows for {inp.scores.shape[0]} batch rows")
    return s, t


def check_old_log_probs_startup(config: Any) -> None:
    """Refuse a trainer config that gives the estimator no old log-probs (the ``startup_check`` of
    ``unlikely_grpo`` and ``ds_grpo``).

    verl 0.9.1 (every trainer: ``RayPPOTrainer``, the v1 trainers, the separated ones) skips its
    old-log-prob pass when ``algorithm.rollout_correction.bypass_mode`` is true and uses the rollout's
    log-probs instead, which the rollout computes only with ``actor_rollout_ref.rollout.calculate_log_probs``.
    """
    if not bool(config_get(config, "algorithm.rollout_correction.bypass_mode") or False):
        return
    if bool(config_get(config, "actor_rollout_ref.rollout.calculate_log_probs") or False):
        return
    est = config_get(config, "algorithm.adv_estimator")
    est = getattr(est, "value", est)
    raise ConfigError(
        f"algorithm.adv_estimator={est} reads the rollout policy's log-probs, and with "
        "algorithm.rollout_correction.bypass_mode=true verl takes them from the rollout, which computes none: "
        "set actor_rollout_ref.rollout.calculate_log_probs=true (or algorithm.rollout_correction.bypass_mode=false)"
    )
