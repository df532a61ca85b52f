"""The focal weight taken apart (focal shuffled and batch-mean, controls; F-GRPO renormalised, a method): the
rearranged weights against plain loops, and the arm's advantages in a real demo step = verl's GRPO advantages × the
rearranged weights."""

import numpy as np
import pytest
import torch
import verl  # noqa: F401  a hard dependency: fail loudly if it is missing

from verl_focal.lab.demo.arms import CONTROL_FAMILIES, FOCAL_GAMMA_GRID, METHOD_FAMILIES, Arm, arms_by_name
from verl_focal.lab.demo.focal_controls import rearranged_weights, row_weights

P_HAT = np.array([0.0, 0.125, 0.5, 1.0, 0.75, 0.25, 0.875])  # two groups that are all wrong or all right


def _focal(p, gamma):
    return [(1 - x) ** gamma for x in p]


@pytest.mark.parametrize("gamma", [0.5, 1.0, 2.0])
def test_shuffled_permutes_the_mixed_groups_weights_and_keeps_the_others(gamma):
    w = rearranged_weights(P_HAT, gamma, "shuffled", np.random.default_rng(0))
    plain = _focal(P_HAT, gamma)
    mixed = [i for i, p in enumerate(P_HAT) if 0 < p < 1]
    assert [w[i] for i in (0, 3)] == [plain[0], plain[3]]  # all wrong: weight 1; all right: weight 0
    assert sorted(w[i] for i in mixed) == pytest.approx(sorted(plain[i] for i in mixed))
    assert [w[i] for i in mixed] != pytest.approx([plain[i] for i in mixed])  # the seed moves them
    # the permutation is the generator's: the same seed gives the same weights
    np.testing.assert_array_equal(w, rearranged_weights(P_HAT, gamma, "shuffled", np.random.default_rng(0)))


def test_batch_mean_gives_every_mixed_group_their_mean_weight():
    w = rearranged_weights(P_HAT, 1.0, "batch-mean", np.random.default_rng(0))
    mixed = [1 - p for p in P_HAT if 0 < p < 1]
    mean = sum(mixed) / len(mixed)  # (0.875 + 0.5 + 0.25 + 0.75 + 0.125) / 5 = 0.5
    assert mean == 0.5
    assert list(w) == pytest.approx([1.0, mean, mean, 0.0, mean, mean, mean])


@pytest.mark.parametrize("gamma", [0.5, 1.0, 2.0])
def test_renormalised_weights_have_mean_one_over_the_mixed_groups_and_focals_ratios(gamma):
    w = rearranged_weights(P_HAT, gamma, "renormalised", np.random.default_rng(0))
    plain = _focal(P_HAT, gamma)
    mixed = [i for i, p in enumerate(P_HAT) if 0 < p < 1]
    assert sum(w[i] for i in mixed) / len(mixed) == pytest.approx(1.0, rel=1e-12)
    for i in mixed:  # every ratio between two mixed groups is the focal weights' own
        for j in mixed:
            assert w[i] / w[j] == pytest.approx(plain[i] / plain[j], rel=1e-12)
    assert [w[0], w[3]] == [plain[0], plain[3]] == [1.0, 0.0]  # all wrong, all right: unchanged
    # γ = 1: weights 0.875, 0.5, 0.25, 0.75, 0.125 with mean 0.5, so twice F-GRPO's
    if gamma == 1.0:
        assert [w[i] for i in mixed] == pytest.approx([1.75, 1.0, 0.5, 1.5, 0.25])
    # no mixed group: nothing to renormalise
    none = rearranged_weights(np.array([0.0, 1.0]), gamma, "renormalised", np.random.default_rng(0))
    assert list(none) == [1.0, 0.0]


def test_row_weights_repeat_each_groups_weight_over_its_contiguous_rows():
    acc = np.array([1, 0, 0, 0] + [1, 1, 1, 1] + [1, 1, 0, 0], dtype=float)  # p̂ = 1/4, 1, 1/2
    w = row_weights(acc, 4, 2.0, "batch-mean", np.random.default_rng(1))
    mean = ((1 - 0.25) ** 2 + (1 - 0.5) ** 2) / 2
    assert list(w) == pytest.approx([mean] * 4 + [0.0] * 4 + [mean] * 4)
    with pytest.raises(ValueError, match="10 rows are not groups of 4"):
        row_weights(np.zeros(10), 4, 1.0, "shuffled", np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"focal weights mode 'sorted': choose from \['shuffled', 'batch-mean', "
                                         r"'renormalised'\]"):
        rearranged_weights(P_HAT, 1.0, "sorted", np.random.default_rng(0))


def test_the_families_run_f_grpos_gamma_grid_as_grpo_arms():
    controls, methods = {f.name: f for f in CONTROL_FAMILIES}, {f.name: f for f in METHOD_FAMILIES}
    assert "focal batch-mean" not in controls  # the second round's control, no longer run
    for fam, mode in ((controls["focal shuffled"], "shuffled"), (methods["F-GRPO renormalised"], "renormalised")):
        assert fam.control is (mode == "shuffled") and fam.labels == ("0.5", "1", "2")
        assert [(a.estimator, a.n, dict(a.settings), a.focal_weights) for a in fam.arms] == [
            ("grpo", 8, {"focal.gamma": g}, mode) for g in FOCAL_GAMMA_GRID]
        assert fam.arms[1].as_json()["focal_weights"] == mode
    assert [a.name for a in methods["F-GRPO renormalised"].arms] == [
        "F-GRPO N=8 γ=0.5 renormalised", "F-GRPO N=8 γ=1 renormalised", "F-GRPO N=8 γ=2 renormalised"]
    assert "focal_weights" not in arms_by_name(["GRPO N=8"])[0].as_json()  # other arms keep their shape
    with pytest.raises(ValueError, match="needs one of"):
        Arm("x", "f_grpo", 8, {"focal.gamma": 1.0}, focal_weights="shuffled")  # the weights go on GRPO, not F-GRPO


@pytest.fixture
def sft_policy():
    """A tiny policy after a short SFT on six problems, so that its groups hold right and wrong rollouts (an
    untrained policy solves none); fitted once per module, a fresh copy per test."""
    global _SFT
    import copy

    from verl_focal.lab.demo.model import ModelSpec, build_model, build_tokenizer, sft
    from verl_focal.lab.demo.task import sft_examples, split_problems

    if _SFT is None:
        tok = build_tokenizer()
        model = build_model(tok, ModelSpec(hidden=32, layers=1, heads=2, intermediate=64), seed=3)
        problems = split_problems(0)[0][:6]
        sft(model, tok, sft_examples(problems, {"add": 0.55, "sub": 0.3, "mul": 0.15}, 600, seed=0), steps=150,
            batch=64, lr=3e-3, seed=0)
        _SFT = (tok, model, problems)
    tok, model, problems = _SFT
    return tok, copy.deepcopy(model), problems


_SFT = None


ARM_OF_MODE = {"shuffled": arms_by_name(["GRPO N=8 focal shuffled γ=1"])[0],
               "batch-mean": Arm("GRPO N=8 focal batch-mean γ=1", "grpo", 8, {"focal.gamma": 1.0},
                                 focal_weights="batch-mean"),
               "renormalised": arms_by_name(["F-GRPO N=8 γ=1 renormalised"])[0]}


@pytest.mark.parametrize("mode", ["shuffled", "batch-mean", "renormalised"])
def test_the_arms_advantages_are_verls_grpo_advantages_times_the_rearranged_weights(monkeypatch, mode, sft_policy):
    """One demo RL step of the arm: what the update uses is verl's GRPO advantage (its own dispatch, run here
    a second time on the same rollouts) times the weights the same generator rearranges."""
    import verl_focal.lab.demo.rl as rl

    seen = {}
    real_loss = rl.core_algos.get_policy_loss_fn("vanilla")

    def loss(**k):
        seen["adv"] = k["advantages"].detach().clone()
        return real_loss(**k)

    real_adv = rl.compute_advantage

    def adv(data, **k):
        out = real_adv(data, **k)
        seen["grpo"] = out.batch["advantages"].clone()
        seen["rewards"] = data.batch["token_level_rewards"].sum(-1).numpy()
        return out

    monkeypatch.setattr(rl.core_algos, "get_policy_loss_fn", lambda name: loss)
    monkeypatch.setattr(rl, "compute_advantage", adv)
    tok, model, problems = sft_policy
    arm = ARM_OF_MODE[mode]
    rl.train_rl(model, tok, problems, arm, rl.RLConfig(steps=1, prompts_per_step=6), seed=5)
    p_hat = seen["rewards"].reshape(-1, 8).mean(1)
    assert ((p_hat > 0) & (p_hat < 1)).sum() >= 2, p_hat  # mixed groups to rearrange: the test can fail
    w = row_weights(seen["rewards"], 8, 1.0, mode, np.random.default_rng([5, 0xF0CA1]))
    assert not np.allclose(w[seen["grpo"].abs().sum(-1).numpy() > 0], 1.0)
    torch.testing.assert_close(seen["adv"], seen["grpo"] * torch.as_tensor(w, dtype=torch.float32)[:, None])
