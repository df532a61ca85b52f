"""Metrics: pass@k against exact rational arithmetic, AUC by hand, significance behaviour."""

from __future__ import annotations

import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from verl_focal.lab.eval import (
    auc_at_k,
    default_ks,
    paired_subsampling_test,
    pass_at_k,
    pass_at_k_curve,
    pass_at_k_matrix,
)


def exact_pass_at_k(n: int, c: int, k: int) -> Fraction:
    """Reference: 1 - C(n-c, k)/C(n, k) in exact rationals (math.comb is 0 when k > n-c)."""
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def _close(value: float, exact: Fraction, rel: float = 1e-12) -> bool:
    # compare in exact arithmetic against the float's exact rational value
    err = abs(Fraction(value) - exact)
    return err <= rel * max(exact, Fraction(1, 10**300)) or err == 0


def test_pass_at_k_matches_fractions_on_random_triples():
    rng = np.random.default_rng(0)
    triples = []
    for _ in range(300):
        n = int(rng.choice([1, 2, 7, 64, 1024, 4096]))
        c = int(rng.integers(0, n + 1))
        k = int(rng.integers(1, n + 1))
        triples.append((n, c, k))
    # the edge cases the issue names
    triples += [(4096, 0, 256), (4096, 4096, 1), (4096, 4096, 4096), (4096, 1, 4096), (4096, 1, 1),
                (4096, 2, 4096), (1024, 5, 1024), (1024, 1019, 6), (1024, 1018, 6), (1, 0, 1), (1, 1, 1)]
    n, c, k = (np.array(x) for x in zip(*triples))
    got = pass_at_k(n, c, k)
    for (ni, ci, ki), g in zip(triples, got):
        ex = exact_pass_at_k(ni, ci, ki)
        assert _close(float(g), ex), (ni, ci, ki, g, float(ex))


def test_pass_at_k_edge_values_and_scalars():
    assert pass_at_k(4096, 0, 4096) == 0.0
    assert pass_at_k(4096, 4096, 1) == 1.0
    assert pass_at_k(100, 1, 100) == 1.0  # n - c < k
    assert isinstance(pass_at_k(10, 3, 2), float)
    # tiny probabilities keep full relative precision (no 1 - (1 - eps) cancellation)
    assert pass_at_k(4096, 1, 1) == pytest.approx(1 / 4096, rel=1e-14)
    assert pass_at_k(np.array([[5], [6]]), 2, np.array([1, 2])).shape == (2, 2)


def test_pass_at_k_matrix_and_curve_agree_with_exact():
    c = np.array([0, 1, 3, 10, 40, 40])
    mat = pass_at_k_matrix(40, c, 40)
    for i, ci in enumerate(c):
        for j in (1, 2, 17, 37, 40):
            assert _close(float(mat[i, j - 1]), exact_pass_at_k(40, int(ci), j))
    curve = pass_at_k_curve(40, c, ks=[1, 4, 32])
    assert curve.ks.tolist() == [1, 4, 32]
    for k, v in zip(curve.ks, curve.values):
        ex = sum(exact_pass_at_k(40, int(ci), int(k)) for ci in c) / len(c)
        assert _close(float(v), ex, rel=1e-12)


def test_default_ks_and_curve_default_grid():
    assert default_ks(256) == (1, 2, 4, 8, 16, 32, 64, 128, 256)
    assert default_ks(100) == (1, 2, 4, 8, 16, 32, 64, 100)
    curve = pass_at_k_curve(64, [3, 9])
    assert curve.ks.tolist() == [1, 2, 4, 8, 16, 32, 64]
    assert np.all(np.diff(curve.values) >= 0)  # pass@k is non-decreasing in k


def test_auc_hand_computed():
    # n=4, c=2: pass@1 = 1/2, pass@2 = 1 - C(2,2)/C(4,2) = 5/6, pass@3 = 1.
    # AUC@3 = 1/2 * ((1/2 + 5/6)/2 + (5/6 + 1)/2) = 19/24
    assert auc_at_k(4, [2], 3) == pytest.approx(19 / 24, rel=1e-14)
    # two problems: c=0 contributes 0 everywhere -> half of it
    assert auc_at_k(4, [2, 0], 3) == pytest.approx(19 / 48, rel=1e-14)
    assert auc_at_k(4, [2], 1) == pytest.approx(0.5)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: pass_at_k(10, 11, 1), "0 <= c <= n"),
        (lambda: pass_at_k(10, -1, 1), "0 <= c <= n"),
        (lambda: pass_at_k(10, 3, 11), "1 <= k <= n"),
        (lambda: pass_at_k(10, 3, 0), "1 <= k <= n"),
        (lambda: pass_at_k(10, 2.5, 1), "whole numbers"),
        (lambda: pass_at_k(10, np.array([True]), 1), "integers"),
        (lambda: pass_at_k_curve(8, [1, 2], ks=[16]), "min\\(n\\) = 8"),
        (lambda: paired_subsampling_test(8, [1], 8, [1, 2], ks=4, m=4), "same problems"),
        (lambda: paired_subsampling_test(8, [1], 8, [2], ks=8, m=4), "1 <= k <= m"),
        (lambda: paired_subsampling_test(8, [1], 8, [2], ks=4, m=16), "1 <= m <= min\\(n\\)"),
    ],
)
def test_bad_input_names_the_problem(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_significance_detects_planted_difference():
    rng = np.random.default_rng(3)
    p = rng.beta(0.4, 0.6, size=60)
    n = 512
    ca = rng.binomial(n, p)
    cb = rng.binomial(n, np.minimum(1.0, p + 0.08))  # planted +8 points per problem
    res = paired_subsampling_test(n, ca, n, cb, ks=[1, 128], m=128, iterations=4000, seed=1)
    r1 = res[0]
    assert r1.k == 1 and r1.significant and r1.p_value < 0.01
    assert r1.ci_low > 0 and r1.delta == pytest.approx((cb - ca).mean() / n)
    # reversed roles flip the sign and keep the decision
    rev = paired_subsampling_test(n, cb, n, ca, ks=1, m=128, iterations=4000, seed=1)[0]
    assert rev.significant and rev.ci_high < 0


def test_significance_false_positive_rate_at_most_alpha():
    # 80 pairs of runs drawn from the SAME per-problem success rates; flag rate must not exceed alpha.
    rng = np.random.default_rng(11)
    p = rng.beta(0.3, 0.7, size=30)
    n, m, trials = 256, 64, 80
    flags = {1: 0, 64: 0}
    for t in range(trials):
        ca = rng.binomial(n, p)
        cb = rng.binomial(n, p)
        for r in paired_subsampling_test(n, ca, n, cb, ks=[1, 64], m=m, iterations=1000, seed=t):
            flags[r.k] += r.significant
    # Binomial(80, 0.05) exceeds 9 with probability < 3%; a correct (conservative) test flags far fewer.
    assert flags[1] <= 9 and flags[64] <= 9, flags
    # identical inputs are never flagged
    ca = rng.binomial(n, p)
    same = paired_subsampling_test(n, ca, n, ca, ks=[1, 64], m=m, iterations=1000, seed=0)
    assert all(not r.significant and r.delta == 0 for r in same)


def test_significance_is_seeded():
    rng = np.random.default_rng(5)
    ca, cb = rng.integers(0, 65, 20), rng.integers(0, 65, 20)
    a = paired_subsampling_test(64, ca, 64, cb, ks=[1, 16], m=16, iterations=500, seed=7)
    b = paired_subsampling_test(64, ca, 64, cb, ks=[1, 16], m=16, iterations=500, seed=7)
    c = paired_subsampling_test(64, ca, 64, cb, ks=[1, 16], m=16, iterations=500, seed=8)
    assert a == b
    assert a != c


def test_subsampled_mean_is_unbiased_for_pass_at_k():
    # E[pass@k(m, c')] over hypergeometric c' equals pass@k(n, c) (U-statistic property):
    # the mean subsampled difference must match the full-sample difference.
    ca, cb = np.array([3, 50, 100, 0]), np.array([10, 60, 128, 1])
    for r in paired_subsampling_test(128, ca, 128, cb, ks=[4, 32], m=32, iterations=20000, seed=0):
        assert r.delta_sub == pytest.approx(r.delta, abs=4e-3), r


def test_import_is_light():
    code = ("import sys, verl_focal.lab.eval; "
            "bad=[m for m in ('torch','transformers','verl','scipy','matplotlib') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_package_exports_the_metrics_names():
    import verl_focal.lab.eval as ev
    from verl_focal.lab.eval import metrics

    assert ev.__all__ == metrics.__all__
    assert all(getattr(ev, name) is getattr(metrics, name) for name in ev.__all__)


def test_subsampling_p_value_matches_exact_hypergeometric_law():
    # One problem per run: D* = x_b/m - x_a/m with x ~ Hypergeom(n, c, m) independently.
    # The exact P(D* <= 0) and P(D* >= 0) come from scipy's hypergeometric pmf (independent of our sampler).
    from scipy.stats import hypergeom

    n, m, ca, cb = 100, 20, 30, 60
    xs = np.arange(m + 1)
    pa = hypergeom(n, ca, m).pmf(xs)
    pb = hypergeom(n, cb, m).pmf(xs)
    joint = pa[:, None] * pb[None, :]  # [x_a, x_b]
    le = joint[xs[:, None] >= xs[None, :]].sum()
    ge = joint[xs[:, None] <= xs[None, :]].sum()
    exact_p = min(1.0, 2 * min(le, ge))
    r = paired_subsampling_test(n, [ca], n, [cb], ks=1, m=m, iterations=40000, seed=3)[0]
    se = 2 * np.sqrt(exact_p / 2 * (1 - exact_p / 2) / 40000)
    assert abs(r.p_value - exact_p) < 5 * se, (r.p_value, exact_p)
    assert r.delta == pytest.approx((cb - ca) / n)
