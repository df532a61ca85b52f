"""The rollout policy's log-probs for the estimators that read them (``unlikely_grpo``, ``ds_grpo``).

verl does not pass ``old_log_probs`` to an estimator: the trainer hooks reduce them per row
(:func:`sequence_log_prob_columns`: Σ_t log π_old over the response and the token count, here with the
names of those columns) into the :class:`~verl_focal.estimators.context.AdvantageContext` of an estimator
whose ``needs`` hold :data:`OLD_LOG_PROBS`.  :func:`read_old_log_probs`
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
from verl_focal.estimators.inputs import row_slices

__all__ = [
    "OLD_LOG_PROBS",
    "OLD_LOG_PROB_SUM",
    "OLD_LOG_PROB_TOKENS",
    "MissingLogProbsError",
    "check_old_log_probs_startup",
    "log_prob_columns_of",
    "read_old_log_probs",
    "sequence_log_prob_columns",
]

#: the need for the rollout policy's per-token log-probs (verl's ``old_log_probs``), reduced per row
OLD_LOG_PROBS = "old_log_probs"
#: ``AdvantageContext.extras`` keys the hook fills for :data:`OLD_LOG_PROBS`: the summed log-prob of the
#: response tokens (response_mask = 1) and their number, one float per row
OLD_LOG_PROB_SUM = "old_log_probs:sum"
OLD_LOG_PROB_TOKENS = "old_log_probs:tokens"


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


def sequence_log_prob_columns(log_probs: Any, masks: Any) -> dict[str, np.ndarray]:
    """Per-row Σ log π_old over response tokens and the token count.

    ``log_probs``, ``masks``: (bs, L) tensors (verl's padded ``old_log_probs`` and ``response_mask``).
    Returns ``{OLD_LOG_PROB_SUM: (bs,), OLD_LOG_PROB_TOKENS: (bs,)}`` float64 host arrays.  The products with the
    mask are taken in the log-probs' own dtype (exact for a 0/1 mask) and summed in float64, a slice of rows at a
    time (:func:`~verl_focal.estimators.inputs.row_slices`) in one reused buffer, so the temporaries stay in the
    CPU's cache; the sums are bit for bit those of the whole batch at once.  An integer or boolean mask is
    counted in integers (exact), a floating one in float64 as the products.
    """
    lp = torch.as_tensor(log_probs).detach()
    mask = torch.as_tensor(masks).detach()
    if lp.shape != mask.shape:
        raise ValueError(f"old_log_probs {tuple(lp.shape)} and response_mask {tuple(mask.shape)} differ in shape")
    if lp.ndim != 2:
        m = mask.to(lp.dtype)
        return {OLD_LOG_PROB_SUM: (lp * m).sum(-1, dtype=torch.float64).cpu().numpy(),
                OLD_LOG_PROB_TOKENS: m.sum(-1, dtype=torch.float64).cpu().numpy()}
    n = lp.shape[0]
    sums = torch.empty(n, dtype=torch.float64, device=lp.device)
    floating = mask.is_floating_point() or mask.is_complex()
    counts = torch.empty(n, dtype=torch.float64, device=lp.device) if floating else \
        mask.sum(-1).to(torch.float64)
    if n:
        slices = list(row_slices(n, lp.shape[1]))
        buf = torch.empty((max(b - a for a, b in slices), lp.shape[1]), dtype=lp.dtype, device=lp.device)
        for a, b in slices:
            prod = buf[: b - a]
            prod.copy_(mask[a:b])  # the mask in the log-probs' dtype
            if floating:
                torch.sum(prod, -1, dtype=torch.float64, out=counts[a:b])
            torch.sum(prod.mul_(lp[a:b]), -1, dtype=torch.float64, out=sums[a:b])
    return {OLD_LOG_PROB_SUM: sums.cpu().numpy(), OLD_LOG_PROB_TOKENS: counts.cpu().numpy()}


def log_prob_columns_of(tensors: Any) -> dict[str, np.ndarray] | None:
    """:func:`sequence_log_prob_columns` of a DataProto's ``batch`` (``old_log_probs`` with its
    ``response_mask``, else the response part of ``attention_mask``); None without ``old_log_probs``."""
    keys = set(tensors.keys()) if tensors is not None else set()
    if "old_log_probs" not in keys:
        return None
    lp = tensors["old_log_probs"]
    mask = tensors["response_mask"] if "response_mask" in keys else tensors["attention_mask"][:, -lp.shape[-1]:]
    return sequence_log_prob_columns(lp, mask)
