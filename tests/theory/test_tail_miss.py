"""Tail-miss probability (F-GRPO Lemma 3.1, docs/methods.md §3)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from verl_focal.lab.theory import (
    SPEC_ARGMAX_TABLE,
    active_group_probability,
    log_tail_miss_probability,
    tail_miss_argmax,
    tail_miss_probability,
)


def _reference(mu: float, tau: float, n: int) -> mpmath.mpf:
    """The formula evaluated in 80-digit arithmetic: the ground truth for stability tests."""
    with mpmath.workdps(80):
        mu_, tau_ = mpmath.mpf(mu), mpmath.mpf(tau)
        return (1 - tau_) ** n - (mu_ - tau_) ** n - (1 - mu_) ** n


@pytest.mark.parametrize(
    "n, expected, tol",
    [(8, 0.971, 5e-4), (32, 0.998, 5e-4), (2**15, 0.127, 5e-4), (2**16, 0.016, 5e-4), (2**17, 2.6e-4, 5e-6)],
)
def test_spec_check_values(n, expected, tol):
    assert abs(float(tail_miss_probability(0.64, 6.3e-5, n)) - expected) < tol


def test_peak_near_20_for_spec_policy():
    peak = tail_miss_argmax(0.64, 6.3e-5)
    assert peak.n == 20
    assert abs(peak.probability - 0.9986) < 1e-4
    # the peak is a maximum over its integer neighbourhood, checked by direct evaluation
    ns = np.arange(1, 200)
    vals = [float(_reference(0.64, 6.3e-5, int(k))) for k in ns]
    assert int(ns[int(np.argmax(vals))]) == 20


@pytest.mark.parametrize("mu, rho, expected", SPEC_ARGMAX_TABLE)
def test_spec_argmax_table(mu, rho, expected):
    assert tail_miss_argmax(mu, mu * rho).n == expected


@pytest.mark.parametrize("mu, tau", [(0.3, 0.01), (0.9, 0.002), (0.05, 0.001), (0.99, 0.5), (0.6, 1e-4)])
def test_argmax_matches_brute_force(mu, tau):
    ns = np.arange(1, 60_001, dtype=np.float64)
    brute = int(ns[np.argmax(tail_miss_probability(mu, tau, ns))])
    assert tail_miss_argmax(mu, tau).n == brute


@pytest.mark.parametrize(
    "mu, tau, n",
    [
        (0.64, 6.3e-5, 10**6),
        (0.64, 6.3e-5, 3),
        (1 - 1e-12, 1e-13, 3),  # raw powers cancel to ~1e-12: naive float64 keeps ~4 digits
        (1e-9, 1e-10, 2),  # tiny mu: P ~ 2*mu*(1-...) must keep full relative precision
        (0.5, 1e-7, 10**6),
        (0.999, 0.5, 1000),
    ],
)
def test_relative_accuracy_against_high_precision(mu, tau, n):
    ref = _reference(mu, tau, n)
    got = float(tail_miss_probability(mu, tau, n))
    assert ref > 0
    assert abs(got - float(ref)) <= 1e-10 * float(ref)


def test_naive_formula_would_fail_where_ours_does_not():
    # documents why the stable form exists: with a tiny mu the raw powers cancel
    # (1 - 2e-10 + ... minus 1 - 2e-9 + ...) and keep only ~8 digits
    mu, tau, n = 1e-9, 1e-10, 2
    naive = (1 - tau) ** n - (mu - tau) ** n - (1 - mu) ** n
    ref = float(_reference(mu, tau, n))
    assert abs(naive - ref) > 1e-8 * ref
    assert abs(float(tail_miss_probability(mu, tau, n)) - ref) < 1e-10 * ref


def test_log_probability_finite_where_probability_underflows():
    mu, tau, n = 0.5, 0.1, 10_000
    assert float(tail_miss_probability(mu, tau, n)) == 0.0
    ref = mpmath.log(_reference(mu, tau, n))
    assert abs(float(log_tail_miss_probability(mu, tau, n)) - float(ref)) < 1e-9 * abs(float(ref))


def test_vectorised_broadcasting():
    mu = np.array([[0.2], [0.64]])
    n = np.array([2, 8, 32])
    out = tail_miss_probability(mu, 0.01, n)
    assert out.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            assert out[i, j] == pytest.approx(float(_reference(float(mu[i, 0]), 0.01, int(n[j]))), rel=1e-12)


def test_edge_values():
    assert float(tail_miss_probability(0.64, 6.3e-5, 1)) == 0.0
    assert float(tail_miss_probability(0.64, 6.3e-5, 0)) == 0.0
    assert float(tail_miss_probability(0.64, 0.64, 10)) == 0.0  # every correct answer is rare
    assert float(tail_miss_probability(1.0, 0.0, 10)) == 0.0  # never active
    assert float(tail_miss_probability(0.0, 0.0, 10)) == 0.0
    # tau = 0: the probability of an active group, 1 - mu^n - (1-mu)^n
    for mu, n in [(0.3, 2), (0.64, 8), (0.9, 40)]:
        want = 1 - mu**n - (1 - mu) ** n
        assert float(active_group_probability(mu, n)) == pytest.approx(want, rel=1e-12)
        assert float(tail_miss_probability(mu, 0.0, n)) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(
    "kwargs, word",
    [
        ({"mu": 0.5, "tau": 0.6, "n": 4}, "tau"),
        ({"mu": 1.5, "tau": 0.1, "n": 4}, "mu"),
        ({"mu": 0.5, "tau": -0.1, "n": 4}, "tau"),
        ({"mu": 0.5, "tau": 0.1, "n": -1}, "n"),
    ],
)
def test_bad_input_names_the_argument(kwargs, word):
    with pytest.raises(ValueError, match=word):
        tail_miss_probability(**kwargs)


def test_argmax_degenerate_cases_raise():
    with pytest.raises(ValueError, match="no peak"):
        tail_miss_argmax(0.5, 0.5)
    with pytest.raises(ValueError, match="no peak"):
        tail_miss_argmax(1.0, 0.1)


@pytest.mark.parametrize("mu, tau, n", [(0.64, 0.05, 8), (0.3, 0.02, 20), (0.9, 0.1, 4), (0.8, 0.01, 15)])
def test_monte_carlo_event_probability(mu, tau, n):
    """The formula is the probability of 'mixed group and no rare-correct sample'."""
    rng = np.random.default_rng(1234)
    draws = 200_000
    # per group: counts of (rare correct, other correct, incorrect)
    counts = rng.multinomial(n, [tau, mu - tau, 1 - mu], size=draws)
    n_correct = counts[:, 0] + counts[:, 1]
    active = (n_correct > 0) & (n_correct < n)
    event = active & (counts[:, 0] == 0)
    freq = event.mean()
    p = float(tail_miss_probability(mu, tau, n))
    sigma = np.sqrt(p * (1 - p) / draws)
    assert abs(freq - p) < 5 * sigma
    # and it is not the "wrong event" of docs/methods.md §3 (>= 1 correct, no rare), which counts all-correct groups
    wrong_event = (n_correct > 0) & (counts[:, 0] == 0)
    if (mu - tau) ** n > 20 * sigma:  # all-correct-without-rare groups are not negligible
        assert abs(wrong_event.mean() - p) > 5 * sigma
    assert abs(active.mean() - float(active_group_probability(mu, n))) < 5 * np.sqrt(0.25 / draws)
