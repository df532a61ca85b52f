"""Pure maths: focal weight and vectorised group advantages (no verl import)."""

import math

import numpy as np
import pytest
import torch

from _reference import make_grouped_batch, reference_advantages
from verl_focal.core.focal import focal_weight
from verl_focal.core.groups import group_advantage, group_ids, group_success_rate


def test_focal_weight_matches_spec_table_n8_gamma_half():
    # docs/methods.md §2: N=8, γ=0.5, X=1..7 -> 0.935 0.866 0.791 0.707 0.612 0.500 0.354
    expected = [0.935, 0.866, 0.791, 0.707, 0.612, 0.500, 0.354]
    p = torch.arange(1, 8, dtype=torch.float64) / 8
    got = focal_weight(p, 0.5)
    assert got.tolist() == pytest.approx(expected, abs=5e-4)
    # and against the closed form computed independently
    assert got.tolist() == pytest.approx([math.sqrt(1 - x / 8) for x in range(1, 8)], rel=1e-12)


def test_focal_weight_gamma_zero_is_exactly_one_even_at_p_one():
    p = torch.tensor([0.0, 0.3, 1.0], dtype=torch.float64)
    assert focal_weight(p, 0.0).tolist() == [1.0, 1.0, 1.0]
    assert focal_weight(p, 2.0).tolist() == pytest.approx([1.0, 0.49, 0.0])


@pytest.mark.parametrize("gamma", [-0.1, float("nan"), float("inf")])
def test_focal_weight_rejects_bad_gamma(gamma):
    with pytest.raises(ValueError, match="algorithm.focal.gamma must be finite and >= 0"):
        focal_weight(torch.tensor([0.5]), gamma)


def test_focal_weight_per_row_gamma_tensor():
    """One γ per row (the categorical simulation's batch of runs): each row is its own (1 − p̂)^γ."""
    p = torch.tensor([0.0, 0.25, 0.5, 1.0, 1.0], dtype=torch.float64)
    gam = torch.tensor([0.0, 1.0, 0.5, 0.0, 2.0], dtype=torch.float64)
    assert focal_weight(p, gam).tolist() == pytest.approx([1.0, 0.75, math.sqrt(0.5), 1.0, 0.0], rel=1e-15)
    with pytest.raises(ValueError, match="every gamma must be finite and >= 0"):
        focal_weight(p, torch.tensor([0.0, -1.0, 0.0, 0.0, 0.0]))


def test_focal_weight_rejects_p_outside_unit_interval():
    with pytest.raises(ValueError, match=r"p_hat must lie in \[0, 1\]"):
        focal_weight(torch.tensor([1.5]), 1.0)


def test_group_ids_first_appearance_and_hash_independent():
    gid, n = group_ids(np.array(["b", "a", "b", "c", "a"], dtype=object))
    assert n == 3
    assert gid.tolist() == [0, 1, 0, 2, 1]


@pytest.mark.parametrize("base", ["grpo", "drgrpo", "rloo"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_group_advantage_matches_loop_reference(base, seed):
    rewards, mask, index = make_grouped_batch(seed, sizes=[8, 1, 3, 5, 2, 8], reward_values=(0.0, 1.0, 0.25))
    scores = rewards.sum(-1).double()
    valid = (mask.sum(-1) > 0).double()
    gid, n = group_ids(index)
    got = group_advantage(scores, gid, n, valid, base=base)
    ref = reference_advantages(scores.tolist(), index, valid.tolist(), base=base)
    assert got.tolist() == pytest.approx(ref, abs=1e-9)


def test_padding_row_sharing_a_uid_is_excluded_from_statistics():
    # Group u0: rewards 1, 0, 0 plus a padding row (mask all zero) with the same uid.
    scores = torch.tensor([1.0, 0.0, 0.0, 0.0], dtype=torch.float64)
    valid = torch.tensor([1.0, 1.0, 1.0, 0.0], dtype=torch.float64)
    gid, n = group_ids(np.array(["u0"] * 4, dtype=object))
    adv = group_advantage(scores, gid, n, valid, base="grpo")
    mean, std = 1 / 3, math.sqrt(((2 / 3) ** 2 + 2 * (1 / 3) ** 2) / 2)
    assert adv.tolist() == pytest.approx([(1 - mean) / (std + 1e-6), -mean / (std + 1e-6), -mean / (std + 1e-6), 0.0])
    p_hat, cnt = group_success_rate(torch.tensor([1.0, 0, 0, 1.0]), gid, n, valid)
    assert cnt.tolist() == [3.0] and p_hat.tolist() == pytest.approx([1 / 3])


def test_all_equal_group_gets_zero_advantage():
    scores = torch.ones(4, dtype=torch.float64)
    gid, n = group_ids(np.array(["a"] * 4, dtype=object))
    for base in ("grpo", "drgrpo", "rloo"):
        assert group_advantage(scores, gid, n, torch.ones(4, dtype=torch.float64), base=base).abs().max() == 0


def test_unknown_base_is_rejected_with_choices():
    with pytest.raises(ValueError, match=r"algorithm.focal.base='ppo' is not supported; choose one of"):
        group_advantage(torch.zeros(2), torch.zeros(2, dtype=torch.long), 1, torch.ones(2), base="ppo")
