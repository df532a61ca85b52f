"""Property tests of the Cue-GRPO credit rule (docs/methods.md §5).

Expected values are computed here from the formula with plain Python loops,
never taken from the implementation's output.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import verl_focal
from verl_focal.core.credit import credit_multipliers, credit_multipliers_batch


def ref_raw(labels, alpha):
    """w_i = n+ |C(i)|^-a / sum_j |C(j)|^-a, by loops."""
    size = {lab: sum(1 for x in labels if x == lab) for lab in labels}
    u = [size[lab] ** (-alpha) for lab in labels]
    return [len(labels) * ui / sum(u) for ui in u]


def test_lazy_export():
    assert verl_focal.credit_multipliers is credit_multipliers


def test_worked_example_alpha_08():
    # n+ = 10, sizes 6/3/1: denominator 6*6^-0.8 + 3*3^-0.8 + 1 = 6^0.2 + 3^0.2 + 1
    den = 6 ** 0.2 + 3 ** 0.2 + 1
    exp = [10 * 6 ** -0.8 / den, 10 * 3 ** -0.8 / den, 10 / den]
    assert [round(x, 3) for x in exp] == [0.649, 1.129, 2.720]  # docs/methods.md §5 numbers
    w = credit_multipliers([0] * 6 + [1] * 3 + [2], alpha=0.8)
    np.testing.assert_allclose(w, [exp[0]] * 6 + [exp[1]] * 3 + [exp[2]], rtol=1e-12)


def test_worked_example_alpha_1_without_clip():
    # alpha = 1: each of the 3 clusters gets credit 10/3; per rollout 10/18, 10/9, 10/3
    w = credit_multipliers(["a"] * 6 + ["b"] * 3 + ["c"], alpha=1.0, clip=None)
    np.testing.assert_allclose(w[[0, 6, 9]], [10 / 18, 10 / 9, 10 / 3], rtol=1e-12)
    assert [round(x, 3) for x in w[[0, 6, 9]]] == [0.556, 1.111, 3.333]
    # equal total credit per cluster
    np.testing.assert_allclose([w[:6].sum(), w[6:9].sum(), w[9:].sum()], [10 / 3] * 3)


def test_alpha_1_with_default_clip_then_renormalise():
    # raw 0.556/1.111/3.333 -> clip hi=3 -> renormalise to mean 1 (independent arithmetic)
    raw = [10 / 18] * 6 + [10 / 9] * 3 + [10 / 3]
    clipped = [min(max(x, 0.3), 3.0) for x in raw]
    exp = [x * 10 / sum(clipped) for x in clipped]
    w = credit_multipliers([0] * 6 + [1] * 3 + [2], alpha=1.0)
    np.testing.assert_allclose(w, exp, rtol=1e-12)
    assert w.mean() == pytest.approx(1.0, abs=1e-12)
    # without renormalisation the clipped mass is lost
    w2 = credit_multipliers([0] * 6 + [1] * 3 + [2], alpha=1.0, renormalize=False)
    np.testing.assert_allclose(w2, clipped, rtol=1e-12)
    assert w2.mean() < 1 - 1e-3


@pytest.mark.parametrize("seed", range(30))
def test_mass_preserved_and_matches_reference(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 16)
    labels = [rng.randint(0, rng.randint(0, 5)) for _ in range(n)]
    alpha = rng.choice([0.0, 0.3, 0.8, 1.0, 1.7])
    w = credit_multipliers(labels, alpha=alpha, clip=None)
    np.testing.assert_allclose(w, ref_raw(labels, alpha), rtol=1e-10)
    assert w.mean() == pytest.approx(1.0, abs=1e-10)
    # renormalised clip keeps the mass too
    wc = credit_multipliers(labels, alpha=alpha)
    assert wc.mean() == pytest.approx(1.0, abs=1e-10)
    # rollouts in one cluster share a multiplier; smaller cluster -> larger multiplier
    for i in range(n):
        for j in range(n):
            si, sj = labels.count(labels[i]), labels.count(labels[j])
            if si == sj:
                assert w[i] == pytest.approx(w[j])
            elif si < sj and alpha > 0:
                assert w[i] > w[j]


def test_cluster_credit_power_law():
    labels = [0] * 5 + [1] * 2 + [2]
    for alpha in (0.0, 0.5, 0.8, 1.0):
        w = credit_multipliers(labels, alpha=alpha, clip=None)
        credit = {k: sum(w[i] for i in range(len(labels)) if labels[i] == k) for k in (0, 1, 2)}
        # credit_k / credit_l = (n_k / n_l)^(1 - alpha)
        assert credit[0] / credit[2] == pytest.approx(5 ** (1 - alpha))
        assert credit[1] / credit[2] == pytest.approx(2 ** (1 - alpha))


@pytest.mark.parametrize(
    "labels",
    [[0] * 7, list(range(7)), [0, 0, 1, 1, 2, 2], [3, 3, 3, 9, 9, 9], [5], []],
    ids=["one-cluster", "singletons", "equal-2", "equal-3", "n+=1", "empty"],
)
@pytest.mark.parametrize("alpha", [0.0, 0.8, 1.0])
def test_reductions_to_grpo(labels, alpha):
    w = credit_multipliers(labels, alpha=alpha)
    assert w.shape == (len(labels),)
    np.testing.assert_allclose(w, np.ones(len(labels)), atol=1e-12)


def test_alpha_zero_is_identity_for_any_partition():
    np.testing.assert_allclose(credit_multipliers([0, 0, 0, 1, 2, 2], alpha=0.0), 1.0)


def test_floor_modes():
    labels = [0] * 6 + [1] * 3 + [2]
    base = credit_multipliers(labels)
    np.testing.assert_allclose(credit_multipliers(labels, floor_mode="additive", floor=1.05), base + 0.05)
    np.testing.assert_allclose(credit_multipliers(labels, floor_mode="max", floor=1.05), np.maximum(base, 1.05))
    # a floor applies to the GRPO-reduction groups too (it is a deliberate boost)
    np.testing.assert_allclose(credit_multipliers([0, 0], floor_mode="max", floor=1.05), [1.05, 1.05])


def test_clip_bounds_respected_before_renormalisation():
    labels = [0] * 14 + [1]  # raw singleton multiplier is large
    w = credit_multipliers(labels, alpha=1.0, renormalize=False)
    assert w.max() == pytest.approx(3.0) and w.min() >= 0.3


def test_batch_equals_per_group_and_ignores_unpartitioned_rows():
    rng = np.random.default_rng(0)
    gid = np.repeat(np.arange(40), 8)
    cid = rng.integers(-1, 4, size=gid.size)  # -1: incorrect rollout / not partitioned
    perm = rng.permutation(gid.size)  # row order must not matter
    gid, cid = gid[perm], cid[perm]
    w = credit_multipliers_batch(gid, cid, alpha=0.8)
    assert np.all(w[cid < 0] == 1.0)
    for g in range(40):
        rows = np.flatnonzero((gid == g) & (cid >= 0))
        np.testing.assert_allclose(w[rows], credit_multipliers(cid[rows].tolist(), alpha=0.8), rtol=1e-12)
        if rows.size:
            assert w[rows].mean() == pytest.approx(1.0)


def test_batch_cluster_ids_are_local_to_groups():
    # same cluster id 0 in two groups must not merge their sizes
    w = credit_multipliers_batch([0, 0, 0, 1], [0, 0, 1, 0], alpha=1.0, clip=None)
    np.testing.assert_allclose(w, [3 / 4, 3 / 4, 3 / 2, 1.0])


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(alpha=-0.1), "alpha"),
        (dict(alpha=float("nan")), "alpha"),
        (dict(clip=(1.2, 3.0)), "clip"),
        (dict(clip=(-0.1, 3.0)), "clip"),
        (dict(clip=(0.3, 0.9)), "clip"),
        (dict(clip="x"), "clip"),
        (dict(floor_mode="min"), "floor_mode"),
        (dict(floor=0.0), "floor"),
    ],
)
def test_bad_arguments_are_named(kw, match):
    with pytest.raises(ValueError, match=match):
        credit_multipliers([0, 1], **kw)


def test_batch_shape_mismatch():
    with pytest.raises(ValueError, match="row-aligned"):
        credit_multipliers_batch([0, 0], [0])
