"""``cue_grpo`` and ``f_cue_grpo``: rarity-aware credit redistribution registered in verl.

    cue_grpo:    Â_i = w_i · A_i                 (Cue-GRPO, arXiv 2608.03467; methods.md §5)
    f_cue_grpo:  Â_i = (1 − p̂_g)^γ · w_i · A_i   (composition with F-GRPO; methods.md §5, last line)

A_i is the base group advantage (``algorithm.focal.base``, GRPO by default), w_i the
credit multiplier of :func:`verl_focal.core.credit.credit_multipliers_batch` for the
correct rollouts of each group (1 for incorrect rollouts), computed from the strategy
clusters of ``algorithm.cue.partitioner``.  Correctness follows
``algorithm.focal.correctness`` (the ``acc`` reward extra, else reward > threshold).

Where the partition comes from
------------------------------
Only *mixed* groups with at least two correct rollouts are partitioned: elsewhere
w ≡ 1 or A ≡ 0, so a partition could not change any advantage.

1. ``prepare`` (run by the trainer hook before verl's advantage computation) uses
   ``acc`` to find the correct rollouts and fills ``ctx.cluster_labels``.  For
   ``strategy_cue`` it starts from the per-response cue signatures (reward extra
   ``cue_sig``, made in the reward workers by ``verl_focal.reward.compute_score``)
   when every correct rollout of a group has one from the configured catalogue, else
   from the decoded response text.  A judge partitioner gets all groups at once.
2. The estimator re-partitions any group whose correct rows differ from what
   ``prepare`` saw (no ``acc``, ``correctness=reward``), and counts it.

Uniform-Boost control (``algorithm.cue.uniform_boost`` ≠ 1): every correct rollout's
advantage is multiplied by that factor and nothing is partitioned.
"""

from __future__ import annotations

import json
import time
from typing import Any, Sequence

import numpy as np
import torch

from verl_focal.config.schema import ConfigError, section_from_mapping, CueConfig
from verl_focal.core.credit import credit_multipliers_batch
from verl_focal.core.groups import group_ids
from verl_focal.integration.context import AdvantageContext
from verl_focal.integration.estimators_focal import base_advantage, broadcast, focal_row_weights
from verl_focal.integration.inputs import gather_inputs
from verl_focal.integration.registration import register_estimator
from verl_focal.partition.base import get_partitioner
from verl_focal.partition.diagnostics import credit_diagnostics

__all__ = [
    "SIG_KEY",
    "CUE_NEEDS",
    "cue_needs",
    "cue_config",
    "partitioner_for",
    "partition_rows",
    "prepare_cue",
    "prefetch_cue",
    "compute_cue_grpo_advantage",
    "compute_f_cue_grpo_advantage",
]

#: reward extra holding a response's cue signature (see verl_focal.partition.cues.signature)
SIG_KEY = "cue_sig"
#: what the hook fetches for our estimators (the superset; the hook fetches :func:`cue_needs` of the config)
CUE_NEEDS = frozenset({"acc", SIG_KEY, "responses", "problems"})
_NO_TEXT = ("single", "singleton")

_PARTITIONERS: dict[str, Any] = {}


def cue_config(algorithm_config: Any) -> CueConfig:
    """``algorithm.cue`` as a validated :class:`CueConfig`."""
    getter = getattr(algorithm_config, "get", None)
    return section_from_mapping(CueConfig, getter("cue", None) if getter else None, "algorithm.cue")


def cue_needs(algorithm_config: Any) -> frozenset[str]:
    """The per-row fields this config really uses (the hook could fetch only these).

    Decoding every response costs real time at advantage time; with signatures from the
    reward workers (``source=signature``) the text is never needed.
    """
    cue = cue_config(algorithm_config)
    if cue.uniform_boost != 1.0 or cue.partitioner in _NO_TEXT:
        return frozenset({"acc"})
    if cue.partitioner == "judge":
        return frozenset({"acc", "responses", "problems"})
    if cue.source == "signature":
        return frozenset({"acc", SIG_KEY})
    if cue.source == "text":
        return frozenset({"acc", "responses", "problems"})
    return CUE_NEEDS


def partitioner_for(cue: CueConfig):
    """The (cached, long-lived) partitioner that ``algorithm.cue`` describes."""
    name = cue.partitioner
    if name == "judge":
        from verl_focal.partition.judge import shared_judge

        return shared_judge(cue)
    strategy_kw = {"cue_set": cue.cue_set, "epsilon": cue.epsilon, "rho": cue.rho,
                   "backend": cue.backend, "timeout": cue.extract_timeout}
    kw = dict(cue.partitioner_kwargs)
    if name == "strategy_cue":
        kw = {**strategy_kw, **kw}
    elif name == "random":
        kw.setdefault("seed", cue.seed)
        if kw.get("reference", "strategy_cue") == "strategy_cue":
            kw = {**strategy_kw, **kw}
    key = json.dumps([name, kw], sort_keys=True, default=str)
    part = _PARTITIONERS.get(key)
    if part is None:
        try:
            part = _PARTITIONERS[key] = get_partitioner(name, **kw)
        except ValueError as e:
            raise ConfigError(str(e)) from e
    return part


def _sig_version(part: Any) -> str | None:
    """Catalogue version of a partitioner that can cluster from signatures, else None."""
    if not hasattr(part, "partition_signatures"):
        return None
    return getattr(part, "version", None) or getattr(getattr(part, "reference", None), "version", None)


def _usable_signatures(part: Any, sigs: Sequence[Any]) -> bool:
    version = _sig_version(part)
    if version is None:
        return False
    prefix = f"{version}:"
    return all(isinstance(s, str) and s.startswith(prefix) for s in sigs)


def _sanitised(part: Any, sigs: Sequence[Any]) -> list[str]:
    """Malformed signatures (e.g. the reward's "" after a failure) become failures: residual, counted."""
    version = _sig_version(part)
    return [s if isinstance(s, str) and ":" in s else f"{version}:!error" for s in sigs]


def _row_groups(gid: np.ndarray, idx: np.ndarray) -> list[np.ndarray]:
    """Selected row indices split by group, groups in id order, rows in row order."""
    order = idx[np.argsort(gid[idx], kind="stable")]
    return np.split(order, np.flatnonzero(np.diff(gid[order])) + 1)


def partition_rows(
    part: Any,
    cue: CueConfig,
    gid: np.ndarray,
    rows: np.ndarray,
    responses: Sequence[str] | None,
    problems: Sequence[str] | None,
    sigs: Sequence[Any] | None,
) -> tuple[np.ndarray, dict[str, float]]:
    """Cluster ids (−1 outside ``rows``) for the rows selected by boolean ``rows``, group by group.

    Each group's selected rows are partitioned together, in row order; the source is
    the signature column when usable (``source`` auto/signature), else the text.
    """
    n = len(gid)
    labels = np.full(n, -1, dtype=np.int64)
    idx = np.flatnonzero(rows)
    counts = {"sig": 0, "text": 0, "none": 0}
    if idx.size == 0:  # nothing to partition this step: same metric keys as any other step
        return labels, {"cue/partition_time_s": 0.0, "cue/groups_from_signatures": 0.0, "cue/groups_from_text": 0.0}
    groups = _row_groups(gid, idx)
    text_groups: list[np.ndarray] = []
    t0 = time.perf_counter()
    for g_rows in groups:
        g_sigs = None if sigs is None else [sigs[i] for i in g_rows]
        if cue.partitioner in _NO_TEXT:
            labels[g_rows] = part.partition([""] * len(g_rows))
            counts["none"] += 1
        elif cue.source != "text" and g_sigs is not None and _usable_signatures(part, g_sigs):
            labels[g_rows] = part.partition_signatures(g_sigs)
            counts["sig"] += 1
        elif cue.source == "signature" and (g_sigs is None or _sig_version(part) is None):
            raise ConfigError(
                f"algorithm.cue.source=signature but no `{SIG_KEY}` reward extra reached the estimator "
                f"(or partitioner {cue.partitioner!r} cannot cluster signatures); use verl_focal.reward.compute_score "
                f"with reward kwarg cue_set={cue.cue_set!r}, or set algorithm.cue.source=auto"
            )
        elif responses is not None and cue.source != "signature":
            text_groups.append(g_rows)
        elif g_sigs is not None and _sig_version(part) is not None:
            # some signatures failed or come from another catalogue and there is no text:
            # those rollouts join the residual cluster and are counted
            labels[g_rows] = part.partition_signatures(_sanitised(part, g_sigs))
            counts["sig"] += 1
        else:
            raise ConfigError(
                f"algorithm.cue.partitioner={cue.partitioner!r} needs each rollout's text or `{SIG_KEY}` signature, "
                "but neither reached the estimator: launch with `python -m verl_focal.main_ppo` "
                "(or trainer.v1.trainer_mode=focal_sync) so the verl-focal hook supplies them"
            )
    if text_groups:
        batch = [(None if problems is None else problems[g[0]], [responses[i] for i in g]) for g in text_groups]
        for g_rows, lab in zip(text_groups, part.partition_groups(batch)):
            if len(lab) != len(g_rows):
                raise RuntimeError(f"partitioner {cue.partitioner!r} returned {len(lab)} labels for {len(g_rows)} texts")
            labels[g_rows] = lab
        counts["text"] += len(text_groups)
    metrics = {
        "cue/partition_time_s": time.perf_counter() - t0,
        "cue/groups_from_signatures": float(counts["sig"]),
        "cue/groups_from_text": float(counts["text"]),
    }
    metrics.update({k: float(v) for k, v in part.pop_metrics().items()})
    return labels, metrics


def _active_rows(correct: np.ndarray, valid: np.ndarray, gid: np.ndarray, n_groups: int) -> np.ndarray:
    """Correct rows of groups with ≥ 2 correct and ≥ 1 incorrect valid rollout."""
    n_pos = np.bincount(gid, weights=correct & valid, minlength=n_groups)
    n_val = np.bincount(gid, weights=valid, minlength=n_groups)
    active = (n_pos >= 2) & (n_pos < n_val)
    return correct & valid & active[gid]


def _prepare_rows(ctx: AdvantageContext) -> tuple[np.ndarray, np.ndarray]:
    """Group ids and the rows ``prepare`` partitions (correct rows of mixed groups, by ``acc``)."""
    gid_t, n_groups = group_ids(ctx.uids)
    gid = gid_t.numpy()
    acc = np.asarray(ctx.acc, dtype=np.float64)
    have = np.isfinite(acc)
    # rows without `acc` (padding) are treated as absent here; the estimator re-checks
    return gid, _active_rows(have & (acc > 0.5), have, gid, n_groups)


def prefetch_cue(ctx: AdvantageContext, algorithm_config: Any) -> None:
    """Start the judge's requests for this step early (the v1 hook calls this before the
    old-log-prob pass); :func:`prepare_cue` later sends the same groups and joins the
    requests still in flight, or finds the answers cached.  Other partitioners are fast
    and need no prefetch."""
    cue = cue_config(algorithm_config)
    if cue.partitioner != "judge" or cue.uniform_boost != 1.0 or ctx.acc is None or ctx.responses is None:
        return
    part = partitioner_for(cue)
    if not hasattr(part, "prefetch"):
        return
    gid, rows = _prepare_rows(ctx)
    groups = _row_groups(gid, np.flatnonzero(rows))
    if groups and groups[0].size:
        part.prefetch([(None if ctx.problems is None else ctx.problems[g[0]], [ctx.responses[i] for i in g]) for g in groups])


def prepare_cue(ctx: AdvantageContext, algorithm_config: Any) -> None:
    """Hook step before verl's advantage computation: fill ``ctx.cluster_labels`` from ``acc``.

    Without ``acc`` it does nothing; the estimator then partitions by itself.
    """
    cue = cue_config(algorithm_config)
    if cue.uniform_boost != 1.0 or ctx.acc is None:
        return
    gid, rows = _prepare_rows(ctx)
    labels, metrics = partition_rows(
        partitioner_for(cue), cue, gid, rows, ctx.responses, ctx.problems, ctx.extras.get(SIG_KEY)
    )
    ctx.cluster_labels = labels
    ctx.metrics.update(metrics)


def _cue_advantage(token_level_rewards, response_mask, config, index, epsilon, name, focal: bool):
    with torch.no_grad():
        inp = gather_inputs(token_level_rewards, response_mask, config, index, name)
        cue = cue_config(config if config is not None else {})
        adv = base_advantage(inp, config, epsilon)
        gid = inp.gid.cpu().numpy()
        correct = inp.correct.cpu().numpy() > 0.5
        valid = inp.valid.cpu().numpy() > 0.5
        metrics: dict[str, float] = {}
        if cue.uniform_boost != 1.0:
            w = np.where(correct & valid, cue.uniform_boost, 1.0)
            metrics["cue/uniform_boost"] = float(cue.uniform_boost)
        else:
            rows = _active_rows(correct, valid, gid, inp.n_groups)
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
            w = credit_multipliers_batch(
                gid, np.where(rows, labels, -1), alpha=cue.alpha,
                clip=None if cue.clip is None else tuple(cue.clip),
                renormalize=cue.renormalize, floor_mode=cue.floor_mode, floor=cue.floor,
            )
            metrics.update(credit_diagnostics(gid, np.where(rows, labels, -1), w))
        scalars = adv * torch.as_tensor(w, dtype=torch.float64, device=adv.device)
        if focal:
            scalars = scalars * focal_row_weights(inp)
        if inp.ctx is not None:
            inp.ctx.metrics.update(metrics)
        return broadcast(scalars, token_level_rewards, response_mask)


@register_estimator("cue_grpo", needs=cue_needs, prepare=prepare_cue, prefetch=prefetch_cue)
def compute_cue_grpo_advantage(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    config: Any = None,
    index: Any = None,
    epsilon: float = 1e-6,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Cue-GRPO: Â_i = w_i · A_i for correct rollouts, A_i otherwise (methods.md §5).

    With ``algorithm.cue.partitioner=single`` (or ``alpha=0``) it equals verl's ``grpo``.
    """
    return _cue_advantage(token_level_rewards, response_mask, config, index, epsilon, "cue_grpo", focal=False)


@register_estimator("f_cue_grpo", needs=cue_needs, prepare=prepare_cue, prefetch=prefetch_cue)
def compute_f_cue_grpo_advantage(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    config: Any = None,
    index: Any = None,
    epsilon: float = 1e-6,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Focal × Cue: Â_i = (1 − p̂_g)^γ · w_i · A_i (methods.md §5, composition; untested in either paper)."""
    return _cue_advantage(token_level_rewards, response_mask, config, index, epsilon, "f_cue_grpo", focal=True)
