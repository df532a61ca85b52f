"""core/maxrl.py and core/smoothing.py on their own (docs/methods.md §11-12): the identity with GRPO, the
figures docs/methods.md states, and the guards."""

from __future__ import annotations

import math

import pytest
import torch
from scipy import integrate

from verl_focal.core.focal import focal_weight
from verl_focal.core.maxrl import maxrl_advantage
from verl_focal.core.smoothing import mean_log_prob, smoothing_term


def _one_group(c):
    n = len(c)
    return maxrl_advantage(torch.tensor(c, dtype=torch.float64), torch.zeros(n, dtype=torch.int64), 1,
                           torch.ones(n), epsilon=1e-300)  # ε → 0: the identity is exact there


@pytest.mark.parametrize("n", [2, 3, 8, 16])
def test_maxrl_is_population_std_grpo_times_sqrt_of_odds_against(n):
    for x in range(1, n):
        c = [1.0] * x + [0.0] * (n - x)
        adv, p_hat, _ = _one_group(c)
        p = x / n
        pop = [(ci - p) / math.sqrt(p * (1 - p)) for ci in c]
        assert adv.tolist() == pytest.approx([a * math.sqrt((1 - p) / p) for a in pop], rel=1e-12)
        assert p_hat.item() == pytest.approx(p)


def test_the_weights_at_n8_are_the_ones_docs_state():
    got = [round(math.sqrt((1 - x / 8) / (x / 8)), 2) for x in range(1, 8)]
    assert got == [2.65, 1.73, 1.29, 1.0, 0.77, 0.58, 0.38]


def test_mean_step_under_f_grpos_matching_rule_is_4_over_pi():
    """Uniform µ, each p weighted by GRPO's advantage scale sqrt(p(1 - p)): MaxRL 4/π, focal γ = 0.5/1/2
    0.68/0.50/0.31 of GRPO's step."""
    scale = integrate.quad(lambda p: math.sqrt(p * (1 - p)), 0, 1)[0]

    def mean_step(w):
        return integrate.quad(lambda p: math.sqrt(p * (1 - p)) * w(p), 0, 1)[0] / scale

    assert mean_step(lambda p: math.sqrt((1 - p) / p)) == pytest.approx(4 / math.pi, rel=1e-6)
    focal = [mean_step(lambda p, g=g: float(focal_weight(torch.tensor(p, dtype=torch.float64), g)))
             for g in (0.5, 1.0, 2.0)]
    assert [round(f, 2) for f in focal] == [0.68, 0.5, 0.31]


def test_maxrl_guards_singletons_all_wrong_and_padding():
    c = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.0, 1.0])
    gid = torch.tensor([0, 0, 1, 2, 0, 3])  # group 1 all wrong, group 2 a singleton, row 5 padding of group 3
    valid = torch.tensor([1.0, 1.0, 1.0, 1.0, 1.0, 0.0])
    adv, p_hat, n = maxrl_advantage(c * valid, gid, 4, valid)
    p = 1 / 3
    assert adv.tolist() == pytest.approx([(1 - p) / (p + 1e-6), -p / (p + 1e-6), 0.0, 0.0, -p / (p + 1e-6), 0.0])
    assert n.tolist() == [3.0, 1.0, 1.0, 0.0]
    with pytest.raises(ValueError, match=r"algorithm.maxrl.epsilon must be > 0"):
        maxrl_advantage(c, gid, 4, valid, epsilon=0.0)


def test_smoothing_signs_padding_and_nonfinite_rows():
    lp_sum = torch.tensor([-2.0, -2.0, -3.0, float("nan"), -1.0])
    tokens = torch.tensor([4.0, 4.0, 2.0, 2.0, 0.0])
    lbar = mean_log_prob(lp_sum, tokens)
    assert lbar[:3].tolist() == [-0.5, -0.5, -1.5]
    correct = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0])
    valid = torch.tensor([1.0, 1.0, 1.0, 1.0, 0.0])
    term = smoothing_term(lbar, correct, valid, 0.1, 0.2)
    # correct: −c₊·ℓ̄ > 0; wrong: +c₋·ℓ̄ < 0; NaN and padding rows: 0
    assert term.tolist() == pytest.approx([0.05, -0.1, 0.15, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"set algorithm.ds_grpo.correct_coef=0.05"):
        smoothing_term(lbar, correct, valid, -0.1, 0.0)
