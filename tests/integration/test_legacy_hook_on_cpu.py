"""The legacy trainer (trainer.use_v1=false) path: verl's module-level ``compute_advantage``
(wrapped by the plugin) and ``compute_data_metrics`` (wrapped by our legacy TaskRunner), fed a
DataProto shaped as the legacy fit loop builds it (reward extras in ``non_tensor_batch``)."""

import numpy as np
import pytest
import torch
import verl  # noqa: F401
from omegaconf import OmegaConf
from verl import DataProto
from verl.trainer.ppo import ray_trainer

from _reference import reference_advantages


@pytest.fixture
def legacy(legacy_hook):
    legacy_hook()
    legacy_hook()  # idempotent: compute_data_metrics is wrapped once
    return ray_trainer


def _legacy_batch():
    uid = np.array(["p"] * 4 + ["q"] * 4, dtype=object)
    acc = np.array([1, 1, 0, 0, 1, 0, 0, 0], dtype=float)
    score = np.array([0.1, 1.0, -1.0, -1.0, 1.0, -1.0, -1.0, -1.0])  # row 0: correct but overlong-penalised
    bs, L = 8, 4
    mask = torch.ones(bs, L)
    rewards = torch.zeros(bs, L)
    rewards[:, -1] = torch.as_tensor(score, dtype=torch.float32)
    prompts = torch.ones(bs, 3, dtype=torch.long)
    responses = torch.ones(bs, L, dtype=torch.long)
    data = DataProto.from_dict(
        tensors={
            "token_level_rewards": rewards,
            "token_level_scores": rewards.clone(),
            "response_mask": mask,
            "responses": responses,
            "prompts": prompts,
            "attention_mask": torch.ones(bs, 3 + L),
        },
        non_tensors={"uid": uid, "acc": acc, "score": score},
    )
    return data, uid, acc, score


def test_legacy_compute_advantage_uses_acc_and_logs_diagnostics(legacy):
    data, uid, acc, score = _legacy_batch()
    algo = OmegaConf.create({"adv_estimator": "f_grpo", "focal": {"gamma": 0.5}})
    out = legacy.compute_advantage(data, adv_estimator="f_grpo", config=algo)
    ref = reference_advantages(score.tolist(), uid, [True] * 8, gamma=0.5, correct=acc.tolist())
    assert out.batch["advantages"][:, 0].tolist() == pytest.approx(ref, abs=1e-6)
    metrics = legacy.compute_data_metrics(batch=out, use_critic=False)
    assert metrics["focal/acc_from_extra_frac"] == 1.0
    assert metrics["focal/weight_mean_active"] == pytest.approx((0.5**0.5 + 0.75**0.5) / 2)
    assert "critic/score/mean" in metrics  # verl's own metrics are still there
    assert "verl_focal_metrics" not in out.meta_info  # consumed


def test_legacy_hook_passes_builtin_estimators_through(legacy):
    data, uid, _, score = _legacy_batch()
    out = legacy.compute_advantage(data, adv_estimator="grpo", config=OmegaConf.create({}))
    ref = reference_advantages(score.tolist(), uid, [True] * 8, gamma=0.0)
    assert out.batch["advantages"][:, 0].tolist() == pytest.approx(ref, abs=1e-5)
    assert "verl_focal_metrics" not in out.meta_info
