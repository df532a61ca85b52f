"""Partitioning a training batch: which rows, grouped how, and from signatures or text.

Cue-GRPO (arXiv 2608.03467, Sec. 3; docs/methods.md §5) redistributes credit only among
the correct rollouts of a *mixed* group with at least two correct rollouts: elsewhere
w ≡ 1 or A ≡ 0, so a partition could not change any advantage
(:func:`rows_to_partition`).  :func:`partition_rows` partitions such rows group by group,
choosing each group's source with :func:`group_source`:

==============  ==============================================================
``blank``       ``single`` / ``singleton``: labels do not depend on the texts
``signatures``  every correct rollout has a ``cue_sig`` of the partitioner's
                catalogue (``algorithm.cue.source`` auto / signature)
``text``        the decoded responses (``source`` auto / text); a judge
                partitioner gets all such groups of the batch at once
``sanitised``   no text, some signatures failed or come from another catalogue:
                those rollouts join the residual cluster and are counted
==============  ==============================================================

Anything else is a configuration error, raised with its fix.  Pure numpy: no verl import.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from verl_focal.config.schema import ConfigError, CueConfig
from verl_focal.partition.signatures import SIG_KEY, sanitised_signatures, signature_version, usable_signatures

__all__ = ["TEXT_FREE_PARTITIONERS", "rows_to_partition", "row_groups", "group_source", "partition_rows"]

#: partitioners whose labels do not depend on the texts (nothing to fetch but ``acc``)
TEXT_FREE_PARTITIONERS = ("single", "singleton")


def rows_to_partition(correct: np.ndarray, valid: np.ndarray, gid: np.ndarray, n_groups: int) -> np.ndarray:
    """Boolean (bs,): correct valid rows of groups with ≥ 2 correct and ≥ 1 incorrect valid rollout.

    Args:
        correct: (bs,) bool, the rollout is correct.
        valid: (bs,) bool, a real rollout (not padding).
        gid: (bs,) int, contiguous group ids in [0, n_groups).
        n_groups: number of groups.
    """
    n_pos = np.bincount(gid, weights=correct & valid, minlength=n_groups)
    n_val = np.bincount(gid, weights=valid, minlength=n_groups)
    mixed = (n_pos >= 2) & (n_pos < n_val)
    return correct & valid & mixed[gid]


def row_groups(gid: np.ndarray, idx: np.ndarray) -> list[np.ndarray]:
    """Row indices ``idx`` split by group: groups in id order, rows in row order.

    >>> [g.tolist() for g in row_groups(np.array([1, 0, 1, 0]), np.array([0, 1, 2, 3]))]
    [[1, 3], [0, 2]]
    """
    order = idx[np.argsort(gid[idx], kind="stable")]
    return np.split(order, np.flatnonzero(np.diff(gid[order])) + 1)


def group_source(part: Any, cue: CueConfig, sigs: Sequence[Any] | None, have_text: bool) -> str:
    """Where one group's labels come from: ``blank``, ``signatures``, ``text`` or ``sanitised``.

    ``sigs`` are the group's ``cue_sig`` values (None when the reward extra did not reach us),
    ``have_text`` whether decoded responses did.  Raises :class:`ConfigError` when
    ``algorithm.cue.source`` cannot be honoured.
    """
    if cue.partitioner in TEXT_FREE_PARTITIONERS:
        return "blank"
    if cue.source != "text" and sigs is not None and usable_signatures(part, sigs):
        return "signatures"
    if cue.source == "signature" and (sigs is None or signature_version(part) is None):
        raise ConfigError(
            f"algorithm.cue.source=signature but no `{SIG_KEY}` reward extra reached the estimator "
            f"(or partitioner {cue.partitioner!r} cannot cluster signatures); use verl_focal.reward.compute_score "
            f"with reward kwarg cue_set={cue.cue_set!r}, or set algorithm.cue.source=auto"
        )
    if have_text and cue.source != "signature":
        return "text"
    if sigs is not None and signature_version(part) is not None:
        return "sanitised"
    raise ConfigError(
        f"algorithm.cue.partitioner={cue.partitioner!r} needs each rollout's text or `{SIG_KEY}` signature, "
        "but neither reached the estimator: launch with `python -m verl_focal.main_ppo` "
        "(or trainer.v1.trainer_mode=focal_sync) so the verl-focal hook supplies them"
    )


def partition_rows(
    part: Any,
    cue: CueConfig,
    gid: np.ndarray,
    rows: np.ndarray,
    responses: Sequence[str] | None,
    problems: Sequence[str] | None,
    sigs: Sequence[Any] | None,
    prefetched: Sequence[Any] | None = None,
) -> tuple[np.ndarray, dict[str, float]]:
    """Cluster ids for the rows selected by boolean ``rows``, group by group.

    Args:
        part: the partitioner (:func:`verl_focal.partition.factory.partitioner_for`).
        cue: the validated ``algorithm.cue`` section.
        gid: (bs,) int group id of every row.
        rows: (bs,) bool, the rows to partition (usually :func:`rows_to_partition`).
        responses, problems: (bs,) decoded response / problem text, or None.
        sigs: (bs,) ``cue_sig`` reward extra, or None.
        prefetched: (bs,) signatures already extracted from the text of some rows (the hook's
            background prefetch), None elsewhere; a text group whose rows all have one is clustered
            from them with the same result as from its texts (``partition = partition_signatures ∘
            signatures``) and still counts as a text group.

    Returns:
        ``(labels, metrics)``: labels (bs,) int64, a group's selected rows labelled together
        in row order, −1 outside ``rows``; metrics ``cue/partition_time_s``,
        ``cue/groups_from_signatures``, ``cue/groups_from_text`` (of which ``cue/groups_prefetched``
        had their signatures extracted in the prefetch) and the partitioner's own.
    """
    labels = np.full(len(gid), -1, dtype=np.int64)
    batched = hasattr(part, "partition_signature_groups")  # every signature group of the batch in one call
    sig_rows: list[np.ndarray] = []
    sig_batch: list[Any] = []

    def from_signatures(g_rows: np.ndarray, g_sigs: list) -> None:
        if batched:
            sig_rows.append(g_rows)
            sig_batch.extend(g_sigs)
        else:
            labels[g_rows] = part.partition_signatures(g_sigs)

    idx = np.flatnonzero(rows)
    if idx.size == 0:  # nothing to partition this step: same metric keys as any other step
        return labels, {"cue/partition_time_s": 0.0, "cue/groups_from_signatures": 0.0, "cue/groups_from_text": 0.0,
                        "cue/groups_prefetched": 0.0}
    text_groups: list[np.ndarray] = []
    n_sig = n_pre = 0
    t0 = time.perf_counter()
    for g_rows in row_groups(gid, idx):
        g_sigs = None if sigs is None else [sigs[i] for i in g_rows]
        source = group_source(part, cue, g_sigs, responses is not None)
        if source == "blank":
            labels[g_rows] = part.partition([""] * len(g_rows))
        elif source == "signatures":
            from_signatures(g_rows, g_sigs)
            n_sig += 1
        elif source == "sanitised":
            from_signatures(g_rows, sanitised_signatures(part, g_sigs))
            n_sig += 1
        elif prefetched is not None and all(prefetched[i] is not None for i in g_rows):
            from_signatures(g_rows, [prefetched[i] for i in g_rows])
            n_pre += 1
        else:
            text_groups.append(g_rows)
    if sig_rows:
        at = np.concatenate(sig_rows)
        labels[at] = part.partition_signature_groups(sig_batch, gid[at])
    if text_groups:
        batch = [(None if problems is None else problems[g[0]], [responses[i] for i in g]) for g in text_groups]
        for g_rows, lab in zip(text_groups, part.partition_groups(batch)):
            if len(lab) != len(g_rows):
                raise RuntimeError(
                    f"partitioner {cue.partitioner!r} returned {len(lab)} labels for {len(g_rows)} texts"
                )
            labels[g_rows] = lab
    metrics = {
        "cue/partition_time_s": time.perf_counter() - t0,
        "cue/groups_from_signatures": float(n_sig),
        "cue/groups_from_text": float(len(text_groups) + n_pre),
        "cue/groups_prefetched": float(n_pre),
    }
    metrics.update({k: float(v) for k, v in part.pop_metrics().items()})
    return labels, metrics
