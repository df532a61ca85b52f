"""Pass@k Training's analytic advantage (docs/methods.md §9) against exact and brute-force references."""

import math
import random
from fractions import Fraction

import numpy as np
import pytest
import torch

from _reference import make_grouped_batch
from _reference_family import passk_bruteforce, passk_group_reference, passk_rows_reference
from verl_focal.core.groups import group_ids
from verl_focal.core.passk_advantage import comb_ratio, passk_group_advantages, passk_row_advantage


def test_comb_ratio_matches_exact_fractions_up_to_n_512():
    rnd = random.Random(0)
    cases = [(512, 512, 512), (511, 512, 512), (0, 512, 1), (256, 512, 256), (500, 512, 12), (1, 1, 1), (7, 9, 0)]
    for _ in range(300):
        bb = rnd.randint(1, 512)
        kk = rnd.randint(0, bb)
        cases.append((rnd.randint(0, bb), bb, kk))
    for aa, bb, kk in cases:
        got = comb_ratio(torch.tensor([float(aa)]), torch.tensor([float(bb)]), kk).item()
        exact = Fraction(math.comb(aa, kk), math.comb(bb, kk))
        if exact == 0:
            assert got == 0.0, (aa, bb, kk)
        else:
            assert got == pytest.approx(float(exact), rel=1e-11, abs=0.0), (aa, bb, kk)


@pytest.mark.parametrize("n,k", [(1, 1), (2, 1), (4, 2), (8, 4), (8, 8), (16, 3), (64, 16), (512, 8), (512, 500)])
def test_group_advantages_equal_exact_closed_form_for_every_c(n, k):
    cs = torch.arange(n + 1, dtype=torch.float64)
    pos, neg, rho = passk_group_advantages(torch.full_like(cs, float(n)), cs, k)
    for c in range(n + 1):
        rp, rn, rr = passk_group_reference(n, c, k)
        assert rho[c].item() == pytest.approx(rr, rel=1e-11, abs=1e-14)
        # σ + ε is tiny when ρ is near 0 or 1, so compare relatively
        assert pos[c].item() == pytest.approx(rp, rel=1e-8, abs=1e-9), c
        assert neg[c].item() == pytest.approx(rn, rel=1e-8, abs=1e-9), c


@pytest.mark.parametrize(
    "correct,k", [([1, 0, 0, 0, 0, 0], 3), ([1, 1, 0, 0, 0, 0], 2), ([1, 0, 1, 0, 0, 1, 0], 4), ([0, 1, 0, 0, 0], 1)]
)
def test_closed_form_equals_enumeration_of_all_k_subsets(correct, k):
    """The analytic form is the mean normalised subset advantage over every k-subset holding the rollout."""
    n, c = len(correct), sum(correct)
    adv_sum, rho, sigma = passk_bruteforce(correct, k)
    pos, neg, got_rho = passk_group_advantages(torch.tensor([float(n)]), torch.tensor([float(c)]), k, epsilon=0.0)
    assert got_rho.item() == pytest.approx(rho, rel=1e-12)
    for i, ci in enumerate(correct):
        expected = adv_sum[i] / sigma
        assert (pos if ci else neg).item() == pytest.approx(expected, rel=1e-10)


def test_k_one_is_grpo_with_the_population_std():
    n, c = 8, 3
    pos, neg, rho = passk_group_advantages(torch.tensor([8.0]), torch.tensor([3.0]), 1, epsilon=0.0)
    p = c / n
    sd = math.sqrt(p * (1 - p))
    assert rho.item() == pytest.approx(p)
    assert pos.item() == pytest.approx((1 - p) / sd) and neg.item() == pytest.approx(-p / sd)


def test_degenerate_groups_get_zero_and_norm_off_keeps_centred_values():
    pos, neg, rho = passk_group_advantages(torch.tensor([8.0, 8.0, 0.0]), torch.tensor([0.0, 8.0, 0.0]), 4)
    assert pos.tolist() == [0.0, 0.0, 0.0] and neg.tolist() == [0.0, 0.0, 0.0]
    assert rho.tolist() == [0.0, 1.0, 0.0]
    # c = 5 of n = 8 with k = 4: ρ = 1 (any 4-subset holds a correct one), so nothing moves
    pos, neg, rho = passk_group_advantages(torch.tensor([8.0]), torch.tensor([5.0]), 4)
    assert rho.item() == 1.0 and pos.item() == 0.0 and neg.item() == 0.0
    pos, neg, _ = passk_group_advantages(torch.tensor([8.0]), torch.tensor([2.0]), 4, norm_by_std=False)
    rp, rn, _ = passk_group_reference(8, 2, 4, norm=False)
    assert (pos.item(), neg.item()) == pytest.approx((rp, rn), rel=1e-12)


def test_k_larger_than_a_group_or_below_one_is_refused():
    with pytest.raises(ValueError, match="k=5 exceeds a group's size 4"):
        passk_group_advantages(torch.tensor([4.0, 8.0]), torch.tensor([1.0, 1.0]), 5)
    with pytest.raises(ValueError, match=r"algorithm.passk.k must be in \[1, 512\].*got 0; set algorithm.passk.k=4"):
        passk_group_advantages(torch.tensor([4.0]), torch.tensor([1.0]), 0)
    with pytest.raises(ValueError, match=r"algorithm.passk.k must be in \[1, 512\].*got 513"):
        passk_group_advantages(torch.tensor([600.0]), torch.tensor([1.0]), 513)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k", [1, 2, 3])
def test_row_advantage_matches_loop_reference_with_padding_and_shuffled_groups(seed, k):
    rewards, mask, index = make_grouped_batch(seed, [8, 3, 5, 4, 8, 3], n_padding=3)
    valid = (mask.sum(-1) > 0).double()
    correct = (rewards.sum(-1) > 0.5).double()
    gid, ng = group_ids(index)
    adv, n, _ = passk_row_advantage(correct, gid, ng, valid, k)
    ref = passk_rows_reference(correct.tolist(), index, valid.tolist(), k)
    assert adv.tolist() == pytest.approx(ref, rel=1e-9, abs=1e-9)
    assert adv[valid == 0].abs().max().item() == 0.0
    assert sorted(n[n > 0].tolist()) == [3, 3, 4, 5, 8, 8]
    assert np.all(np.isfinite(adv.numpy()))
