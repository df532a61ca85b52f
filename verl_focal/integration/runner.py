"""Our TaskRunners: verl's own, plus the hook.

``FocalTaskRunnerV1`` maps ``trainer.v1.trainer_mode`` (sync / colocate_async /
separate_async) to our hooked mode and otherwise runs verl's
``TaskRunnerV1.run`` unchanged; ``FocalLegacyTaskRunner`` installs the legacy
hook and runs verl's legacy ``TaskRunner.run``.  Both run the start-up
checks again inside the Ray actor, before any worker or model starts.
"""

from __future__ import annotations

import ray
from omegaconf import DictConfig, open_dict
from verl.trainer.main_ppo import TaskRunnerV1
from verl.trainer.main_ppo_v0 import TaskRunner as LegacyTaskRunner

from verl_focal.integration.modes import hooked_mode
from verl_focal.integration.preflight import validate_start

__all__ = ["FocalTaskRunnerV1", "FocalLegacyTaskRunner", "select_hooked_mode"]


def select_hooked_mode(config: DictConfig) -> str:
    """Set ``trainer.v1.trainer_mode`` to our hooked variant (:func:`hooked_mode`); return the new mode."""
    mode = hooked_mode(config.trainer.v1.trainer_mode)
    if mode != config.trainer.v1.trainer_mode:
        with open_dict(config):
            config.trainer.v1.trainer_mode = mode
    return mode


class _FocalTaskRunnerV1(TaskRunnerV1.__ray_actor_class__):
    def run(self, config: DictConfig):
        validate_start(config)
        select_hooked_mode(config)
        return super().run(config)


class _FocalLegacyTaskRunner(LegacyTaskRunner.__ray_actor_class__):
    def run(self, config: DictConfig):
        from verl_focal.integration.trainer import install_legacy_hook

        validate_start(config)
        model_cfg = config.actor_rollout_ref.model

        def tokenizer_factory():
            from verl.utils.config import omega_conf_to_dataclass

            return omega_conf_to_dataclass(model_cfg).tokenizer

        install_legacy_hook(tokenizer_factory)
        return super().run(config)


FocalTaskRunnerV1 = ray.remote(_FocalTaskRunnerV1)
FocalLegacyTaskRunner = ray.remote(_FocalLegacyTaskRunner)
