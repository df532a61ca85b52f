"""Settings with which the run trains nothing: refused at start-up with the number that shows it.

Each of these leaves the policy where it started, after the models have loaded and (for the loop settings) after a
validation pass:

* ``actor_rollout_ref.actor.optim.lr=0``: every step is zero;
* ``actor_rollout_ref.actor.ppo_epochs=0``: no update pass over the batch;
* ``trainer.total_epochs=0`` or ``trainer.total_training_steps=0``: verl's loop runs no step (the job loads, validates
  and ends);
* ``actor_rollout_ref.rollout.temperature <= 0`` or ``top_k=1`` with a group-relative estimator (GRPO and ours): greedy
  decoding gives a prompt's responses identical, so each group's rewards are equal and every advantage is 0.

No verl import.
"""

from __future__ import annotations

from typing import Any

from verl_focal.config.errors import ConfigError
from verl_focal.config.key_names import config_get

__all__ = ["check_update"]


def _num(config: Any, key: str) -> float | None:
    v = config_get(config, key, None)
    try:
        return None if v is None or isinstance(v, bool) else float(v)
    except (TypeError, ValueError):
        return None


def check_update(config: Any, group_relative: bool) -> None:
    """Raise :class:`ConfigError` naming the first setting with which nothing trains (module docstring).
    ``group_relative``: whether the estimator compares a prompt's responses with each other."""
    lr = _num(config, "actor_rollout_ref.actor.optim.lr")
    if lr is not None and lr == 0:
        raise ConfigError("actor_rollout_ref.actor.optim.lr=0: every update is zero, so the run trains nothing; set "
                          "a learning rate > 0 (verl's default 1e-6)")
    epochs = _num(config, "actor_rollout_ref.actor.ppo_epochs")
    if epochs is not None and epochs <= 0:
        raise ConfigError(f"actor_rollout_ref.actor.ppo_epochs={epochs:g}: no update pass over a batch, so the run "
                          "trains nothing; set it to 1 or more (verl's default 1)")
    for key in ("trainer.total_training_steps", "trainer.total_epochs"):
        n = _num(config, key)
        if n is not None and n <= 0:
            raise ConfigError(f"{key}={n:g}: verl's loop runs no training step (the job would load the models, "
                              "validate and end); set it to 1 or more")
    if not group_relative:
        return
    n = int(_num(config, "actor_rollout_ref.rollout.n") or 1)
    temp = _num(config, "actor_rollout_ref.rollout.temperature")
    top_k = _num(config, "actor_rollout_ref.rollout.top_k")
    if temp is not None and temp <= 0:
        why = f"actor_rollout_ref.rollout.temperature={temp:g} decodes greedily"
    elif top_k == 1:
        why = "actor_rollout_ref.rollout.top_k=1 decodes greedily"
    else:
        return
    raise ConfigError(f"{why}: a prompt's {n} responses are then identical, their rewards equal, and every "
                      "group-relative advantage 0, so the run trains nothing; sample (temperature > 0, verl's default "
                      "1.0; top_k=-1 or > 1), and decode greedily in validation only "
                      "(actor_rollout_ref.rollout.val_kwargs.temperature=0)")
