"""The demo's strategy partitioner (through the public registry) and its metric formulas (no verl)."""

import itertools
import math

import numpy as np
import pytest

from verl_focal.lab.demo.metrics import (
    correct_set,
    exact_auc,
    exact_pass_curve,
    group_strategy_stats,
    pass_curve,
    retained_mass,
    strategy_mass,
)
from verl_focal.lab.demo.task import Problem, solutions
from verl_focal.partition import get_partitioner, list_partitioners


def test_partitioner_is_swappable_through_the_registry():
    import verl_focal.lab.demo.partitioner  # noqa: F401  registers it

    assert "demo_strategy" in list_partitioners()
    part = get_partitioner("demo_strategy")
    texts = ["3+4", "9-2", "1*7", "4+3", "7*1", "bad"]
    labels = part.partition(texts, problem="T+07D7=")
    assert labels[0] == labels[3] and labels[2] == labels[4]
    assert len({labels[0], labels[1], labels[2], labels[5]}) == 4  # add, sub, mul, residual
    assert part.pop_metrics() == {"demo_partition/unparsed_frac": pytest.approx(1 / 6)}
    assert part.pop_metrics() == {}
    # the same registry resolves the import-path form a user would write
    again = get_partitioner("verl_focal.lab.demo.partitioner:DemoStrategyPartitioner")
    assert again.partition(texts) == labels


def test_pass_curve_extremes_and_binomial_mean():
    ks = [1, 4, 16]
    assert pass_curve(np.zeros(5), 64, ks, seed=0) == {1: 0.0, 4: 0.0, 16: 0.0}
    assert pass_curve(np.ones(5), 64, ks, seed=0) == {1: 1.0, 4: 1.0, 16: 1.0}
    # unbiased: averaged over many problems with the same p, pass@k -> 1 - (1 - p)^k
    p = np.full(4000, 0.1)
    got = pass_curve(p, 256, [1, 8], seed=1)
    assert got[1] == pytest.approx(0.1, abs=0.005)
    assert got[8] == pytest.approx(1 - 0.9**8, abs=0.01)
    # the curve is the mean of the combinatorial definition over the binomial counts
    from verl_focal.lab.demo.metrics import sample_counts

    p = np.array([0.05, 0.3, 0.9])
    c = sample_counts(p, 40, seed=7)
    expect = np.mean([1 - math.comb(40 - int(ci), 5) / math.comb(40, 5) for ci in c])
    assert pass_curve(p, 40, [5], seed=7)[5] == pytest.approx(expect, abs=1e-12)
    with pytest.raises(ValueError, match="n >= 256"):
        pass_curve(p, 128, [256], seed=0)


def test_retained_mass_formula():
    base = np.array([0.2, 0.1, 0.3, 0.4])
    now = np.array([0.1, 0.3, 0.0, 0.4])
    sel = np.array([True, True, True, False])
    # lost: 0.1 (first) + 0 (second grew) + 0.3 (third) out of 0.6
    assert retained_mass(base, now, sel) == pytest.approx(1 - 0.4 / 0.6)
    assert retained_mass(base, base, sel) == 1.0
    assert math.isnan(retained_mass(base, now, np.zeros(4, bool)))


def test_strategy_mass_sums_answer_probabilities():
    probs = [Problem(t=6, d=3), Problem(t=9, d=2)]
    cs = correct_set(probs)
    n_answers = sum(len(v) for p in probs for v in solutions(p).values())
    assert len(cs.answers) == n_answers
    logp = np.log(np.full(len(cs.answers), 0.05))
    m = strategy_mass(cs, logp)
    for i, p in enumerate(probs):
        for j, sols in enumerate(solutions(p).values()):
            assert m[i, j] == pytest.approx(0.05 * len(sols))


def test_exact_pass_curve_is_the_mean_of_the_unbiased_estimator():
    p = np.array([0.0, 0.02, 0.3, 1.0])
    got = exact_pass_curve(p, [1, 4, 16])
    for k in (1, 4, 16):
        assert got[k] == pytest.approx(np.mean([1 - (1 - x) ** k for x in p]), abs=1e-12)
    # E over c ~ Binomial(n, p) of 1 - C(n-c, k)/C(n, k) equals 1 - (1-p)^k (n = 20, k = 5, exact sum)
    n, k, x = 20, 5, 0.3
    e = sum(
        math.comb(n, c) * x**c * (1 - x) ** (n - c) * (1 - math.comb(n - c, k) / math.comb(n, k)) for c in range(n + 1)
    )
    assert exact_pass_curve(np.array([x]), [k])[k] == pytest.approx(e, abs=1e-12)


def test_exact_auc_trapezoid():
    p = np.array([0.1, 0.5])
    curve = [np.mean([1 - (1 - x) ** j for x in p]) for j in range(1, 9)]
    expect = sum((curve[j] + curve[j + 1]) / 2 for j in range(7)) / 7
    assert exact_auc(p, 8) == pytest.approx(expect, abs=1e-12)
    assert exact_auc(p, 1) == pytest.approx(0.3)


def test_group_strategy_stats_against_enumeration_of_outcomes():
    # two problems; outcome of one rollout: strategy 0, 1, 2 or wrong; N = 4 -> enumerate all 4^4 sequences
    mass = np.array([[0.3, 0.2, 0.0], [0.6, 0.05, 0.05]])
    n = 4
    ge2 = multi = 0.0
    for row in mass:
        probs = list(row) + [1 - row.sum()]
        for seq in itertools.product(range(4), repeat=n):
            pr = math.prod(probs[o] for o in seq)
            correct = [o for o in seq if o < 3]
            if len(correct) >= 2:
                ge2 += pr
                multi += pr * (len(set(correct)) >= 2)
    got = group_strategy_stats(mass, n)
    assert got["ge2_correct"] == pytest.approx(ge2 / 2, abs=1e-12)
    assert got["multi_given_ge2"] == pytest.approx(multi / ge2, abs=1e-12)
    one = group_strategy_stats(np.array([[0.9, 0.0, 0.0]]), 8)  # one strategy only: never multi
    assert one["multi_given_ge2"] == 0.0
