"""From ``algorithm.cue`` to a partitioner (partition/factory.py) and a batch's partition
(partition/batch.py, partition/signatures.py).  No verl."""

from __future__ import annotations

import cue_corpus
import numpy as np
import pytest

from verl_focal.config.schema import ConfigError, validate_algorithm_config
from verl_focal.partition.batch import group_source, partition_rows, row_groups, rows_to_partition
from verl_focal.partition.cues import signature
from verl_focal.partition.factory import partitioner_for, partitioner_kwargs, strategy_cue_kwargs
from verl_focal.partition.signatures import sanitised_signatures, signature_version, usable_signatures
from verl_focal.partition.strategy_cue import StrategyCuePartitioner


def cue(**kw):
    return validate_algorithm_config({"cue": kw})["cue"]


def test_strategy_cue_kwargs_name_every_field_of_the_section():
    c = cue(cue_set="math_v1", epsilon=0.4, rho=0.6, backend="regex", extract_timeout=1.5)
    want = {"cue_set": "math_v1", "epsilon": 0.4, "rho": 0.6, "backend": "regex", "timeout": 1.5}
    assert strategy_cue_kwargs(c) == want
    # every argument is one StrategyCuePartitioner accepts: building with them must work
    p = StrategyCuePartitioner(**strategy_cue_kwargs(c))
    assert (p.epsilon, p.rho, p.backend, p.timeout) == (0.4, 0.6, "regex", 1.5)


def test_partitioner_kwargs_per_partitioner():
    c = cue(epsilon=0.4, seed=7)
    strategy = strategy_cue_kwargs(c)
    assert partitioner_kwargs(c, "strategy_cue") == strategy
    assert partitioner_kwargs(c, "random") == {**strategy, "seed": 7}
    # a random control over another reference takes only the seed from the section
    assert partitioner_kwargs(c, "random", {"reference": "singleton"}) == {"seed": 7, "reference": "singleton"}
    assert partitioner_kwargs(c, "single") == {} and partitioner_kwargs(c, "judge") == {}
    # partitioner_kwargs win over the section
    assert partitioner_kwargs(c, "strategy_cue", {"epsilon": 0.9})["epsilon"] == 0.9
    assert partitioner_kwargs(c, "random", {"seed": 1})["seed"] == 1


def test_partitioner_for_builds_once_per_setting():
    a = partitioner_for(cue(epsilon=0.35))
    assert isinstance(a, StrategyCuePartitioner) and a.epsilon == 0.35
    assert partitioner_for(cue(epsilon=0.35)) is a
    b = partitioner_for(cue(epsilon=0.35, partitioner_kwargs={"rho": 0.5}))
    assert b is not a and b.rho == 0.5
    r = partitioner_for(cue(partitioner="random", epsilon=0.35, seed=4))
    assert r.seed == 4 and r.reference.epsilon == 0.35
    assert partitioner_for(cue(partitioner="single")).partition(["x", "y"]) == [0, 0]


def test_rejected_arguments_are_a_config_error():
    with pytest.raises(ConfigError, match="partitioner_kwargs.*bogus"):
        partitioner_for(cue(partitioner_kwargs={"bogus": 1}))


def test_judge_comes_from_the_same_cache_with_the_sections_fallback_arguments():
    from verl_focal.partition.judge import JudgePartitioner
    from verl_focal.partition.strategy_cue import StrategyCuePartitioner

    c = cue(partitioner="judge", epsilon=0.45, judge={"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    p = partitioner_for(c)
    try:
        assert isinstance(p, JudgePartitioner) and partitioner_for(c, "judge") is p
        fb = p.fallback_partitioner  # handed in by the factory, built from the section's own settings
        assert isinstance(fb, StrategyCuePartitioner) and fb.epsilon == 0.45
        assert partitioner_kwargs(c, "strategy_cue")["epsilon"] == 0.45
        other = cue(partitioner="judge", epsilon=0.45, judge={"base_url": "http://127.0.0.1:9/v1", "model": "m2"})
        assert partitioner_for(other) is not p
    finally:
        p.close()


def test_signature_helpers():
    part = partitioner_for(cue())
    good = [signature(t) for t in cue_corpus.group(cue_corpus.PROBLEMS[0]["id"])[0]]
    assert signature_version(part) == "math_v1" and usable_signatures(part, good)
    assert not usable_signatures(part, good[:1] + [""])
    assert not usable_signatures(part, good[:1] + ["math_v0:a.b"])  # another catalogue
    assert sanitised_signatures(part, ["", None, "math_v0:a"]) == ["math_v1:!error", "math_v1:!error", "math_v0:a"]
    assert signature_version(partitioner_for(cue(partitioner="random"))) == "math_v1"  # via its reference
    assert signature_version(partitioner_for(cue(partitioner="single"))) is None


def test_rows_to_partition_keeps_correct_rows_of_mixed_groups_with_two_correct():
    gid = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3])
    correct = np.array([1, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1], dtype=bool)
    valid = np.array([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0], dtype=bool)
    got = rows_to_partition(correct, valid, gid, 4)
    # group 0: mixed, 2 correct; group 1: one correct; group 2: all correct; group 3: padding row
    assert got.tolist() == [True, True, False, False, False, False, False, False, False, False, False]
    assert [g.tolist() for g in row_groups(gid, np.array([6, 0, 1, 7]))] == [[0, 1], [6, 7]]


def test_group_source_each_branch():
    part = partitioner_for(cue())
    sigs = [signature("We use casework."), signature("By complementary counting.")]
    assert group_source(part, cue(partitioner="single"), None, False) == "blank"
    assert group_source(part, cue(), sigs, True) == "signatures"
    assert group_source(part, cue(source="text"), sigs, True) == "text"
    assert group_source(part, cue(), ["", sigs[0]], True) == "text"
    assert group_source(part, cue(), ["", sigs[0]], False) == "sanitised"
    with pytest.raises(ConfigError, match="source=signature"):
        group_source(part, cue(source="signature"), None, True)
    with pytest.raises(ConfigError, match="neither reached"):
        group_source(part, cue(), None, False)


def test_partition_rows_uses_signatures_where_usable_and_text_elsewhere():
    texts, methods = cue_corpus.group(cue_corpus.PROBLEMS[0]["id"])
    n = len(texts)
    gid = np.repeat([0, 1], n)
    responses = list(texts) * 2
    sigs = [signature(t) for t in texts] + [""] * n  # group 1's signatures all failed
    rows = np.ones(2 * n, dtype=bool)
    rows[0] = False  # a row that is not selected keeps -1
    c = cue()
    labels, m = partition_rows(partitioner_for(c), c, gid, rows, responses, None, sigs)
    assert labels[0] == -1
    assert m["cue/groups_from_signatures"] == 1 and m["cue/groups_from_text"] == 1
    # group 1 was partitioned from its text: the corpus methods, exactly
    g1 = labels[n:].tolist()
    assert all((g1[i] == g1[j]) == (methods[i] == methods[j]) for i in range(n) for j in range(n))
    # nothing selected: the same metric keys, zero
    empty, m0 = partition_rows(partitioner_for(c), c, gid, np.zeros(2 * n, dtype=bool), responses, None, sigs)
    assert (empty == -1).all() and m0["cue/groups_from_text"] == 0 and "cue/partition_time_s" in m0
