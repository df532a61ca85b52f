"""The whole batch's clustering at once (graph.cluster_groups, StrategyCuePartitioner.partition_signature_groups,
partition_rows' one call) gives every group the labels of the per-group implementation (cluster_sequences,
partition_signatures), on shuffled batches of uneven groups: interleaved rows, repeated and empty cue sequences,
failed and foreign signatures, every epsilon and rho regime."""

from __future__ import annotations

import warnings

import cue_corpus
import numpy as np
import pytest

from verl_focal.config.schema import parse_settings
from verl_focal.partition import get_partitioner
from verl_focal.partition.batch import partition_rows
from verl_focal.partition.cues import signature
from verl_focal.partition.graph import cluster_groups, cluster_sequences

CODES = ["sub", "ind", "sym", "mod", "geo", "cnt", "inv", "bij"]


def _batch(rng, n_groups: int):
    """Rows of uneven groups (1 to 16 rows), shuffled; each row a cue sequence drawn from a few per group."""
    sizes = rng.integers(1, 17, size=n_groups)
    group = np.repeat(rng.permutation(n_groups) * 3 + 5, sizes)  # non-contiguous ids
    seqs = [list(rng.choice(CODES, size=rng.integers(0, 5))) for _ in range(max(1, n_groups * 2))]
    which = rng.integers(0, len(seqs), size=group.size)
    order = rng.permutation(group.size)
    return seqs, which[order], group[order]


@pytest.mark.parametrize("seed", range(40))
def test_cluster_groups_equals_cluster_sequences_group_by_group(seed):
    rng = np.random.default_rng(seed)
    seqs, which, group = _batch(rng, int(rng.integers(1, 30)))
    eps = float(rng.choice([0.2, 0.5, 0.5 ** 0.5, 0.8, 1.0]))  # 1/sqrt(2): a cosine two rows can reach exactly
    rho = float(rng.choice([0.34, 0.5, 0.75, 1.0]))
    got = cluster_groups(seqs, which, group, eps, rho)
    for g in np.unique(group):
        rows = np.flatnonzero(group == g)
        assert got[rows].tolist() == cluster_sequences([seqs[i] for i in which[rows]], eps, rho), (g, eps, rho)


def test_cluster_groups_by_hand():
    """Two groups sharing codes stay apart; within the first, {a} and {a, b} link at eps 0.5 (cos 1/sqrt(2)),
    {c} is alone and the empty sequences form the residual cluster; in the second, "a" is in every row and is
    suppressed at rho 0.75, leaving {b} and two empties."""
    seqs = [["a"], ["a", "b"], ["c"], [], ["a", "b"], ["a"]]
    which = np.array([0, 4, 1, 2, 3, 5, 3, 0])
    group = np.array([7, 9, 7, 7, 7, 9, 7, 9])
    assert cluster_groups(seqs, which, group, 0.5, 0.75).tolist() == [0, 0, 0, 1, 2, 1, 2, 1]


def _signatures(rng, n: int):
    """Texts of the corpus and their cue_sig values as the reward workers write them, with some failures, a foreign
    catalogue and the reward's empty failure marker among them."""
    texts = cue_corpus.all_texts()
    rows = [texts[i] for i in rng.integers(0, len(texts), size=n)]
    sigs = [signature(t) for t in rows]
    for i in rng.choice(n, size=n // 10, replace=False):
        sigs[i] = str(rng.choice(["math_v1:!timeout", "other_v9:sub.ind", "math_v1:", ""]))
    return rows, sigs


@pytest.mark.parametrize("seed", range(6))
def test_partition_signature_groups_equals_partition_signatures(seed):
    rng = np.random.default_rng(seed)
    n = 400
    group = rng.integers(0, 60, size=n)
    sigs = [s or "math_v1:!error" for s in _signatures(rng, n)[1]]
    batch, single = get_partitioner("strategy_cue"), get_partitioner("strategy_cue")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the foreign catalogue's warning, once per partitioner
        got = batch.partition_signature_groups(sigs, group)
        for g in np.unique(group):
            rows = np.flatnonzero(group == g)
            assert got[rows].tolist() == single.partition_signatures([sigs[i] for i in rows])
    mb, ms = batch.pop_metrics(), single.pop_metrics()
    assert mb["cue/extract_failed"] == ms["cue/extract_failed"] > 0
    assert mb["cue/signature_mismatch"] == ms["cue/signature_mismatch"] > 0


class _PerGroup:
    """strategy_cue seen through its per-group methods only (the path of a partitioner without the batch one)."""

    def __init__(self, inner):
        self.version = inner.version
        self.partition_signatures, self.partition_groups = inner.partition_signatures, inner.partition_groups
        self.pop_metrics = inner.pop_metrics


@pytest.mark.parametrize("with_text", [True, False], ids=["text", "no-text"])
def test_partition_rows_batches_the_signature_groups_with_the_per_group_labels(with_text):
    """partition_rows on a shuffled batch: one call for every group clustered from signatures (reward-side,
    prefetched from text, or sanitised when no text came), the labels and metrics of the per-group path."""
    rng = np.random.default_rng(7)
    n = 600
    gid = rng.integers(0, 80, size=n)
    rows = rng.random(n) < 0.6
    texts, sigs = _signatures(rng, n)
    prefetched = np.array([signature(t) if g % 5 == 1 else None for t, g in zip(texts, gid)], dtype=object)
    cue = parse_settings({"cue": {"partitioner": "strategy_cue"}}).cue
    part = get_partitioner("strategy_cue")
    calls = []
    real = part.partition_signature_groups
    part.partition_signature_groups = lambda s, g: calls.append(len(s)) or real(s, g)
    responses = texts if with_text else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, m = partition_rows(part, cue, gid, rows, responses, None, sigs, prefetched=prefetched)
        ref, m_ref = partition_rows(_PerGroup(get_partitioner("strategy_cue")), cue, gid, rows, responses, None,
                                    sigs, prefetched=prefetched)
    assert len(calls) == 1 and 0 < calls[0] <= int(rows.sum())
    assert calls[0] == int(rows.sum()) or with_text  # without text every group is clustered from signatures
    assert got.tolist() == ref.tolist() and (got[~rows] == -1).all()
    timed = {"cue/partition_time_s", "cue/cluster_time_s", "cue/extract_time_s"}
    assert {k: v for k, v in m.items() if k not in timed} == {k: v for k, v in m_ref.items() if k not in timed}
    assert m["cue/groups_from_signatures"] > 0 and (m["cue/groups_prefetched"] > 0) == with_text
