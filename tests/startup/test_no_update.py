"""Settings with which a run trains nothing are refused (issue 45 item 3); the settings next to them pass."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from verl_focal.config.errors import ConfigError
from verl_focal.integration.startup.no_update import check_update

GOOD = {"actor_rollout_ref": {"actor": {"optim": {"lr": 1e-6}, "ppo_epochs": 1},
                              "rollout": {"n": 8, "temperature": 1.0, "top_k": -1}},
        "trainer": {"total_epochs": 10, "total_training_steps": None}}


def _cfg(key=None, value=None):
    cfg = OmegaConf.create(GOOD)
    if key:
        OmegaConf.update(cfg, key, value)
    return cfg


@pytest.mark.parametrize(("key", "value", "needle"), [
    ("actor_rollout_ref.actor.optim.lr", 0.0, "optim.lr=0: every update is zero"),
    ("actor_rollout_ref.actor.ppo_epochs", 0, "ppo_epochs=0: no update pass"),
    ("trainer.total_epochs", 0, "trainer.total_epochs=0: verl's loop runs no training step"),
    ("trainer.total_training_steps", 0, "trainer.total_training_steps=0"),
    ("actor_rollout_ref.rollout.temperature", 0.0, "temperature=0 decodes greedily: a prompt's 8 responses"),
    ("actor_rollout_ref.rollout.temperature", -1.0, "temperature=-1 decodes greedily"),
    ("actor_rollout_ref.rollout.top_k", 1, "top_k=1 decodes greedily"),
])
def test_nothing_trains_is_refused_with_its_number(key, value, needle):
    with pytest.raises(ConfigError, match=needle.replace(".", r"\.").replace("(", r"\(")):
        check_update(_cfg(key, value), group_relative=True)


@pytest.mark.parametrize(("key", "value"), [
    (None, None), ("actor_rollout_ref.actor.optim.lr", 1e-9), ("trainer.total_training_steps", 1),
    ("actor_rollout_ref.rollout.temperature", 0.01), ("actor_rollout_ref.rollout.top_k", 2),
])
def test_the_settings_next_to_them_pass(key, value):
    check_update(_cfg(key, value), group_relative=True)


def test_greedy_decoding_trains_a_critic_based_estimator():
    """GAE's advantages come from a critic, not from comparing a prompt's responses: greedy rollouts still train."""
    check_update(_cfg("actor_rollout_ref.rollout.temperature", 0.0), group_relative=False)
    with pytest.raises(ConfigError):
        check_update(_cfg("actor_rollout_ref.actor.optim.lr", 0), group_relative=False)
