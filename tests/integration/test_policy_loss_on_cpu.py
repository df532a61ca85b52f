"""F-GRPO / F-DAPO / F-CISPO advantages through verl's real policy losses and agg_loss.

A tiny torch policy (a table of per-row, per-token logits) stands in for the
LLM; everything from the advantage to the gradient is verl's own code.
"""

import numpy as np
import pytest
import torch
import verl  # noqa: F401
from omegaconf import OmegaConf, open_dict
from verl.trainer.ppo.core_algos import agg_loss, get_adv_estimator_fn, get_policy_loss_fn
from verl.utils.config import omega_conf_to_dataclass

from verl_focal.estimators.context import AdvantageContext

V = 11


def _actor_config(composed_config, loss_mode, clip_low, clip_high, agg):
    cfg = composed_config(
        [
            f"actor_rollout_ref.actor.policy_loss.loss_mode={loss_mode}",
            f"actor_rollout_ref.actor.clip_ratio_low={clip_low}",
            f"actor_rollout_ref.actor.clip_ratio_high={clip_high}",
            f"actor_rollout_ref.actor.loss_agg_mode={agg}",
            "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2",
        ]
    )
    actor = cfg.actor_rollout_ref.actor
    with open_dict(actor):
        actor.ppo_mini_batch_size = 8  # normally derived from data.train_batch_size by the worker
    return omega_conf_to_dataclass(actor)


def _batch():
    index = np.array(["a"] * 4 + ["b"] * 4, dtype=object)
    acc = np.array([1, 0, 0, 0, 1, 1, 1, 0], dtype=float)
    mask = torch.ones(8, 5)
    mask[1, 3:] = 0
    mask[6, 2:] = 0
    rewards = torch.zeros(8, 5)
    lengths = mask.sum(-1).long()
    rewards[torch.arange(8), lengths - 1] = torch.as_tensor(acc, dtype=torch.float32)
    return index, acc, mask, rewards


def _advantages(gamma, index, acc, mask, rewards):
    algo = OmegaConf.create({"focal": {"gamma": gamma}})
    adv, _ = get_adv_estimator_fn("f_grpo")(rewards, mask, config=algo, index=index,
                                            ctx=AdvantageContext(uids=index, acc=acc))
    return adv


def _loss_and_grad(actor_cfg, adv, mask, seed=0):
    torch.manual_seed(seed)
    logits = torch.randn(8, 5, V, requires_grad=True)
    tokens = torch.randint(0, V, (8, 5))
    log_prob = torch.log_softmax(logits, -1).gather(-1, tokens[..., None]).squeeze(-1)
    old = log_prob.detach()
    fn = get_policy_loss_fn(actor_cfg.policy_loss.loss_mode)
    loss, _ = fn(old_log_prob=old, log_prob=log_prob, advantages=adv, response_mask=mask,
                 loss_agg_mode=actor_cfg.loss_agg_mode, config=actor_cfg)
    loss.backward()
    return loss, logits, tokens


@pytest.mark.parametrize(
    "name,loss_mode,low,high,agg",
    [
        ("F-GRPO", "vanilla", 0.2, 0.2, "token-mean"),
        ("F-DAPO", "vanilla", 0.2, 0.28, "token-mean"),
        ("F-CISPO", "cispo", 1.0, 5.0, "token-mean"),
    ],
)
def test_gradients_finite_and_correctly_signed(composed_config, name, loss_mode, low, high, agg):
    actor_cfg = _actor_config(composed_config, loss_mode, low, high, agg)
    index, acc, mask, rewards = _batch()
    adv = _advantages(0.5, index, acc, mask, rewards)
    loss, logits, tokens = _loss_and_grad(actor_cfg, adv, mask)
    assert torch.isfinite(loss) and torch.isfinite(logits.grad).all()
    # one small gradient-descent step on the loss ...
    with torch.no_grad():
        new_logits = logits - 1.0 * logits.grad
        before = torch.log_softmax(logits, -1).gather(-1, tokens[..., None]).squeeze(-1)
        after = torch.log_softmax(new_logits, -1).gather(-1, tokens[..., None]).squeeze(-1)
    delta = ((after - before) * mask).sum(-1)
    row_adv = adv[:, 0]
    # ... raises the log-probability of rollouts with positive advantage, lowers negative ones
    assert (delta[row_adv > 0] > 0).all(), name
    assert (delta[row_adv < 0] < 0).all(), name
    assert (delta[row_adv == 0].abs() < 1e-7).all(), name


@pytest.mark.parametrize("loss_mode,low,high", [("vanilla", 0.2, 0.28), ("cispo", 1.0, 5.0)])
def test_focal_weight_scales_each_groups_gradient(composed_config, loss_mode, low, high):
    """At ratio 1 both losses are linear in A, so the gradient of group g is scaled by (1-p̂_g)^γ."""
    actor_cfg = _actor_config(composed_config, loss_mode, low, high, "token-mean")
    index, acc, mask, rewards = _batch()
    _, l0, _ = _loss_and_grad(actor_cfg, _advantages(0.0, index, acc, mask, rewards), mask)
    _, l1, _ = _loss_and_grad(actor_cfg, _advantages(1.0, index, acc, mask, rewards), mask)
    # p̂_a = 1/4 -> weight 3/4 ; p̂_b = 3/4 -> weight 1/4
    assert torch.allclose(l1.grad[:4], 0.75 * l0.grad[:4], atol=1e-7)
    assert torch.allclose(l1.grad[4:], 0.25 * l0.grad[4:], atol=1e-7)


def test_agg_loss_token_mean_matches_masked_mean():
    loss_mat = torch.arange(10.0).reshape(2, 5)
    mask = torch.tensor([[1, 1, 0, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.float32)
    out = agg_loss(loss_mat, mask, "token-mean", batch_num_tokens=7, dp_size=1)
    assert out.item() == pytest.approx((0 + 1 + 5 + 6 + 7 + 8 + 9) / 7)
