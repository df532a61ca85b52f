"""The demo's strategy partitioner (through the public registry) and its metric formulas (no verl)."""

import math

import numpy as np
import pytest

from verl_focal.demo._eval_shim import pass_at_k as shim_pass_at_k
from verl_focal.demo.metrics import correct_set, pass_curve, retained_mass, strategy_mass
from verl_focal.demo.task import Problem, solutions
from verl_focal.partition import get_partitioner, list_partitioners


def test_partitioner_is_swappable_through_the_registry():
    import verl_focal.demo.partitioner  # noqa: F401  registers it

    assert "demo_strategy" in list_partitioners()
    part = get_partitioner("demo_strategy")
    texts = ["3+4", "9-2", "1*7", "4+3", "7*1", "bad"]
    labels = part.partition(texts, problem="T+07D7=")
    assert labels[0] == labels[3] and labels[2] == labels[4]
    assert len({labels[0], labels[1], labels[2], labels[5]}) == 4  # add, sub, mul, residual
    assert part.pop_metrics() == {"demo_partition/unparsed_frac": pytest.approx(1 / 6)}
    assert part.pop_metrics() == {}
    # the same registry resolves the import-path form a user would write
    again = get_partitioner("verl_focal.demo.partitioner:DemoStrategyPartitioner")
    assert again.partition(texts) == labels


def test_pass_at_k_matches_combinatorial_definition():
    for n, c, k in ((10, 3, 1), (10, 3, 4), (20, 0, 5), (20, 20, 7), (30, 26, 5)):
        expect = 1.0 - math.comb(n - c, k) / math.comb(n, k)
        assert shim_pass_at_k(n, np.array([c]), k)[0] == pytest.approx(expect, abs=1e-12)


def test_pass_curve_extremes_and_binomial_mean():
    ks = [1, 4, 16]
    assert pass_curve(np.zeros(5), 64, ks, seed=0) == {1: 0.0, 4: 0.0, 16: 0.0}
    assert pass_curve(np.ones(5), 64, ks, seed=0) == {1: 1.0, 4: 1.0, 16: 1.0}
    # unbiased: averaged over many problems with the same p, pass@k -> 1 - (1 - p)^k
    p = np.full(4000, 0.1)
    got = pass_curve(p, 256, [1, 8], seed=1)
    assert got[1] == pytest.approx(0.1, abs=0.005)
    assert got[8] == pytest.approx(1 - 0.9**8, abs=0.01)
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
    probs = [Problem(t=6, d=3), Problem(t=24, d=3)]
    cs = correct_set(probs)
    n_answers = sum(len(v) for p in probs for v in solutions(p).values())
    assert len(cs.answers) == n_answers
    logp = np.log(np.full(len(cs.answers), 0.05))
    m = strategy_mass(cs, logp)
    for i, p in enumerate(probs):
        for j, sols in enumerate(solutions(p).values()):
            assert m[i, j] == pytest.approx(0.05 * len(sols))
