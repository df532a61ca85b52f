"""passk_grpo, unlikely_grpo, maxrl and ds_grpo through verl's real ``compute_advantage`` dispatch, the
legacy hook, and start-up validation (docs/methods.md §9-12)."""

import numpy as np
import pytest
import torch
import verl  # noqa: F401  (loads our plugin through the verl.plugins entry point)
from omegaconf import OmegaConf
from verl import DataProto
from verl.trainer.ppo import ray_trainer
from verl.trainer.ppo.ray_trainer import compute_advantage

from _reference import make_grouped_batch, reference_advantages
from _reference_family import (
    ds_grpo_rows_reference,
    maxrl_rows_reference,
    passk_rows_reference,
    unlikely_rows_reference,
)
from verl_focal.config.schema import ConfigError, validate_algorithm_config
from verl_focal.estimators.context import use_context
from verl_focal.estimators.old_log_probs import OLD_LOG_PROBS
from verl_focal.step.rows import build_context

SIZES = [8, 3, 8, 5, 4, 8]


def _dispatch(rewards, mask, index, algo, estimator, old_lp=None):
    tensors = {"token_level_rewards": rewards.clone(), "response_mask": mask.clone()}
    if old_lp is not None:  # verl's old-log-prob pass wrote them: the hook reduces them from the DataProto
        tensors["old_log_probs"] = old_lp.clone()
    data = DataProto.from_dict(tensors=tensors, non_tensors={"uid": index})
    out = compute_advantage(
        data, adv_estimator=estimator, norm_adv_by_std_in_grpo=algo.get("norm_adv_by_std_in_grpo", True), config=algo
    )
    return out.batch["advantages"]


# ---------------------------------------------------------------- passk_grpo
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k,norm", [(1, True), (2, True), (3, True), (3, False)])
def test_passk_through_verl_dispatch_equals_loop_reference(seed, k, norm):
    rewards, mask, index = make_grouped_batch(seed, SIZES, n_padding=3, length=7)
    algo = OmegaConf.create({"adv_estimator": "passk_grpo", "norm_adv_by_std_in_grpo": norm, "passk": {"k": k}})
    adv = _dispatch(rewards, mask, index, algo, "passk_grpo")
    valid = (mask.sum(-1) > 0).tolist()
    ref = passk_rows_reference((rewards.sum(-1) > 0.5).tolist(), index, valid, k, norm=norm)
    expected = torch.tensor(ref, dtype=torch.float32).unsqueeze(-1) * mask
    assert torch.allclose(adv, expected, rtol=1e-5, atol=1e-5)
    assert adv[mask == 0].abs().max().item() == 0.0  # padding rows and tokens outside responses


def test_passk_reads_correctness_from_acc_not_the_shaped_reward():
    index = np.array(["a"] * 4, dtype=object)
    rewards = torch.zeros(4, 2)
    rewards[:, -1] = torch.tensor([0.3, -1.0, -1.0, -1.0])  # row 0: correct but penalised below 0.5
    algo = OmegaConf.create({"passk": {"k": 2}})
    ctx = build_context(index, frozenset({"acc"}), [{"acc": 1.0}, {"acc": 0.0}, {"acc": 0.0}, {"acc": 0.0}])
    with use_context(ctx):
        adv = _dispatch(rewards, torch.ones(4, 2), index, algo, "passk_grpo")
    ref = passk_rows_reference([1, 0, 0, 0], index, [1] * 4, 2)
    assert adv[:, 0].tolist() == pytest.approx(ref, rel=1e-5)
    assert ctx.metrics["passk/k"] == 2.0 and ctx.metrics["passk/rho_mean"] == pytest.approx(0.5)


def test_passk_a_group_smaller_than_k_falls_back_to_grpo_and_is_counted():
    """One dropped session leaves a group of 2 with k = 3: that group gets k = 1 (GRPO, population std), the
    others keep k = 3, the step completes and reports the fallback."""
    index = np.array(["big"] * 4 + ["tiny"] * 2, dtype=object)
    rewards = torch.zeros(6, 2)
    rewards[0, -1] = 1.0
    rewards[4, -1] = 1.0
    algo = OmegaConf.create({"passk": {"k": 3}})
    acc = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    ctx = build_context(index, frozenset({"acc"}), [{"acc": a} for a in acc])
    with use_context(ctx):
        adv = _dispatch(rewards, torch.ones(6, 2), index, algo, "passk_grpo")
    assert adv[:4, 0].tolist() == pytest.approx(passk_rows_reference(acc[:4], index[:4], [1] * 4, 3), rel=1e-5)
    assert adv[4:, 0].tolist() == pytest.approx(passk_rows_reference(acc[4:], index[4:], [1] * 2, 1), rel=1e-5)
    assert adv[4, 0].item() == pytest.approx(1.0, rel=1e-5) and adv[5, 0].item() == pytest.approx(-1.0, rel=1e-5)
    assert ctx.metrics["passk/short_groups"] == 1.0 and ctx.metrics["passk/groups"] == 2.0

def test_passk_a_group_of_padding_rows_is_not_a_group():
    index = np.array(["big"] * 4 + ["tiny"] * 2, dtype=object)
    rewards = torch.zeros(6, 2)
    rewards[0, -1] = 1.0
    algo = OmegaConf.create({"passk": {"k": 3}})
    mask = torch.ones(6, 2)
    mask[4:] = 0.0
    adv = _dispatch(rewards, mask, index, algo, "passk_grpo")
    assert adv[4:].abs().max().item() == 0.0


# ------------------------------------------------------------- unlikely_grpo
def _unlikely_batch(seed):
    rewards, mask, index = make_grouped_batch(seed, SIZES, n_padding=3, length=7)
    rng = np.random.default_rng(100 + seed)
    old_lp = torch.as_tensor(rng.uniform(-3.0, -0.01, size=mask.shape), dtype=torch.float32) * mask
    return rewards, mask, index, old_lp


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("beta,likelihood,norm", [(0.25, "sum", True), (1.0, "mean", True), (0.5, "sum", False)])
def test_unlikely_through_verl_dispatch_equals_loop_reference(seed, beta, likelihood, norm):
    rewards, mask, index, old_lp = _unlikely_batch(seed)
    algo = OmegaConf.create({"norm_adv_by_std_in_grpo": norm, "unlikely": {"beta": beta, "likelihood": likelihood}})
    ctx = build_context(index, frozenset({"acc", OLD_LOG_PROBS}))
    with use_context(ctx):
        adv = _dispatch(rewards, mask, index, algo, "unlikely_grpo", old_lp)
    lp_sum = (old_lp.double() * mask).sum(-1)
    loglik = (lp_sum / mask.sum(-1).clamp(min=1)) if likelihood == "mean" else lp_sum
    scores = rewards.sum(-1).tolist()
    ref = unlikely_rows_reference(
        scores, [s > 0.5 for s in scores], loglik.tolist(), index, (mask.sum(-1) > 0).tolist(), beta, norm=norm
    )
    expected = torch.tensor(ref, dtype=torch.float32).unsqueeze(-1) * mask
    assert torch.allclose(adv, expected, rtol=1e-5, atol=1e-5)
    assert ctx.metrics["unlikely/beta"] == beta
    assert 1.0 - beta <= ctx.metrics["unlikely/factor_min"] <= 1.0


def test_unlikely_beta_zero_is_verls_grpo():
    rewards, mask, index, old_lp = _unlikely_batch(5)
    ours = _dispatch(rewards, mask, index, OmegaConf.create({"unlikely": {"beta": 0.0}}), "unlikely_grpo", old_lp)
    theirs = _dispatch(rewards, mask, index, OmegaConf.create({}), "grpo")
    assert (ours - theirs).abs().max().item() <= 1e-6


def test_unlikely_without_old_log_probs_refuses_with_a_message():
    """Called bare (no hook), and through verl's dispatch on a DataProto without ``old_log_probs``."""
    from verl_focal.estimators.unlikely import compute_unlikely_grpo_advantage

    rewards, mask, index, _ = _unlikely_batch(0)
    with pytest.raises(
        ConfigError,
        match=r"unlikely_grpo ranks rollouts by their old log-probs.*"
        r"no verl-focal trainer hook is active.*verl_focal.main_ppo",
    ):
        compute_unlikely_grpo_advantage(rewards, mask, OmegaConf.create({}), index)
    with pytest.raises(ConfigError, match=r"the hook \(dataproto\) found none.*keep the old-log-prob pass on"):
        _dispatch(rewards, mask, index, OmegaConf.create({}), "unlikely_grpo")
    ctx = build_context(index, frozenset({OLD_LOG_PROBS}), source="v1-transferqueue")  # hook ran, column absent
    with use_context(ctx), pytest.raises(ConfigError, match=r"the hook \(v1-transferqueue\) found none"):
        _dispatch(rewards, mask, index, OmegaConf.create({}), "unlikely_grpo")


def test_unlikely_through_the_legacy_hook_reads_old_log_probs_from_the_dataproto(legacy_hook):
    legacy_hook()
    uid = np.array(["p"] * 4 + ["q"] * 4, dtype=object)
    acc = np.array([1, 1, 1, 0, 1, 1, 0, 0], dtype=float)
    score = acc.copy()
    bs, L = 8, 5
    mask = torch.ones(bs, L)
    mask[0, 3:] = 0.0  # a shorter response
    rewards = torch.zeros(bs, L)
    rewards[:, 0] = torch.as_tensor(score, dtype=torch.float32)
    old_lp = -torch.arange(1, bs * L + 1, dtype=torch.float32).reshape(bs, L).flip(0) / 10 * mask
    data = DataProto.from_dict(
        tensors={
            "token_level_rewards": rewards,
            "token_level_scores": rewards.clone(),
            "response_mask": mask,
            "old_log_probs": old_lp,
            "responses": torch.ones(bs, L, dtype=torch.long),
            "prompts": torch.ones(bs, 3, dtype=torch.long),
            "attention_mask": torch.cat([torch.ones(bs, 3), mask], dim=1),
        },
        non_tensors={"uid": uid, "acc": acc},
    )
    algo = OmegaConf.create({"adv_estimator": "unlikely_grpo", "unlikely": {"beta": 0.5}})
    out = ray_trainer.compute_advantage(data, adv_estimator="unlikely_grpo", config=algo)
    lp_sum = (old_lp.double() * mask).sum(-1).tolist()
    ref = unlikely_rows_reference(score.tolist(), acc.tolist(), lp_sum, uid, [1] * bs, 0.5)
    assert out.batch["advantages"][:, 0].tolist() == pytest.approx(ref, abs=1e-5)
    assert ref != pytest.approx(reference_advantages(score.tolist(), uid, [1] * bs), abs=1e-3)  # β matters here
    metrics = ray_trainer.compute_data_metrics(batch=out, use_critic=False)
    assert metrics["unlikely/correct_rows"] == 5.0


# ------------------------------------------------------------ maxrl, ds_grpo
#: unequal groups, two singletons; u0 is made all-correct and u3 all-wrong below; rows shuffled (interleaved)
FAMILY_SIZES = [8, 1, 3, 8, 5, 1, 4]


def _family_batch(seed, shaped=False):
    """Rows of 7 groups in random order with 3 padding rows; rewards 0/1 (or, ``shaped``, a correct
    answer scores 1 − 0.3 and a wrong one −0.2, as an overlong penalty and a format bonus would), and
    ``acc`` the 0/1 correctness; old log-probs on the response tokens."""
    rewards, mask, index = make_grouped_batch(seed, FAMILY_SIZES, n_padding=3, length=7)
    valid = (mask.sum(-1) > 0).numpy()
    acc = (rewards.sum(-1) > 0.5).double().numpy()
    acc[index == "u0"], acc[index == "u3"] = 1.0, 0.0
    acc[~valid] = 0.0
    score = np.where(acc > 0, 0.7, -0.2) if shaped else acc.copy()
    score[~valid] = 0.0
    rewards = torch.zeros_like(mask)
    last = (mask.sum(-1).long() - 1).clamp(min=0)
    rewards[torch.arange(len(index)), last] = torch.as_tensor(score, dtype=torch.float32)
    rewards = rewards * mask
    rng = np.random.default_rng(200 + seed)
    old_lp = torch.as_tensor(rng.uniform(-3.0, -0.01, size=mask.shape), dtype=torch.float32) * mask
    return rewards, mask, index, acc, old_lp


def _acc_context(index, acc, needs=frozenset({"acc"})):
    return build_context(index, needs, [{"acc": float(a)} for a in acc])


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("eps", [1e-6, 0.25])
def test_maxrl_through_verl_dispatch_equals_loop_reference(seed, eps):
    rewards, mask, index, acc, _ = _family_batch(seed, shaped=True)
    ctx = _acc_context(index, acc)
    with use_context(ctx):
        adv = _dispatch(rewards, mask, index, OmegaConf.create({"maxrl": {"epsilon": eps}}), "maxrl")
    valid = (mask.sum(-1) > 0).tolist()
    ref = maxrl_rows_reference(acc.tolist(), index, valid, eps)  # correctness from acc, never the shaped reward
    assert torch.allclose(adv, torch.tensor(ref, dtype=torch.float32).unsqueeze(-1) * mask, rtol=1e-5, atol=1e-5)
    assert adv[mask == 0].abs().max().item() == 0.0
    for u in ("u0", "u3", "u1", "u5"):  # all correct, all wrong, the two singletons: 0
        assert adv[torch.as_tensor(index == u)].abs().max().item() == 0.0
    assert ctx.metrics["maxrl/singleton_groups"] == 2.0 and ctx.metrics["maxrl/groups"] == 7.0


def test_maxrl_matches_the_authors_worked_example_and_the_grpo_identity():
    """[1, 0, 0, 0] -> [3, -1, -1, -1] (prime-rl's test of the same rule); for 0/1 rewards Â equals GRPO's
    population-std advantage times sqrt((1 - p)/p)."""
    index = np.array(["a"] * 4 + ["b"] * 8, dtype=object)
    c = [1, 0, 0, 0] + [1, 1, 1, 0, 0, 0, 0, 0]
    rewards = torch.tensor(c, dtype=torch.float32).unsqueeze(-1)
    adv = _dispatch(rewards, torch.ones(12, 1), index, OmegaConf.create({}), "maxrl")[:, 0]
    assert adv[:4].tolist() == pytest.approx([3.0, -1.0, -1.0, -1.0], rel=1e-5)
    p = 3 / 8
    grpo_pop = [(x - p) / np.sqrt(p * (1 - p)) for x in c[4:]]
    assert adv[4:].tolist() == pytest.approx([a * np.sqrt((1 - p) / p) for a in grpo_pop], rel=1e-5)


def test_maxrl_does_not_read_the_shaped_reward_without_acc():
    """Without ``acc`` correctness is reward > correct_threshold: a +0.3 format bonus on a wrong answer
    (below the threshold) leaves the advantage exactly that of the 0/1 rewards."""
    index = np.array(["a"] * 4, dtype=object)
    plain = torch.tensor([[1.0], [0.0], [0.0], [1.0]])
    shaped = torch.tensor([[1.3], [0.3], [0.0], [0.9]])
    a = _dispatch(plain, torch.ones(4, 1), index, OmegaConf.create({}), "maxrl")
    b = _dispatch(shaped, torch.ones(4, 1), index, OmegaConf.create({}), "maxrl")
    assert torch.equal(a, b) and a[:, 0].tolist() == pytest.approx([1.0, -1.0, -1.0, 1.0], rel=1e-5)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("c_pos,c_neg,std,norm", [(0.05, 0.05, "population", True), (0.2, 0.0, "sample", True),
                                                  (0.0, 0.1, "population", False)])
def test_ds_grpo_through_verl_dispatch_equals_loop_reference(seed, c_pos, c_neg, std, norm):
    rewards, mask, index, acc, old_lp = _family_batch(seed)
    algo = OmegaConf.create({"norm_adv_by_std_in_grpo": norm,
                             "ds_grpo": {"correct_coef": c_pos, "incorrect_coef": c_neg, "std": std}})
    ctx = _acc_context(index, acc, frozenset({"acc", OLD_LOG_PROBS}))
    with use_context(ctx):
        adv = _dispatch(rewards, mask, index, algo, "ds_grpo", old_lp)
    valid = (mask.sum(-1) > 0).tolist()
    ref = ds_grpo_rows_reference(rewards.sum(-1).tolist(), acc.tolist(), old_lp.tolist(), mask.tolist(), index, valid,
                                 c_pos, c_neg, population=std == "population", norm=norm)
    assert torch.allclose(adv, torch.tensor(ref, dtype=torch.float32).unsqueeze(-1) * mask, rtol=1e-5, atol=1e-5)
    assert adv[mask == 0].abs().max().item() == 0.0
    if c_pos > 0:  # the smoothing applies in an all-correct group too
        assert adv[torch.as_tensor(index == "u0"), 0].min().item() > 0.0
    assert ctx.metrics["ds_grpo/singleton_groups"] == 2.0 and ctx.metrics["ds_grpo/nonfinite_logprob_rows"] == 0.0


def test_ds_grpo_with_zero_coefficients_is_grpo_and_sample_std_is_verls_grpo():
    rewards, mask, index, _, old_lp = _family_batch(4)
    algo = OmegaConf.create({"ds_grpo": {"correct_coef": 0.0, "incorrect_coef": 0.0, "std": "sample"}})
    ours = _dispatch(rewards, mask, index, algo, "ds_grpo", old_lp)
    theirs = _dispatch(rewards, mask, index, OmegaConf.create({}), "grpo")
    assert (ours - theirs).abs().max().item() <= 1e-6


def test_ds_grpo_a_nan_log_prob_gets_no_smoothing_and_is_counted_not_fatal():
    index = np.array(["a"] * 3, dtype=object)
    rewards = torch.tensor([[0.0, 1.0], [0.0, 0.0], [0.0, 1.0]])
    old_lp = torch.tensor([[-1.0, -1.0], [float("nan"), -0.2], [-0.5, -0.5]])
    ctx = build_context(index, frozenset({OLD_LOG_PROBS}))
    with use_context(ctx):
        adv = _dispatch(rewards, torch.ones(3, 2), index, OmegaConf.create({}), "ds_grpo", old_lp)[:, 0]
    grpo = ds_grpo_rows_reference([1.0, 0.0, 1.0], [1, 0, 1], [[0.0, 0.0]] * 3, [[1, 1]] * 3, index, [1] * 3, 0.0, 0.0)
    assert adv.tolist() == pytest.approx([grpo[0] + 0.05, grpo[1], grpo[2] + 0.025], abs=1e-5)
    assert ctx.metrics["ds_grpo/nonfinite_logprob_rows"] == 1.0


def test_ds_grpo_without_old_log_probs_refuses_with_a_message():
    rewards, mask, index, _, _ = _family_batch(0)
    with pytest.raises(ConfigError, match=r"ds_grpo smooths .* old log-probs.*the hook \(dataproto\) found none"):
        _dispatch(rewards, mask, index, OmegaConf.create({}), "ds_grpo")


def test_ds_grpo_through_the_legacy_hook_reads_old_log_probs_from_the_dataproto(legacy_hook):
    legacy_hook()
    uid = np.array(["p", "q", "p", "q", "p", "q", "r"], dtype=object)  # interleaved, unequal, a singleton
    acc = np.array([1, 1, 0, 0, 1, 0, 1], dtype=float)
    bs, L = 7, 4
    mask = torch.ones(bs, L)
    mask[0, 2:] = 0.0
    rewards = torch.zeros(bs, L)
    rewards[:, 0] = torch.as_tensor(acc, dtype=torch.float32)
    old_lp = -torch.arange(1, bs * L + 1, dtype=torch.float32).reshape(bs, L) / 20 * mask
    data = DataProto.from_dict(
        tensors={"token_level_rewards": rewards, "token_level_scores": rewards.clone(), "response_mask": mask,
                 "old_log_probs": old_lp, "responses": torch.ones(bs, L, dtype=torch.long),
                 "prompts": torch.ones(bs, 3, dtype=torch.long),
                 "attention_mask": torch.cat([torch.ones(bs, 3), mask], dim=1)},
        non_tensors={"uid": uid, "acc": acc},
    )
    algo = OmegaConf.create({"adv_estimator": "ds_grpo", "ds_grpo": {"correct_coef": 0.1}})
    out = ray_trainer.compute_advantage(data, adv_estimator="ds_grpo", config=algo)
    ref = ds_grpo_rows_reference(acc.tolist(), acc.tolist(), old_lp.tolist(), mask.tolist(), uid, [1] * bs, 0.1)
    assert out.batch["advantages"][:, 0].tolist() == pytest.approx(ref, abs=1e-5)
    metrics = ray_trainer.compute_data_metrics(batch=out, use_critic=False)
    assert metrics["ds_grpo/singleton_groups"] == 1.0


# ------------------------------------------------------------------ config
BAD = [
    ({"passk": {"k": 0}}, r"algorithm.passk.k must be >= 1, got 0"),
    ({"passk": {"k": 2.5}}, r"algorithm.passk.k must be an integer, got 2.5"),
    ({"passk": {"k": 1000}}, r"algorithm.passk.k must be <= 512, got 1000"),
    (
        {"passk": {"kk": 2}},
        r"unknown key\(s\) algorithm.passk.kk \(did you mean 'k'\?\); valid keys under algorithm.passk: \['k'\]",
    ),
    ({"unlikely": {"beta": -0.1}}, r"algorithm.unlikely.beta must be >= 0.0, got -0.1"),
    ({"unlikely": {"beta": 1.5}}, r"algorithm.unlikely.beta must be <= 1.0, got 1.5"),
    ({"unlikely": {"beta": float("nan")}}, r"algorithm.unlikely.beta must be finite"),
    ({"unlikely": {"likelihood": "max"}}, r"algorithm.unlikely.likelihood='max' is not one of \['sum', 'mean'\]"),
    ({"maxrl": {"epsilon": 0.0}}, r"algorithm.maxrl.epsilon must be > 0.0, got 0.0; set algorithm.maxrl.epsilon=1e-06"),
    ({"maxrl": {"eps": 0.1}}, r"unknown key\(s\) algorithm.maxrl.eps \(did you mean 'epsilon'\?\)"),
    ({"ds_grpo": {"correct_coef": -0.1}}, r"algorithm.ds_grpo.correct_coef must be >= 0.0, got -0.1"),
    ({"ds_grpo": {"std": "populaton"}}, r"algorithm.ds_grpo.std='populaton' is not one of .*did you mean 'population'"),
]


@pytest.mark.parametrize("algo,message", BAD, ids=[m[:40] for _, m in BAD])
def test_bad_family_config_messages(algo, message):
    with pytest.raises(ConfigError, match=message):
        validate_algorithm_config(OmegaConf.create(algo))


def _full(composed_config, *overrides):
    return composed_config(
        [
            "actor_rollout_ref.rollout.n=4",
            "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1",
            "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1",
            "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
            *overrides,
        ]
    )


def test_start_up_refuses_k_above_rollout_n(composed_config):
    from verl_focal.integration.startup.validate import validate_all

    cfg = _full(composed_config, "algorithm.adv_estimator=passk_grpo", "algorithm.passk.k=8")
    with pytest.raises(ConfigError, match=r"algorithm.passk.k=8 is larger than actor_rollout_ref.rollout.n=4"):
        validate_all(cfg)
    cfg = _full(composed_config, "algorithm.adv_estimator=f_grpo", "algorithm.passk.k=8")
    validate_all(cfg)  # another estimator: k is not checked against n


@pytest.mark.parametrize("est", ["passk_grpo", "unlikely_grpo", "maxrl", "ds_grpo"])
def test_start_up_accepts_the_family_with_good_settings(composed_config, est):
    from verl_focal.integration.startup.validate import validate_all

    sections = validate_all(_full(composed_config, f"algorithm.adv_estimator={est}", "algorithm.passk.k=4"))
    assert sections["passk"].k == 4 and sections["unlikely"].beta == 0.25
    assert sections["maxrl"].epsilon == 1e-6 and sections["ds_grpo"].correct_coef == 0.05
    assert sections["ds_grpo"].std == "population"


BYPASS = "algorithm.rollout_correction.bypass_mode=true"
NO_ROLLOUT_LP = "actor_rollout_ref.rollout.calculate_log_probs=false"  # verl's default is true


@pytest.mark.parametrize("est", ["unlikely_grpo", "ds_grpo"])
def test_start_up_refuses_bypass_mode_without_the_rollouts_log_probs(composed_config, est):
    """verl's bypass mode takes the old log-probs from the rollout: without calculate_log_probs there are none."""
    from verl_focal.integration.hooks.trainer import hooked_trainer_cls
    from verl_focal.integration.startup.validate import validate_all

    cfg = _full(composed_config, f"algorithm.adv_estimator={est}", BYPASS, NO_ROLLOUT_LP)
    with pytest.raises(ConfigError, match=rf"algorithm.adv_estimator={est} reads the rollout policy's log-probs.*"
                                          r"set actor_rollout_ref.rollout.calculate_log_probs=true"):
        validate_all(cfg)
    with pytest.raises(ConfigError, match="calculate_log_probs=true"):  # stock main_ppo, trainer_mode=focal_sync
        hooked_trainer_cls("sync")(cfg)
    validate_all(_full(composed_config, f"algorithm.adv_estimator={est}", BYPASS))  # the rollout's log-probs
    validate_all(_full(composed_config, f"algorithm.adv_estimator={est}", NO_ROLLOUT_LP))  # the actor's pass


def test_hooked_trainer_refuses_k_above_n_before_verls_init(composed_config):
    """Stock main_ppo with trainer_mode=focal_sync: the hooked trainer's __init__ checks first.

    verl's PPOTrainer.__init__ (workers, GPUs) is never reached: the check raises before it.
    """
    from verl_focal.integration.hooks.trainer import hooked_trainer_cls

    cfg = _full(composed_config, "algorithm.adv_estimator=passk_grpo", "algorithm.passk.k=5")
    with pytest.raises(ConfigError, match=r"algorithm.passk.k=5 is larger than actor_rollout_ref.rollout.n=4"):
        hooked_trainer_cls("sync")(cfg)


def test_a_fresh_process_import_verl_registers_both_through_the_entry_point():
    import subprocess
    import sys

    code = (
        "import verl\n"
        "from verl.trainer.ppo.core_algos import get_adv_estimator_fn as g\n"
        "print(g('passk_grpo').__module__, g('unlikely_grpo').__module__)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "verl_focal.estimators.passk verl_focal.estimators.unlikely" in proc.stdout


def test_unlikely_a_nan_log_prob_is_ranked_least_likely_and_counted_not_fatal():
    index = np.array(["a"] * 4, dtype=object)
    rewards = torch.zeros(4, 2)
    rewards[:3, -1] = 1.0  # three correct, one wrong
    mask = torch.ones(4, 2)
    old_lp = torch.tensor([[-0.1, -0.1], [float("nan"), -0.2], [-1.0, -1.0], [-0.3, -0.3]])
    ctx = build_context(index, frozenset({OLD_LOG_PROBS}))
    with use_context(ctx):
        adv = _dispatch(rewards, mask, index, OmegaConf.create({"unlikely": {"beta": 0.5}}), "unlikely_grpo", old_lp)
    # row 1 (NaN) ranks last (4): no penalty; rows 0, 3, 2 rank 1, 2, 3
    loglik = [-0.2, -1e300, -2.0, -0.6]
    ref = unlikely_rows_reference([1.0, 1.0, 1.0, 0.0], [1, 1, 1, 0], loglik, index, [1] * 4, 0.5)
    assert adv[:, 0].tolist() == pytest.approx(ref, abs=1e-5)
    assert ctx.metrics["unlikely/nonfinite_logprob_rows"] == 1.0


def test_each_estimator_names_the_config_sections_it_reads():
    """``sections`` of each registration (what ``verl-focal check`` reports) are real schema sections."""
    from verl_focal.config.schema import SECTIONS
    from verl_focal.integration.registration import get_spec, register_all

    register_all()
    want = {"f_grpo": {"focal"}, "cue_grpo": {"cue"}, "f_cue_grpo": {"focal", "cue"}, "passk_grpo": {"passk"},
            "unlikely_grpo": {"unlikely"}, "maxrl": {"maxrl"}, "ds_grpo": {"ds_grpo"}}
    for name, sections in want.items():
        assert get_spec(name).sections == sections == get_spec(f"verl_focal.{name}").sections
        assert sections <= set(SECTIONS)
