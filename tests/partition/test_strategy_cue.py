"""The strategy_cue partitioner (docs/methods.md §6), its graph, signatures and the random control."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys

import cue_corpus
import numpy as np
import pytest

from verl_focal.partition import get_partitioner, list_partitioners
from verl_focal.partition.cues import format_signature, parse_signature, signature
from verl_focal.partition.graph import bag_of_cues, cluster_sequences, cosine_components, suppress_common

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def same_partition(a, b):
    """Two label lists describe the same partition (labels' values ignored)."""
    return all((a[i] == a[j]) == (b[i] == b[j]) for i, j in itertools.combinations(range(len(a)), 2))


@pytest.mark.parametrize("pid", [p["id"] for p in cue_corpus.PROBLEMS])
def test_corpus_methods_separate_and_paraphrases_do_not(pid):
    texts, methods = cue_corpus.group(pid)
    labels = get_partitioner("strategy_cue").partition(texts)
    assert same_partition(labels, methods), (labels, methods)


def test_signature_path_equals_text_path():
    p = get_partitioner("strategy_cue")
    for prob in cue_corpus.PROBLEMS:
        texts, _ = cue_corpus.group(prob["id"])
        sigs = [signature(t) for t in texts]
        assert all(s.startswith("math_v1:") for s in sigs)
        assert p.partition_signatures(sigs) == p.partition(texts)


def _rename(text):
    # variable renaming, different numbers, different whitespace
    t = re.sub(r"\b([rsxk])\b", lambda m: {"r": "u", "s": "v", "x": "t", "k": "j"}[m.group(1)], text)
    t = re.sub(r"\d+", lambda m: str(int(m.group()) * 7 + 3), t)
    t = t.replace(" ", "   ").replace("\n", "\n\n  \t").replace(". ", ".\n")
    return t


def test_invariant_to_surface_edits():
    changed = 0
    for t in cue_corpus.all_texts():
        t2 = _rename(t)
        changed += t2 != t
        assert signature(t2) == signature(t)
    assert changed == len(cue_corpus.all_texts())


def test_graph_by_hand():
    seqs = [["a", "b"], ["a"], ["c"], [], ["c", "c", "d"], []]
    counts, vocab = bag_of_cues(seqs)
    assert vocab == ["a", "b", "c", "d"]
    np.testing.assert_array_equal(counts[4], [0, 0, 2, 1])
    # cos([1,1,0,0],[1,0,0,0]) = 1/sqrt2 >= .5 ; cos([0,0,1,0],[0,0,2,1]) = 2/sqrt5 >= .5 ; empties -> one residual
    assert cosine_components(counts, 0.5) == [0, 0, 1, 2, 1, 2]
    # at eps = 0.9 only ... 2/sqrt5 = 0.894 < 0.9 and 0.707 < 0.9: all apart except the residual
    assert cosine_components(counts, 0.9) == [0, 1, 2, 3, 4, 3]
    # exactly-epsilon similarity is an edge: cos([1,0],[1,1,1,1]...) use cos = 0.5 exactly
    c = np.array([[1.0, 0, 0, 0], [1.0, 1, 1, 1]])
    assert cosine_components(c, 0.5) == [0, 0]


def test_single_linkage_is_transitive():
    # a~b and b~c but a !~ c: one component
    c = np.array([[1.0, 0, 0], [1.0, 1, 0], [0, 1.0, 0]])
    assert cosine_components(c, 0.6) == [0, 0, 0]


def test_rho_suppression():
    counts = np.array([[1.0, 1], [1, 0], [1, 0], [1, 1]])
    # column 0 in 4/4 > .75 -> removed; column 1 in 2/4 kept
    np.testing.assert_array_equal(suppress_common(counts, 0.75), [[0, 1], [0, 0], [0, 0], [0, 1]])
    # share exactly rho is kept (strictly more than rho is suppressed)
    np.testing.assert_array_equal(suppress_common(counts[:4] * [[1, 1]], 1.0), counts)
    seqs = [["mod", "bin"], ["mod", "vie"], ["mod", "bin"], ["mod", "vie"]]
    assert cluster_sequences(seqs, 0.5, 0.75) == [0, 1, 0, 1]  # mod suppressed everywhere
    assert cluster_sequences(seqs, 0.5, 1.0) == [0, 0, 0, 0]  # kept: every pair has cos 0.5


def test_failed_and_foreign_signatures_join_the_residual():
    p = get_partitioner("strategy_cue")
    p.pop_metrics()
    with pytest.warns(UserWarning, match="cue_set"):
        labels = p.partition_signatures(["math_v1:cw", "math_v1:!timeout", "other_v9:cw", "math_v1:", "math_v1:vie"])
    assert labels == [0, 1, 1, 1, 2]
    m = p.pop_metrics()
    assert m["cue/extract_failed"] == 1 and m["cue/signature_mismatch"] == 1
    assert p.pop_metrics()["cue/extract_failed"] == 0


def test_signature_format_roundtrip_and_errors():
    assert parse_signature(format_signature("math_v1", ["cw", "bin"])) == ("math_v1", ["cw", "bin"], None)
    assert parse_signature("math_v1:") == ("math_v1", [], None)
    assert parse_signature("math_v1:!timeout") == ("math_v1", [], "timeout")
    with pytest.raises(ValueError, match="not a cue signature"):
        parse_signature("cw.bin")


@pytest.mark.parametrize(
    "kw,match", [(dict(epsilon=0), "epsilon"), (dict(rho=1.5), "rho"), (dict(cue_set="nope"), "cue_set")]
)
def test_bad_kwargs_are_named(kw, match):
    with pytest.raises(ValueError, match=match):
        get_partitioner("strategy_cue", **kw)


def test_registry_lists_controls():
    assert {"strategy_cue", "single", "singleton", "random"} <= set(list_partitioners())


def test_random_control_same_count_seeded():
    texts, _ = cue_corpus.group("subsets_even")
    texts = texts + cue_corpus.group("power_mod_7")[0]  # 9 texts, several clusters
    ref = get_partitioner("strategy_cue").partition(texts)
    m = len(set(ref))
    outs = {}
    for seed in range(8):
        lab = get_partitioner("random", seed=seed).partition(texts)
        assert len(set(lab)) == m and len(lab) == len(texts)
        assert lab == get_partitioner("random", seed=seed).partition(texts)  # deterministic
        outs[seed] = tuple(lab)
    assert len(set(outs.values())) > 1  # the seed matters
    sizes = get_partitioner("random", seed=1, match="sizes").partition(texts)
    assert sorted(np.bincount(sizes)) == sorted(np.bincount(ref))
    with pytest.raises(ValueError, match="match"):
        get_partitioner("random", match="both")


_PROBE = r"""
import sys, json
sys.path.insert(0, {tests!r})
import cue_corpus
from verl_focal.partition import get_partitioner
from verl_focal.partition.cues import signature
out = []
for p in cue_corpus.PROBLEMS:
    texts, _ = cue_corpus.group(p["id"])
    out.append([get_partitioner("strategy_cue", backend="regex").partition(texts),
                get_partitioner("random", seed=5).partition(texts), [signature(t) for t in texts]])
print(json.dumps(out))
"""


def test_deterministic_across_processes_and_hash_seeds():
    code = _PROBE.format(tests=os.path.join(REPO, "tests", "partition"))
    outs = []
    for seed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=REPO)
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1]
