"""The App. J simulation (docs/methods.md §4): step maths, sampling, determinism, regimes."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from verl_focal.lab.theory import sim
from verl_focal.lab.theory.sim import kernels
from verl_focal.lab.theory.sim import run as sim_run

DT = torch.float64


def _tiny(**kw) -> sim.SimConfig:
    base = dict(n_actions=300, n_correct=30, group_sizes=(4, 32), gammas=(0.0, 1.0), steps=12,
                seeds=(0, 1), record_every=4)
    base.update(kw)
    return sim.SimConfig(**base).validate()


def test_initial_policy_matches_paper_numbers():
    cfg = sim.paper_config()
    pi = np.exp(sim.initial_logits(cfg))
    pi /= pi.sum()
    z_total = math.exp(5) + 9999 * math.exp(3) + 118_000
    assert pi[:10_000].sum() == pytest.approx((math.exp(5) + 9999 * math.exp(3)) / z_total, rel=1e-12)
    assert pi[:10_000].sum() == pytest.approx(0.63, abs=0.005)  # docs/methods.md §4: Q_pos ~ 0.63
    assert pi[1] == pytest.approx(math.exp(3) / z_total, rel=1e-12)  # ~6.3e-5: tau of docs/methods.md §3
    assert pi[1] == pytest.approx(6.3e-5, rel=0.01)


def test_initial_policy_from_masses():
    z = sim.initial_logits_from_masses(0.4, 1e-3, n_actions=1000, n_correct=100)
    pi = np.exp(z) / np.exp(z).sum()
    assert pi[:100].sum() == pytest.approx(0.4)
    assert pi[5] == pytest.approx(1e-3)
    assert pi[0] == pytest.approx(0.4 - 99e-3)
    with pytest.raises(ValueError, match="n_correct <= 400"):
        sim.initial_logits_from_masses(0.4, 1e-3, n_actions=1000, n_correct=500)


def _sample(k: int, n: int, seed: int, probs: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.choice(k, size=n, p=probs)


@pytest.mark.parametrize("objective", ["prob", "logprob"])
@pytest.mark.parametrize("gamma", [0.0, 1.0])
def test_three_step_implementations_agree_with_autograd(objective, gamma):
    k, nc, n, eta = 50, 7, 16, 0.7
    gen = torch.Generator().manual_seed(5)
    z = torch.randn(k, generator=gen, dtype=DT)
    probs = torch.softmax(z, -1)
    samples = _sample(k, n, 3, probs.numpy())
    counts = np.bincount(samples, minlength=k).astype(np.float64)
    # autograd of (g/N) sum_j rt_j f(p_{a_j}), f = identity (App. J) or log (REINFORCE)
    rewards = torch.tensor([1.0 if a < nc else -1.0 for a in samples], dtype=DT)
    adv = rewards - rewards.mean()
    g = (1 - float((rewards > 0).double().mean())) ** gamma
    zz = z.clone().requires_grad_(True)
    p = torch.softmax(zz, -1) if objective == "prob" else torch.log_softmax(zz, -1)
    (grad,) = torch.autograd.grad(g / n * sum(adv[j] * p[a] for j, a in enumerate(samples)), zz)
    want = z + eta * grad

    gam = torch.tensor([gamma], dtype=DT)
    dense = sim.torch_step(z.clone().unsqueeze(0), torch.from_numpy(counts).unsqueeze(0), n, nc, eta, gam, objective)
    torch.testing.assert_close(dense[0], want, rtol=1e-12, atol=1e-14)
    zs = z.clone().unsqueeze(0)
    shift = zs.max()
    e = torch.exp(zs - shift)
    kernels.sparse_step(zs, e, e.sum(-1, keepdim=True), torch.from_numpy(samples).unsqueeze(0), None, n, nc, eta,
                        gam, objective, 1.0, -1.0)
    torch.testing.assert_close(zs[0], want, rtol=1e-12, atol=1e-14)
    zd = z.clone().unsqueeze(0)
    e = torch.exp(zd - zd.max())
    kernels.dense_step(zd, e, e.sum(-1, keepdim=True), torch.from_numpy(counts.copy()).unsqueeze(0), n, nc, eta, gam,
                       objective, 1.0, -1.0)
    torch.testing.assert_close(zd[0], want, rtol=1e-12, atol=1e-14)
    if objective == "prob":
        ref = sim.numpy_reference_step(z.numpy().copy(), counts, nc, eta, gamma)
        np.testing.assert_allclose(ref, want.numpy(), rtol=1e-12, atol=1e-14)


def test_retained_mass_by_hand():
    pi0 = np.array([0.4, 0.2, 0.1, 0.3])  # first two correct
    pit = np.array([0.5, 0.15, 0.1, 0.25])
    # lost: max(0, 0.4-0.5) + max(0, 0.2-0.15) = 0.05 of 0.6
    assert sim.retained_correct_mass(pi0, pit, 2) == pytest.approx(1 - 0.05 / 0.6)
    assert sim.retained_correct_mass(pi0, pi0, 2) == 1.0
    t = sim.retained_correct_mass(torch.tensor(pi0), torch.tensor(pit), 2)
    assert float(t) == pytest.approx(1 - 0.05 / 0.6)


def test_sorted_uniform_sampling_has_the_right_distribution():
    probs = np.array([0.5, 0.25, 0.125, 0.0625, 0.0625])
    cdf = np.cumsum(probs)
    gen = np.random.Generator(np.random.PCG64(7))
    u = sim_run.sorted_uniforms(gen, 400_000)
    assert np.all(np.diff(u) >= 0) and 0 < u[0] and u[-1] < 1
    idx = np.minimum(np.searchsorted(cdf, u * cdf[-1], side="right"), 4)
    freq = np.bincount(idx, minlength=5) / u.size
    assert np.all(np.abs(freq - probs) < 5 * np.sqrt(probs * (1 - probs) / u.size))


def test_deterministic_and_independent_of_batch_composition():
    a = sim.run_simulation(_tiny(), progress=False)
    b = sim.run_simulation(_tiny(), progress=False)
    assert a.records == b.records
    # seed 1 alone, gamma 1 alone: the same trajectory as inside the full batch
    c = sim.run_simulation(_tiny(seeds=(1,), gammas=(1.0,)), progress=False)
    sel = [r for r in a.records if r["seed"] == 1 and r["gamma"] == 1.0]
    assert [r["m_ret"] for r in c.records] == [r["m_ret"] for r in sel]
    # different seeds differ
    d = sim.run_simulation(_tiny(seeds=(5,)), progress=False)
    assert [r["m_ret"] for r in d.records] != [r["m_ret"] for r in a.records if r["seed"] == 0]


def test_dense_and_sparse_paths_give_the_same_run(monkeypatch):
    cfg = _tiny(group_sizes=(64,), steps=8)
    sparse = sim.run_simulation(cfg, progress=False)
    monkeypatch.setattr(sim_run, "DENSE_FROM_N", 1)
    dense = sim.run_simulation(cfg, progress=False)
    for a, b in zip(sparse.records, dense.records):
        assert a["m_ret"] == pytest.approx(b["m_ret"], rel=0, abs=1e-13)
        assert a["active_fraction"] == b["active_fraction"]


def test_records_cover_every_point():
    cfg = _tiny()
    res = sim.run_simulation(cfg, progress=False)
    assert len(res.records) == len(cfg.group_sizes) * len(cfg.gammas) * len(cfg.seeds) * 3  # steps 4, 8, 12
    for r in res.records:
        assert 0 < r["m_ret"] <= 1 and 0 < r["correct_mass"] < 1 and 0 <= r["active_fraction"] <= 1


def test_three_regimes_and_focal_gain():
    """App. J scaled down 8x (16,000 actions, 1,250 correct, logits 5/3/0: the same correct
    mass 0.63; each non-anchor correct action 8x likelier), 40 steps: the loss of
    correct mass is larger at intermediate N than at N=2, small at large N, and gamma=1
    loses less than gamma=0 in the middle regime.  (A 2,000-action copy shows no regime
    III: its anchor out-pulls the other correct actions even under the exact gradient.)"""
    cfg = sim.SimConfig(n_actions=16_000, n_correct=1_250, group_sizes=(2, 16, 4096), steps=40, seeds=(0, 1),
                        record_every=40).validate()
    rows = {(r["n"], r["gamma"]): 1 - r["m_ret_mean"] for r in sim.summarise(sim.run_simulation(cfg, progress=False))}
    assert rows[(16, 0.0)] > 1.2 * rows[(2, 0.0)] > 0  # regime I keeps more than regime II
    assert rows[(4096, 0.0)] < 0.2 * rows[(16, 0.0)]  # regime III keeps most of it
    assert rows[(16, 1.0)] < 0.6 * rows[(16, 0.0)]  # focal weighting keeps more in regime II


@pytest.mark.parametrize(
    "kw, word",
    [
        ({"objective": "adam"}, "objective"),
        ({"eta": -1.0}, "eta"),
        ({"group_sizes": (0,)}, "group_sizes"),
        ({"gammas": (-1.0,)}, "gammas"),
        ({"seeds": (1, 1)}, "seeds"),
        ({"mu": 0.5}, "mu and tau"),
        ({"n_correct": 300}, "n_correct"),
    ],
)
def test_config_validation_names_the_field(kw, word):
    with pytest.raises(ValueError, match=word):
        _tiny(**kw)


def test_parse_group_sizes():
    assert sim.parse_group_sizes("2..16") == (2, 4, 8, 16)
    assert sim.parse_group_sizes(["8,12", "3"]) == (8, 12, 3)
    with pytest.raises(ValueError, match="bad group size"):
        sim.parse_group_sizes("abc")
    with pytest.raises(ValueError, match="bad N range"):
        sim.parse_group_sizes("16..2")


def test_n_grid_range_ends_must_be_powers_of_two(capsys):
    """`-h` says a range means the powers of two from LO to HI: a range from 3 would double from 3 (3, 6, 12, ...),
    which is not what it says, so it is refused with what it accepts; a list of any sizes is still fine."""
    from verl_focal.cli import main

    assert sim.parse_group_sizes("1-8") == (1, 2, 4, 8)
    assert sim.parse_group_sizes("3,6,12") == (3, 6, 12)
    for bad, ends, fix in (("3-100", "3 and 100 are not powers", "4-64"), ("2-100", "100 is not a power", "2-64"),
                           ("5-6", "5 and 6 are not powers", "4-8")):
        with pytest.raises(ValueError, match=f"--n-grid {bad}: a range LO-HI lists the powers of two from LO to HI, "
                                             f"and {ends} of two; write e.g. {fix},"):
            sim.parse_group_sizes(bad)
    assert main(["sim", "--n-grid", "3-100", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[0].startswith("verl-focal sim: error: --n-grid 3-100: a range LO-HI lists the powers")
