"""What every group-relative estimator of ours does first with verl's arguments.

:func:`gather_inputs` turns ``(token_level_rewards, response_mask, config,
index)`` plus the step's :class:`AdvantageContext` (an argument, passed by the hook) into validated, row-aligned
tensors: scalar scores, the valid-row mask, contiguous group ids, correctness
and the parsed config sections.  Kept separate so ``f_grpo`` and the Cue-GRPO
estimators share one data path; :func:`broadcast` is what every one of them does last (one scalar per row
over its response tokens).  Both pass over verl's (bs, L) tensors, the only large ones of a step (2,048 x 8,192:
64 MiB of rewards, 128 MiB of int64 mask): :func:`row_sums` reduces them a slice of rows at a time on the CPU,
bit for bit the whole-batch sum, and :func:`broadcast` converts the mask once and scales it in place.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from verl_focal.config.schema import AlgorithmSettings, ConfigError, parse_settings
from verl_focal.core.groups import group_ids
from verl_focal.estimators.context import AdvantageContext

__all__ = ["CORRECTNESS_KEYS", "EstimatorInputs", "broadcast", "gather_inputs", "resolve_base", "row_slices",
           "row_sums", "settings_for"]

#: the keys of ``algorithm.focal`` that say where correctness comes from: every estimator of ours reads them
CORRECTNESS_KEYS = frozenset({"correctness", "correct_threshold", "acc_key"})

logger = logging.getLogger(__name__)

#: elements per slice of rows in :func:`row_sums` and the old log-probs' reduction: 64 rows of 8,192 tokens,
#: whose float32 temporaries (2 MiB) stay in the CPU's cache between the operations on them
SLICE_ELEMENTS = 1 << 19


def row_slices(n_rows: int, row_length: int, elements: int = SLICE_ELEMENTS) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` of consecutive slices of about ``elements`` elements (at least 2 rows) covering ``n_rows``.

    A last slice of a single row joins the one before: torch sums a lone long row (≥ 32,768 elements) in two
    halves on two threads, in another order than the same row among others.

    >>> list(row_slices(5, 1, elements=2))
    [(0, 2), (2, 5)]
    """
    step = max(2, elements // max(1, row_length))
    start = 0
    while start < n_rows:
        stop = n_rows if n_rows - (start + step) < 2 else start + step
        yield start, stop
        start = stop


def row_sums(x: torch.Tensor, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """``x.sum(-1, dtype=dtype)`` of a 2-D tensor, bit for bit, a slice of rows at a time on the CPU.

    Upcasting in the sum is what costs: float32 to float64 over 2,048 x 8,192 takes a fifth of the CPU time by
    slices, whose converted values stay in the cache.  Each row is still summed by the same kernel, so the result
    is the whole-batch sum's (``tests/estimators/test_row_reductions.py``).  Other devices: at once.
    """
    if x.device.type != "cpu" or x.ndim != 2:
        return x.sum(-1, dtype=dtype)
    out = torch.empty(x.shape[0], dtype=dtype, device=x.device)
    for a, b in row_slices(x.shape[0], x.shape[1]):
        torch.sum(x[a:b], -1, dtype=dtype, out=out[a:b])
    return out


@dataclass
class EstimatorInputs:
    scores: torch.Tensor  # (bs,) float64 summed token-level rewards
    valid: torch.Tensor  # (bs,) float64 1 for real rows, 0 for padding rows
    gid: torch.Tensor  # (bs,) int64 contiguous group ids
    n_groups: int
    correct: torch.Tensor  # (bs,) float64 0/1 (0 on padding rows)
    acc_rows: int  # valid rows whose correctness came from the `acc` extra
    threshold_rows: int  # valid rows whose correctness came from reward > threshold
    settings: AlgorithmSettings  # the step's parsed algorithm config
    ctx: AdvantageContext | None
    index: np.ndarray


def resolve_base(base: str, settings: AlgorithmSettings) -> str:
    """``grpo`` becomes ``drgrpo`` when ``algorithm.norm_adv_by_std_in_grpo`` is false (as in verl)."""
    return "drgrpo" if base == "grpo" and not settings.norm_adv_by_std_in_grpo else base


def settings_for(config: Any, ctx: AdvantageContext | None) -> AlgorithmSettings:
    """The step's parsed settings: the hook's (``ctx.settings``, parsed once per step), else ``config``
    parsed here (an estimator called without the hook)."""
    if ctx is not None and ctx.settings is not None:
        return ctx.settings
    return parse_settings(config if config is not None else {})


def gather_inputs(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    config: Any,
    index: Any,
    estimator: str,
    ctx: AdvantageContext | None,
) -> EstimatorInputs:
    """Validate verl's arguments and the step's context ``ctx`` (None: called without the hook); compute
    per-row inputs.

    Correctness (docs/methods.md §1): the ``acc`` reward extra when the hook
    supplies it (``algorithm.focal.correctness`` auto/acc), else
    ``reward > algorithm.focal.correct_threshold``.

    Shapes: ``token_level_rewards`` and ``response_mask`` (bs, L); ``index`` (bs,); ``ctx`` of bs rows.
    """
    settings = settings_for(config, ctx)
    focal = settings.focal
    if index is None:
        raise ValueError(
            f"{estimator} groups rollouts by uid, but verl passed no `index`: the batch has no 'uid' column"
        )
    index = np.asarray(index, dtype=object)
    if token_level_rewards.ndim != 2 or token_level_rewards.shape != response_mask.shape:
        raise ValueError(
            f"token_level_rewards {tuple(token_level_rewards.shape)} and response_mask "
            f"{tuple(response_mask.shape)} must both be (batch, response_length)"
        )
    if len(index) != token_level_rewards.shape[0]:
        raise ValueError(f"index has {len(index)} rows but token_level_rewards has {token_level_rewards.shape[0]}")

    scores = row_sums(token_level_rewards.detach())  # float64: bf16 dense rewards are summed without rounding
    valid = (response_mask.detach().sum(dim=-1) > 0).to(torch.float64)
    bad = ~torch.isfinite(scores)
    if ctx is not None:
        ctx.check_alignment(index)
    if bool(bad.any()):
        # one broken reward must not end the step: the row leaves its group (advantage 0) and is counted
        rows = torch.nonzero(bad).flatten().cpu().tolist()  # a host read, on a warning's path only
        logger.warning(
            "%s: non-finite reward %s for uid %r (row %d; %d row(s)); those rows get advantage 0 and leave their "
            "groups; fix the reward function for that prompt", estimator, scores[rows[0]].cpu().item(), index[rows[0]],
            rows[0], len(rows),
        )
        scores = torch.where(bad, torch.zeros_like(scores), scores)
        valid = valid * (~bad).to(torch.float64)
    if ctx is not None:
        ctx.metrics["verl_focal/nonfinite_reward_rows"] = float(bad.sum())
    gid, n_groups = group_ids(index, device=scores.device)

    acc = None if ctx is None else ctx.acc
    if focal.correctness == "acc" and acc is None:
        raise ConfigError(
            f"algorithm.focal.correctness=acc but no `{focal.acc_key}` reached {estimator}: launch with "
            "`python -m verl_focal.main_ppo` (or trainer.v1.trainer_mode=focal_sync) and use a reward function "
            f"that returns `{focal.acc_key}`, or set algorithm.focal.correctness=auto"
        )
    by_threshold = (scores > focal.correct_threshold).to(torch.float64)
    if acc is not None and focal.correctness != "reward":
        acc_t = torch.as_tensor(acc, dtype=torch.float64, device=scores.device)
        have = torch.isfinite(acc_t)
        if focal.correctness == "acc":
            # a row the reward function gave no `acc` must not end the step: it leaves its group (advantage 0)
            missing = ~have & (valid > 0)
            if bool(missing.any()):
                i = int(torch.nonzero(missing)[0])
                logger.warning("%s: uid %r (row %d; %d row(s)) has no `%s` reward extra and correctness=acc; "
                               "those rows get advantage 0 and leave their groups", estimator, index[i], i,
                               int(missing.sum()), focal.acc_key)
                valid = valid * have.to(torch.float64)
            if ctx is not None:
                ctx.metrics["verl_focal/rows_without_acc"] = float(missing.sum())
        correct = torch.where(have, (acc_t > 0.5).to(torch.float64), by_threshold)
        acc_rows = int(((have) & (valid > 0)).sum())
    else:
        correct = by_threshold
        acc_rows = 0
    correct = correct * valid
    n_valid = int(valid.sum())
    return EstimatorInputs(
        scores=scores,
        valid=valid,
        gid=gid,
        n_groups=n_groups,
        correct=correct,
        acc_rows=acc_rows,
        threshold_rows=n_valid - acc_rows,
        settings=settings,
        ctx=ctx,
        index=index,
    )


def broadcast(scalars: torch.Tensor, token_level_rewards: torch.Tensor, response_mask: torch.Tensor):
    """One scalar per row over its response tokens, masked; returned as (advantages, returns).

    ``scalars`` in the rewards' dtype times the mask, in the dtype ``*`` would give (the two promoted): the mask
    is converted to it once and multiplied in place, the same products as ``scalars[:, None] * response_mask``
    (signed zeros included) at 60% of its time on the CPU, whose mixed-dtype product is the slow kind."""
    s = scalars.to(token_level_rewards.dtype).unsqueeze(-1)
    advantages = response_mask.to(torch.result_type(s, response_mask), copy=True).mul_(s)
    return advantages, advantages
