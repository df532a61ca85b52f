"""Each estimator of ours on singleton groups (one valid rollout), against the rule docs/methods.md states in its
table "Singleton groups": verl's own ``compute_advantage`` (with our hook) on a batch of a lone correct rollout, a
lone wrong one, and a two-rollout group that shows the estimator is otherwise active.  0/1 rewards and ``acc``."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import verl  # noqa: F401
from verl import DataProto

import verl_focal.plugin  # noqa: F401
from verl_focal.partition.cues import signature

EPS = 1e-6  # verl's epsilon, which every group-relative estimator of ours shares
#: estimator -> (lone correct, lone wrong), the rule of the methods table
RULE = {
    "f_grpo": (0.0, 0.0),  # p̂ = 1: focal weight (1 - p̂)^γ = 0
    "f_cue_grpo": (0.0, 0.0),
    "cue_grpo": (1 / (1 + EPS), 0.0),  # verl's GRPO convention: mean 0, std 1
    "unlikely_grpo": (1 / (1 + EPS), 0.0),
    "passk_grpo": (0.0, 0.0),
    "maxrl": (0.0, 0.0),  # the authors' code: 1/ε
    "ds_grpo": (1 / (1 + EPS) + 0.05, -0.05),  # GRPO's convention plus the smoothing term ±c (0.05 each)
}


@pytest.mark.parametrize("estimator", sorted(RULE))
def test_a_singleton_group_gets_the_stated_advantage(composed_config, estimator):
    from verl.trainer.ppo import ray_trainer

    rows = [("lone_right", 1.0), ("lone_wrong", 0.0), ("pair", 1.0), ("pair", 0.0)]
    overrides = [f"algorithm.adv_estimator={estimator}"]
    overrides += ["algorithm.passk.k=2"] if estimator == "passk_grpo" else []
    overrides += ["algorithm.cue.source=signature"] if "cue" in estimator else []
    n = len(rows)
    rewards = torch.zeros(n, 2)
    rewards[:, -1] = torch.tensor([r for _, r in rows])
    data = DataProto.from_dict(
        tensors={"token_level_rewards": rewards, "response_mask": torch.ones(n, 2),
                 "old_log_probs": -torch.ones(n, 2), "responses": torch.ones(n, 2, dtype=torch.long)},
        non_tensors={"uid": np.array([u for u, _ in rows], dtype=object), "acc": np.array([r for _, r in rows]),
                     "cue_sig": np.array([signature("Let x = 2.")] * n, dtype=object)})
    out = ray_trainer.compute_advantage(data, adv_estimator=estimator,
                                        config=composed_config(overrides).algorithm).batch["advantages"][:, -1]
    assert out[:2].tolist() == pytest.approx(list(RULE[estimator]), abs=1e-6)
    if estimator != "passk_grpo":  # pass@2 of a group of 2 with one correct rollout is 1 for every subset: 0
        assert out[2] > 0.1 and out[3] < -0.1  # the pair is not a singleton: the estimator is active there
