"""f_grpo through verl's real ``compute_advantage`` dispatch with a real DataProto."""

import numpy as np
import pytest
import torch
import verl  # noqa: F401  (loads our plugin through the verl.plugins entry point)
from omegaconf import OmegaConf
from verl import DataProto
from verl.trainer.ppo import core_algos
from verl.trainer.ppo.ray_trainer import compute_advantage

from _reference import make_grouped_batch, reference_advantages
from verl_focal.estimators.context import AdvantageContext, ContextAlignmentError, use_context

SIZES = [8, 1, 3, 8, 2, 5, 1, 7]


def _algo(gamma, base="grpo", norm=True, **focal):
    return OmegaConf.create(
        {"adv_estimator": "f_grpo", "norm_adv_by_std_in_grpo": norm, "focal": {"gamma": gamma, "base": base, **focal}}
    )


def _dispatch(rewards, mask, index, algo, estimator="f_grpo"):
    data = DataProto.from_dict(
        tensors={"token_level_rewards": rewards.clone(), "response_mask": mask.clone()},
        non_tensors={"uid": index},
    )
    out = compute_advantage(
        data,
        adv_estimator=estimator,
        norm_adv_by_std_in_grpo=algo.get("norm_adv_by_std_in_grpo", True),
        config=algo,
    )
    return out.batch["advantages"]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(
    "base,norm,verl_name",
    [("grpo", True, "grpo"), ("grpo", False, "grpo"), ("drgrpo", True, "grpo-nostd"), ("rloo", True, "rloo")],
)
def test_gamma_zero_equals_verl_builtin(seed, base, norm, verl_name):
    rewards, mask, index = make_grouped_batch(seed, SIZES, n_padding=3, length=9, reward_values=(0.0, 1.0, -1.0, 0.5))
    ours = _dispatch(rewards, mask, index, _algo(0.0, base, norm))
    if verl_name == "grpo-nostd":
        theirs = _dispatch(rewards, mask, index, OmegaConf.create({"norm_adv_by_std_in_grpo": False}), "grpo")
    elif verl_name == "grpo":
        theirs = _dispatch(rewards, mask, index, OmegaConf.create({"norm_adv_by_std_in_grpo": norm}), "grpo")
    else:
        theirs = _dispatch(rewards, mask, index, OmegaConf.create({}), verl_name)
    assert (ours - theirs).abs().max().item() <= 1e-6
    if verl_name == "grpo" and norm:  # also the vectorised built-in
        vec = _dispatch(rewards, mask, index, OmegaConf.create({}), "grpo_vectorized")
        assert (ours - vec).abs().max().item() <= 1e-6


@pytest.mark.parametrize("gamma", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("base", ["grpo", "rloo"])
def test_focal_values_match_independent_formula(gamma, base):
    rewards, mask, index = make_grouped_batch(7, SIZES, n_padding=2, length=5)
    adv = _dispatch(rewards, mask, index, _algo(gamma, base))
    scores = rewards.sum(-1)
    valid = (mask.sum(-1) > 0).tolist()
    ref = reference_advantages(scores.tolist(), index, valid, base=base, gamma=gamma)
    expected = torch.tensor(ref, dtype=torch.float32).unsqueeze(-1) * mask
    assert torch.allclose(adv, expected, atol=1e-6)
    # tokens outside the response and padding rows carry nothing
    assert adv[mask == 0].abs().max().item() == 0.0


def test_acc_from_context_overrides_shaped_reward_and_records_metrics():
    # A DAPO-style shaped reward: correct answers penalised for length score 0.3 (< threshold 0.5).
    index = np.array(["a"] * 4 + ["b"] * 4, dtype=object)
    scores = torch.tensor([0.3, 1.0, -1.0, -1.5, -1.0, -1.0, 1.0, -1.2])
    acc = np.array([1, 1, 0, 0, 0, 0, 1, 0], dtype=float)
    mask = torch.ones(8, 3)
    rewards = torch.zeros(8, 3)
    rewards[:, -1] = scores
    ctx = AdvantageContext(uids=index, acc=acc)
    with use_context(ctx):
        adv = _dispatch(rewards, mask, index, _algo(1.0))
    ref = reference_advantages(scores.tolist(), index, [True] * 8, gamma=1.0, correct=acc.tolist())
    assert adv[:, 0].tolist() == pytest.approx(ref, abs=1e-6)
    # group a: p̂ = 2/4 -> weight 0.5; group b: 1/4 -> 0.75
    assert ctx.metrics["focal/weight_mean_active"] == pytest.approx((0.5 + 0.75) / 2)
    assert ctx.metrics["focal/acc_from_extra_frac"] == 1.0
    assert ctx.metrics["focal/frac_active"] == 1.0
    # without acc the threshold would call row 0 wrong: p̂_a = 1/4 -> different advantages
    adv_thr = _dispatch(rewards, mask, index, _algo(1.0))
    assert not torch.allclose(adv, adv_thr)


def test_missing_acc_rows_fall_back_to_threshold_per_row():
    index = np.array(["a"] * 4, dtype=object)
    rewards = torch.zeros(4, 2)
    rewards[:, -1] = torch.tensor([1.0, 0.0, 0.0, 0.0])
    ctx = AdvantageContext(uids=index, acc=np.array([np.nan, 1.0, 0.0, 0.0]))
    with use_context(ctx):
        adv = _dispatch(rewards, torch.ones(4, 2), index, _algo(1.0))
    # row 0 by threshold (1.0 > 0.5 -> correct), row 1 by acc -> p̂ = 2/4
    ref = reference_advantages([1, 0, 0, 0], index, [True] * 4, gamma=1.0, correct=[1, 1, 0, 0])
    assert adv[:, 0].tolist() == pytest.approx(ref, abs=1e-6)
    assert ctx.metrics["focal/acc_from_extra_frac"] == pytest.approx(0.75)


def test_correctness_acc_requires_acc():
    rewards, mask, index = make_grouped_batch(0, [4, 4])
    with pytest.raises(ValueError, match="algorithm.focal.correctness=acc but no `acc` reached f_grpo"):
        _dispatch(rewards, mask, index, _algo(0.5, correctness="acc"))


def test_with_correctness_acc_a_row_without_acc_leaves_its_group_and_is_counted(caplog):
    """correctness=acc: a row the reward function gave no `acc` never ends the step; it gets advantage 0
    and the rest of its group is scored as if it were padding."""
    index = np.array(["a"] * 4 + ["b"] * 4, dtype=object)
    rewards = torch.zeros(8, 2)
    rewards[:, -1] = torch.tensor([1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0])
    acc = np.array([1.0, 0.0, np.nan, 0.0, 1.0, 1.0, 0.0, 0.0])  # row 2: no acc extra
    ctx = AdvantageContext(uids=index, acc=acc)
    with use_context(ctx), caplog.at_level("WARNING"):
        adv = _dispatch(rewards, torch.ones(8, 2), index, _algo(1.0, correctness="acc"))
    assert adv[2].abs().max().item() == 0.0 and ctx.metrics["verl_focal/rows_without_acc"] == 1.0
    assert "uid 'a' (row 2" in caplog.text
    valid = [True, True, False, True, True, True, True, True]
    ref = reference_advantages(rewards[:, -1].tolist(), index, valid, gamma=1.0, correct=np.nan_to_num(acc).tolist())
    assert adv[:, 0].tolist() == pytest.approx(ref, abs=1e-6)


def test_a_nan_reward_leaves_its_group_and_is_counted_never_ending_the_step(caplog):
    rewards, mask, index = make_grouped_batch(0, [4, 4], n_padding=0, shuffle=False)
    for bad in (float("nan"), float("inf")):
        rewards[5, 0] = bad
        ctx = AdvantageContext(uids=index)
        with use_context(ctx), caplog.at_level("WARNING"):
            adv = _dispatch(rewards, mask, index, _algo(0.5))
        assert torch.isfinite(adv).all() and adv[5].abs().max().item() == 0.0
        assert ctx.metrics["verl_focal/nonfinite_reward_rows"] == 1.0
        assert "uid 'u1'" in caplog.text
        # the other rows of that group are as if row 5 were padding
        mask2 = mask.clone()
        mask2[5] = 0.0
        r2 = rewards.clone()
        r2[5, 0] = 0.0
        ref = _dispatch(r2, mask2, index, _algo(0.5))
        assert torch.allclose(adv[:, 0], ref[:, 0], atol=1e-6)


def test_misaligned_context_is_refused():
    rewards, mask, index = make_grouped_batch(0, [4, 4], n_padding=0, shuffle=False)
    wrong = index.copy()
    wrong[[0, 7]] = wrong[[7, 0]]
    with use_context(AdvantageContext(uids=wrong, acc=np.zeros(8))):
        msg = r"row 0 of verl's batch has uid 'u0' but the hook's row 0 has uid 'u1'"
        with pytest.raises(ContextAlignmentError, match=msg):
            _dispatch(rewards, mask, index, _algo(0.5))
    with use_context(AdvantageContext(uids=index[:4], acc=np.zeros(4))):
        with pytest.raises(ContextAlignmentError, match="the hook fetched 4 rows but verl's batch has 8"):
            _dispatch(rewards, mask, index, _algo(0.5))


def test_bad_config_surfaces_at_dispatch():
    rewards, mask, index = make_grouped_batch(0, [4])
    with pytest.raises(ValueError, match=r"unknown key\(s\) algorithm.focal.gama"):
        _dispatch(rewards, mask, index, OmegaConf.create({"focal": {"gama": 1.0}}))


def test_registered_by_entry_point_only():
    # `import verl` above loaded verl_focal.plugin via the verl.plugins entry point
    fn = core_algos.get_adv_estimator_fn("f_grpo")
    assert fn.__module__ == "verl_focal.estimators.focal"
