"""Categorical one-step analysis (F-GRPO §2.3/§3.2, App. C-J; docs/methods.md §4).

Every closed form is checked against torch autograd of the objective it claims to
ascend, or against the exact change of mass after a small step (finite difference).
"""

from __future__ import annotations

import pytest
import torch

from verl_focal.core.focal import focal_weight
from verl_focal.lab.theory import categorical as cat

DT = torch.float64


def _policy(seed: int = 0, k: int = 9):
    gen = torch.Generator().manual_seed(seed)
    z = torch.randn(k, generator=gen, dtype=DT) * 1.5
    correct = torch.zeros(k, dtype=torch.bool)
    correct[: k // 2] = True
    return z, correct


def _counts(samples, k):
    c = torch.zeros(k, dtype=DT)
    for a in samples:
        c[a] += 1
    return c


SAMPLES = [0, 0, 2, 5, 7, 7, 7, 1]  # correct: 0, 1, 2 (indices < 4); incorrect: 5, 7


@pytest.mark.parametrize("gamma", [0.0, 0.5, 1.0])
def test_app_j_update_is_eta_times_autograd(gamma):
    z, correct = _policy()
    k, n, eta = z.numel(), len(SAMPLES), 0.3
    rewards = torch.tensor([1.0 if bool(correct[a]) else -1.0 for a in SAMPLES], dtype=DT)
    adv = rewards - rewards.mean()  # rt_j = R_j - mean_k R_k
    p_hat = float((rewards > 0).double().mean())
    g = (1 - p_hat) ** gamma
    zz = z.clone().requires_grad_(True)
    pi = torch.softmax(zz, -1)
    objective = g / n * sum(adv[j] * pi[a] for j, a in enumerate(SAMPLES))
    (grad,) = torch.autograd.grad(objective, zz)

    counts = _counts(SAMPLES, k)
    w = cat.sampled_weights(counts, correct, kind="group")
    _, _, ph = cat.group_centered_advantages(counts, correct)
    g_ours = focal_weight(ph, gamma)
    dz = cat.surrogate_logit_update(torch.softmax(z, -1), w, n, eta, g_ours)
    torch.testing.assert_close(dz, eta * grad, rtol=1e-12, atol=1e-15)


def test_reinforce_update_is_eta_times_autograd_of_log_objective():
    z, correct = _policy(1)
    k, n, eta = z.numel(), len(SAMPLES), 0.05
    rewards = torch.tensor([1.0 if bool(correct[a]) else -1.0 for a in SAMPLES], dtype=DT)
    adv = rewards - rewards.mean()
    zz = z.clone().requires_grad_(True)
    logp = torch.log_softmax(zz, -1)
    (grad,) = torch.autograd.grad(sum(adv[j] * logp[a] for j, a in enumerate(SAMPLES)) / n, zz)
    w = cat.sampled_weights(_counts(SAMPLES, k), correct, kind="group")
    dz = cat.reinforce_logit_update(torch.softmax(z, -1), w, n, eta)
    torch.testing.assert_close(dz, eta * grad, rtol=1e-12, atol=1e-15)


def test_batch_form_matches_spec_formula_and_autograd():
    """docs/methods.md §4 (batch form): dz_i = (eta/N) p_i (R_i - S_R) if sampled, -(eta/N) S_R p_i otherwise."""
    z, correct = _policy(2)
    k, n, eta = z.numel(), len(SAMPLES), 0.2
    pi = torch.softmax(z, -1)
    sampled = sorted(set(SAMPLES))
    r = {a: (1.0 if bool(correct[a]) else -1.0) for a in sampled}
    p_pos = sum(float(pi[a]) for a in sampled if r[a] > 0)
    p_neg = sum(float(pi[a]) for a in sampled if r[a] < 0)
    s_r = 1.0 * p_pos - 1.0 * p_neg
    want = torch.tensor([eta / n * float(pi[i]) * ((r[i] if i in r else 0.0) - s_r) for i in range(k)], dtype=DT)
    w = cat.sampled_weights(_counts(SAMPLES, k), correct, kind="batch")
    dz = cat.surrogate_logit_update(pi, w, n, eta)
    torch.testing.assert_close(dz, want, rtol=1e-12, atol=1e-16)
    zz = z.clone().requires_grad_(True)
    p = torch.softmax(zz, -1)
    (grad,) = torch.autograd.grad(sum(r[a] * p[a] for a in sampled) / n, zz)
    torch.testing.assert_close(dz, eta * grad, rtol=1e-12, atol=1e-16)


@pytest.mark.parametrize("kind", ["group", "batch"])
def test_first_order_mass_change_matches_finite_difference(kind):
    z, correct = _policy(3)
    k, n = z.numel(), len(SAMPLES)
    counts = _counts(SAMPLES, k)
    w = cat.sampled_weights(counts, correct, kind=kind)
    pi = torch.softmax(z, -1)
    unsampled_correct = correct & (counts == 0)
    for eta in (1e-3, 1e-4):
        dz = cat.surrogate_logit_update(pi, w, n, eta)
        for subset, first in (
            (correct, cat.correct_mass_change(pi, w, correct, n, eta)),
            (unsampled_correct, cat.unsampled_correct_mass_change(pi, w, correct, counts, n, eta)),
        ):
            exact = cat.exact_mass_change(z, dz, subset)
            # first order: the error is O(eta^2), i.e. relative O(eta)
            assert abs(float(exact - first)) <= 50 * eta * abs(float(first)) + 1e-18


def test_closed_form_identities_equal_the_generic_first_order_change():
    for seed in range(5):
        z, correct = _policy(seed, k=12)
        gen = torch.Generator().manual_seed(100 + seed)
        samples = torch.multinomial(torch.softmax(z, -1).float(), 6, replacement=True, generator=gen).tolist()
        counts = _counts(samples, 12)
        pi = torch.softmax(z, -1)
        w = cat.sampled_weights(counts, correct, kind="batch", r_correct=1.0, r_wrong=-0.5)
        d_pos = cat.correct_mass_change(pi, w, correct, 6, 0.1)
        d_upos = cat.unsampled_correct_mass_change(pi, w, correct, counts, 6, 0.1)
        torch.testing.assert_close(
            cat.correct_mass_change_identity(pi, counts, correct, 6, 0.1, 1.0, -0.5), d_pos, rtol=1e-10, atol=1e-18)
        torch.testing.assert_close(
            cat.unsampled_correct_mass_change_identity(pi, counts, correct, counts.new_tensor(6.0), 0.1, 1.0, -0.5),
            d_upos, rtol=1e-10, atol=1e-18)


def test_proposition_3_2_unsampled_correct_mass_shrinks_while_correct_mass_grows():
    # one likely correct action (sampled), three rare correct ones (unsampled), four incorrect
    z = torch.tensor([3.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.5, 0.5], dtype=DT)
    correct = torch.tensor([True] * 4 + [False] * 4)
    samples = [0, 0, 0, 4]  # mixed group that misses the rare correct actions
    counts = _counts(samples, 8)
    eta = 0.5
    for kind in ("group", "batch"):
        w = cat.sampled_weights(counts, correct, kind=kind)
        dz = cat.surrogate_logit_update(torch.softmax(z, -1), w, 4, eta)
        d_pos = cat.exact_mass_change(z, dz, correct)
        d_upos = cat.exact_mass_change(z, dz, correct & (counts == 0))
        assert float(d_pos) > 0, kind
        assert float(d_upos) < 0, kind
        pi = torch.softmax(z, -1)
        assert float(cat.unsampled_correct_mass_change(pi, w, correct, counts, 4, eta)) < 0
        assert float(cat.correct_mass_change(pi, w, correct, 4, eta)) > 0


def test_group_advantages_by_hand():
    counts = torch.tensor([2.0, 1.0, 0.0, 1.0], dtype=DT)  # 3 correct of 4
    correct = torch.tensor([True, True, False, False])
    a_c, a_w, p_hat = cat.group_centered_advantages(counts, correct)
    # mean R = (3 - 1)/4 = 0.5
    assert float(p_hat) == 0.75 and float(a_c) == 0.5 and float(a_w) == -1.5


def test_bad_inputs():
    correct = torch.tensor([True, False])
    with pytest.raises(ValueError, match="actions"):
        cat.sampled_weights(torch.ones(3, dtype=DT), correct)
    with pytest.raises(ValueError, match="kind"):
        cat.sampled_weights(torch.ones(2, dtype=DT), correct, kind="nope")
    with pytest.raises(ValueError, match="bool"):
        cat.sampled_weights(torch.ones(2, dtype=DT), torch.tensor([1, 0]))
    with pytest.raises(ValueError, match="at least one sample"):
        cat.group_centered_advantages(torch.zeros(2, dtype=DT), correct)
