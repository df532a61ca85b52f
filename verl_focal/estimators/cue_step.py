"""What the trainer hook does for ``cue_grpo`` / ``f_cue_grpo`` before verl's advantage call.

* :func:`cue_needs`: the per-row fields to fetch for a config (decoding every response
  costs real time, and with signatures from the reward workers it is never needed);
* :func:`prefetch_cue`: start the slow part early, in the background from the old-log-prob pass
  (the judge's requests; the strategy-cue partition);
* :func:`prepare_cue`: partition the correct rollouts of every mixed group (found by the
  ``acc`` reward extra) and leave the labels in ``ctx.cluster_labels`` for the estimator.

The partitioner and the per-group choice of signatures or text live in
:mod:`verl_focal.partition` (:mod:`~verl_focal.partition.factory`,
:mod:`~verl_focal.partition.batch`); this module only connects them to the
:class:`~verl_focal.estimators.context.AdvantageContext`.  No verl import.
"""

from __future__ import annotations

import numpy as np

from verl_focal.config.schema import AlgorithmSettings
from verl_focal.core.groups import group_ids
from verl_focal.estimators.context import AdvantageContext
from verl_focal.partition.batch import (
    TEXT_FREE_PARTITIONERS,
    group_source,
    partition_rows,
    row_groups,
    rows_to_partition,
)
from verl_focal.partition.factory import partitioner_for
from verl_focal.partition.signatures import SIG_KEY

__all__ = ["CUE_NEEDS", "PREFETCHED_LABELS", "PREFETCHED_SIG", "cue_needs", "prefetch_cue", "prepare_cue"]

#: ``AdvantageContext.prefetched`` key: ``(labels, metrics)`` of the partition :func:`prefetch_cue` ran in the
#: background (labels −1: not partitioned); :func:`prepare_cue` hands them over.  Valid for exactly the context's
#: rows, as everything in ``prefetched``: a narrowed context (``select``) has none
PREFETCHED_LABELS = "cue:prefetched_labels"

#: ``AdvantageContext.extras`` key: cue signatures that :func:`prefetch_cue` extracted from the text
#: of the rows to partition (None elsewhere); :func:`prepare_cue` only clusters them
PREFETCHED_SIG = "cue_sig:prefetched"

#: every field the cue estimators can use; :func:`cue_needs` narrows it down per config
CUE_NEEDS = frozenset({"acc", SIG_KEY, "responses", "problems"})

#: built-in partitioners that never read the problem statement (``partition(texts, problem)`` ignores it):
#: without ``raw_prompt`` the hook would decode every row's prompt for nothing
PROBLEM_FREE_PARTITIONERS = ("strategy_cue",)


def _reads_problems(cue) -> bool:
    if cue.partitioner == "random":  # the control reads what its reference reads
        ref = (cue.partitioner_kwargs or {}).get("reference", "strategy_cue")
        return ref not in PROBLEM_FREE_PARTITIONERS + TEXT_FREE_PARTITIONERS
    return cue.partitioner not in PROBLEM_FREE_PARTITIONERS


def cue_needs(settings: AlgorithmSettings) -> frozenset[str]:
    """The per-row fields this ``algorithm`` config really uses (the hook fetches only these): ``problems`` only
    for a partitioner that may read them (the judge, a user's own)."""
    cue = settings.cue
    if cue.uniform_boost != 1.0 or cue.partitioner in TEXT_FREE_PARTITIONERS:
        return frozenset({"acc"})
    problems = frozenset({"problems"}) if _reads_problems(cue) else frozenset()
    if cue.partitioner == "judge" or cue.source == "text":
        return frozenset({"acc", "responses"}) | problems
    if cue.source == "signature":
        return frozenset({"acc", SIG_KEY})
    return CUE_NEEDS - {"problems"} | problems


def _rows_by_acc(ctx: AdvantageContext) -> tuple[np.ndarray, np.ndarray]:
    """Group ids and the rows to partition, judged by ``acc`` (rows without it count as absent)."""
    gid_t, n_groups = group_ids(ctx.uids)
    gid = gid_t.numpy()
    acc = np.asarray(ctx.acc, dtype=np.float64)
    have = np.isfinite(acc)
    # padding rows have no `acc`; the estimator re-checks the rows with verl's response mask
    return gid, rows_to_partition(have & (acc > 0.5), have, gid, n_groups)


def prefetch_cue(ctx: AdvantageContext, settings: AlgorithmSettings) -> None:
    """Start this step's slow group-level work early (the hooks call this in the background,
    during the old-log-prob pass).

    * judge: send the requests; :func:`prepare_cue` later sends the same groups and joins the
      requests still in flight, or finds the answers cached;
    * a partitioner that clusters signatures it extracts from text (``strategy_cue``): extract the
      cue signatures of the rows to partition now (:data:`PREFETCHED_SIG`; rows whose reward-side
      ``cue_sig`` will be used are not read), then partition every group, as :func:`prepare_cue`
      would, into :data:`PREFETCHED_LABELS` (metric ``cue/partitioned_in_prefetch``): the advantage
      step only hands the labels and the partition's metrics over.  If that partition fails,
      :func:`prepare_cue` partitions again (and reports the failure there).
    """
    cue = settings.cue
    if cue.uniform_boost != 1.0 or ctx.acc is None:
        return
    if ctx.responses is None and cue.partitioner == "judge":
        return
    part = partitioner_for(cue)
    gid, rows = _rows_by_acc(ctx)
    groups = row_groups(gid, np.flatnonzero(rows))
    if not groups or not groups[0].size:
        return
    if cue.partitioner == "judge":
        if hasattr(part, "prefetch"):
            problems = ctx.problems
            part.prefetch([(None if problems is None else problems[g[0]], [ctx.responses[i] for i in g])
                           for g in groups])
        return
    if not hasattr(part, "signatures"):
        return
    reward_sigs = ctx.extras.get(SIG_KEY)
    out = None
    if ctx.responses is not None:
        out = np.full(len(ctx), None, dtype=object)
        for g in groups:
            g_sigs = None if reward_sigs is None else [reward_sigs[i] for i in g]
            if group_source(part, cue, g_sigs, True) != "text":
                continue  # clustered from the reward's signatures, or not from text at all
            out[g] = part.signatures([ctx.responses[i] for i in g])
        ctx.extras[PREFETCHED_SIG] = out
    try:
        labels, metrics = partition_rows(part, cue, gid, rows, ctx.responses, ctx.problems, reward_sigs,
                                         prefetched=out)
    except Exception:  # noqa: BLE001 - prepare_cue partitions again and raises in the step
        return
    ctx.prefetched[PREFETCHED_LABELS] = (labels, {**metrics, "cue/partitioned_in_prefetch": 1.0})


def prepare_cue(ctx: AdvantageContext, settings: AlgorithmSettings) -> None:
    """Fill ``ctx.cluster_labels`` (−1: not partitioned) and add the partition metrics.

    Without ``acc`` it does nothing; the estimator then partitions by itself.
    """
    cue = settings.cue
    if cue.uniform_boost != 1.0 or ctx.acc is None:
        return
    done = ctx.prefetched.get(PREFETCHED_LABELS)
    if done is not None:  # partitioned in the background by prefetch_cue, on these very rows
        ctx.cluster_labels = np.asarray(done[0], dtype=np.int64)
        ctx.metrics.update(done[1])
        return
    gid, rows = _rows_by_acc(ctx)
    labels, metrics = partition_rows(
        partitioner_for(cue), cue, gid, rows, ctx.responses, ctx.problems, ctx.extras.get(SIG_KEY),
        prefetched=ctx.extras.get(PREFETCHED_SIG),
    )
    ctx.cluster_labels = labels
    ctx.metrics.update(metrics)
