"""``cue_grpo`` and ``f_cue_grpo``: rarity-aware credit redistribution.

    cue_grpo:    Â_i = w_i · A_i                 (Cue-GRPO, arXiv 2608.03467, Sec. 3; docs/methods.md §5)
    f_cue_grpo:  Â_i = (1 − p̂_g)^γ · w_i · A_i   (composition with F-GRPO; docs/methods.md §5)

A_i is the base group advantage (``algorithm.focal.base``, GRPO by default), w_i the
credit multiplier of :func:`verl_focal.core.credit.credit_multipliers_batch` for the
correct rollouts of each group (1 for incorrect rollouts), computed from the strategy
clusters of ``algorithm.cue.partitioner``.  Correctness follows
``algorithm.focal.correctness`` (the ``acc`` reward extra, else reward > threshold).

The clusters come from the hook's ``prepare`` step (:mod:`verl_focal.estimators.cue_step`),
which judges correctness by ``acc``.  The estimator re-partitions any group whose correct
rows differ from what ``prepare`` saw (no ``acc``, ``correctness=reward``, padding) and
counts it in ``cue/groups_repartitioned``.

Uniform-Boost control (``algorithm.cue.uniform_boost`` ≠ 1): every correct rollout's
advantage is multiplied by that factor and nothing is partitioned.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from verl_focal.config.schema import CueConfig
from verl_focal.core.credit import credit_multipliers_batch
from verl_focal.estimators.context import AdvantageContext
from verl_focal.estimators.cue_step import cue_needs, prefetch_cue, prepare_cue
from verl_focal.estimators.focal import base_advantage, focal_row_weights
from verl_focal.estimators.inputs import EstimatorInputs, broadcast, gather_inputs
from verl_focal.estimators.spec import EstimatorSpec
from verl_focal.partition.batch import partition_rows, rows_to_partition
from verl_focal.partition.diagnostics import credit_diagnostics
from verl_focal.partition.factory import partitioner_for
from verl_focal.partition.signatures import SIG_KEY

__all__ = ["SPECS", "compute_cue_grpo_advantage", "compute_f_cue_grpo_advantage", "credit_weights"]


def _cluster_labels(
    inp: EstimatorInputs, cue: CueConfig, gid: np.ndarray, rows: np.ndarray, metrics: dict[str, float]
) -> np.ndarray:
    """Cluster ids of ``rows`` (−1 elsewhere): ``prepare``'s where they match, partitioned here otherwise."""
    ctx = inp.ctx
    labels = None if ctx is None or ctx.cluster_labels is None else np.asarray(ctx.cluster_labels, dtype=np.int64)
    if labels is None:
        redo = rows
    else:
        # groups where prepare's labelled rows differ from this estimator's correct rows
        diff = (labels >= 0) != rows
        bad = np.zeros(inp.n_groups, dtype=bool)
        bad[gid[diff]] = True
        redo = rows & bad[gid]
        labels = np.where(bad[gid], -1, labels)
        metrics["cue/groups_repartitioned"] = float(bad.sum())
    if redo.any():
        new, m = partition_rows(
            partitioner_for(cue), cue, gid, redo,
            None if ctx is None else ctx.responses,
            None if ctx is None else ctx.problems,
            None if ctx is None else ctx.extras.get(SIG_KEY),
        )
        labels = new if labels is None else np.where(redo, new, labels)
        for k, v in m.items():
            metrics[k] = metrics.get(k, 0.0) + v
    if labels is None:
        labels = np.full(len(gid), -1, dtype=np.int64)
    return np.where(rows, labels, -1)


def credit_weights(inp: EstimatorInputs, cue: CueConfig) -> tuple[np.ndarray, dict[str, float]]:
    """w (bs,) float64 and the step's ``cue/*`` metrics: the credit multipliers, or the Uniform Boost."""
    gid = inp.gid.cpu().numpy()
    correct = inp.correct.cpu().numpy() > 0.5
    valid = inp.valid.cpu().numpy() > 0.5
    metrics: dict[str, float] = {}
    if cue.uniform_boost != 1.0:
        metrics["cue/uniform_boost"] = float(cue.uniform_boost)
        return np.where(correct & valid, cue.uniform_boost, 1.0), metrics
    rows = rows_to_partition(correct, valid, gid, inp.n_groups)
    labels = _cluster_labels(inp, cue, gid, rows, metrics)
    w = credit_multipliers_batch(
        gid, labels, alpha=cue.alpha,
        clip=None if cue.clip is None else tuple(cue.clip),
        renormalize=cue.renormalize, floor_mode=cue.floor_mode, floor=cue.floor,
    )
    metrics.update(credit_diagnostics(gid, labels, w))
    return w, metrics


def _cue_advantage(token_level_rewards, response_mask, config, index, epsilon, name, focal: bool, ctx):
    with torch.no_grad():
        inp = gather_inputs(token_level_rewards, response_mask, config, index, name, ctx)
        cue = inp.settings.cue
        adv = base_advantage(inp, epsilon)
        w, metrics = credit_weights(inp, cue)
        scalars = adv * torch.as_tensor(w, dtype=torch.float64, device=adv.device)
        if focal:
            scalars = scalars * focal_row_weights(inp)
        if inp.ctx is not None:
            inp.ctx.metrics.update(metrics)
        return broadcast(scalars, token_level_rewards, response_mask)


def compute_cue_grpo_advantage(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    config: Any = None,
    index: Any = None,
    epsilon: float = 1e-6,
    ctx: AdvantageContext | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Cue-GRPO advantage: rarity-aware credit redistribution over strategy clusters.

    Cue-GRPO (arXiv 2608.03467, Sec. 3; docs/methods.md §5).  Within group g with correct
    rollouts P split into clusters, C(i) the cluster of rollout i:

        w_i = n₊ · |C(i)|^(−α) / Σ_{j∈P} |C(j)|^(−α)   then clip, renormalise, floor
        Â_i = w_i · A_i  for i ∈ P,   Â_i = A_i  otherwise

    with A_i the base group advantage (``algorithm.focal.base``).  Only mixed groups with
    ≥ 2 correct rollouts are partitioned (elsewhere w ≡ 1 or A ≡ 0).  With
    ``algorithm.cue.partitioner=single`` or ``alpha=0`` it equals verl's ``grpo``.

    Args:
        token_level_rewards: (bs, response_length) token-level rewards; a row's score is their sum.
        response_mask: (bs, response_length) 1 on response tokens; an all-zero row is padding.
        config: verl's ``algorithm`` config (``AlgoConfig`` / DictConfig); reads ``algorithm.focal``
            and ``algorithm.cue``.
        index: (bs,) group uid of every row (``uid`` of the batch).
        epsilon: added to the group std in the base advantage, as in verl's GRPO.
        ctx: the step's context, which the hook passes (None: called without it, no extras).
        **kwargs: other arguments verl passes (ignored).

    Returns:
        ``(advantages, returns)``: both (bs, response_length), equal, Â_i broadcast over the
        row's response tokens and masked.
    """
    return _cue_advantage(token_level_rewards, response_mask, config, index, epsilon, "cue_grpo", False, ctx)


def compute_f_cue_grpo_advantage(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    config: Any = None,
    index: Any = None,
    epsilon: float = 1e-6,
    ctx: AdvantageContext | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Focal × Cue advantage: the focal weight on top of Cue-GRPO's credit redistribution.

    Composition of F-GRPO (arXiv 2602.06717, Sec. 3.3; docs/methods.md §2) with Cue-GRPO
    (arXiv 2608.03467, Sec. 3; docs/methods.md §5); tested in neither paper:

        Â_i = (1 − p̂_g)^γ · w_i · A_i

    with p̂_g the success rate of row i's group, γ = ``algorithm.focal.gamma`` and w_i as in
    :func:`compute_cue_grpo_advantage`.  With ``gamma=0`` it equals ``cue_grpo``.

    Args:
        token_level_rewards: (bs, response_length) token-level rewards; a row's score is their sum.
        response_mask: (bs, response_length) 1 on response tokens; an all-zero row is padding.
        config: verl's ``algorithm`` config; reads ``algorithm.focal`` and ``algorithm.cue``.
        index: (bs,) group uid of every row.
        epsilon: added to the group std in the base advantage, as in verl's GRPO.
        ctx: the step's context, which the hook passes (None: called without it, no extras).
        **kwargs: other arguments verl passes (ignored).

    Returns:
        ``(advantages, returns)``: both (bs, response_length), equal, Â_i broadcast over the
        row's response tokens and masked.
    """
    return _cue_advantage(token_level_rewards, response_mask, config, index, epsilon, "f_cue_grpo", True, ctx)


SPECS = [
    EstimatorSpec("cue_grpo", compute_cue_grpo_advantage, needs=cue_needs, prepare=prepare_cue, prefetch=prefetch_cue,
                  sections=frozenset({"cue"}), also_reads=frozenset({"focal.base"}), min_rollouts=3),
    EstimatorSpec("f_cue_grpo", compute_f_cue_grpo_advantage, needs=cue_needs, prepare=prepare_cue,
                  prefetch=prefetch_cue, sections=frozenset({"focal", "cue"}), min_rollouts=3),
]
