"""Our TaskRunners: verl's own, plus the hook.

``FocalTaskRunnerV1`` maps ``trainer.v1.trainer_mode`` (sync / colocate_async /
separate_async) to our hooked mode and otherwise runs verl's
``TaskRunnerV1.run`` unchanged; ``FocalLegacyTaskRunner`` installs the legacy
hook and runs verl's legacy ``TaskRunner.run``.  Both arrange the plugin's
hooks themselves (:func:`~verl_focal.integration.hooks.arrange.arrange`: a TaskRunner whose process skipped verl's
entry point, ``VERL_USE_EXTERNAL_PLUGINS=none`` say, is hooked all the same), run the start-up checks again
inside the Ray actor, and check that the hooks the run needs are in effect there
(:func:`~verl_focal.integration.hooks.arrange.require_live`), before any worker or model starts.

:func:`run_separated` runs verl's one-step-off or fully-async trainer with verl's own TaskRunner
after the same start-up checks; the hook reaches those trainers through the plugin
(:func:`verl_focal.integration.hooks.dataproto_hook.hook_separated_trainers`), in whichever process the
trainer lives: :func:`forward_plugin` makes every process of the job import it
(``VERL_USE_EXTERNAL_MODULES``), and a node where it cannot be imported fails at its start.
"""

from __future__ import annotations

import ray
from omegaconf import DictConfig, OmegaConf, open_dict
from verl.trainer.main_ppo import TaskRunnerV1
from verl.trainer.main_ppo_v0 import TaskRunner as LegacyTaskRunner

from verl_focal.integration.compat import available, install
from verl_focal.integration.hooks.arrange import PLUGIN_MODULE, arrange
from verl_focal.integration.hooks.modes import hooked_mode

arrange()  # before verl's trainer modules are imported in this process (unpickling this module comes first)

__all__ = ["FocalTaskRunnerV1", "FocalLegacyTaskRunner", "select_hooked_mode", "run_separated", "forward_plugin",
           "check_here", "copy_rollout_resources"]


def forward_plugin(config: DictConfig) -> str:
    """Add ``verl_focal.plugin`` to ``VERL_USE_EXTERNAL_MODULES`` in the job's
    ``ray_kwargs.ray_init.runtime_env.env_vars`` (after the user's value there, or else this process's), so that
    every Ray process of the run imports the plugin whatever ``VERL_USE_EXTERNAL_PLUGINS`` says, and a node
    without verl-focal fails when its worker starts (verl raises on a module it cannot import), not at step 1.
    Returns the value set."""
    import os

    from verl_focal.config.key_names import config_get

    current = config_get(config, "ray_kwargs.ray_init.runtime_env.env_vars.VERL_USE_EXTERNAL_MODULES", None)
    if current is None:
        current = os.environ.get("VERL_USE_EXTERNAL_MODULES", "")
    mods = [m.strip() for m in str(current).split(",") if m.strip()]
    value = ",".join(mods if PLUGIN_MODULE in mods else [*mods, PLUGIN_MODULE])
    with open_dict(config):  # verl's runtime_env is a struct node: no new key without open_dict
        OmegaConf.update(config, "ray_kwargs.ray_init.runtime_env.env_vars.VERL_USE_EXTERNAL_MODULES", value,
                         force_add=True)
    return value


def check_here(config: DictConfig) -> None:
    """In the process that runs the steps, before any worker starts: the ``actor`` stage's start-up rules
    (:func:`~verl_focal.integration.startup.admit.admit`; among them our hooks in effect here and the judge's
    network probe from here); the first refusal raised, the warnings logged by Ray's driver as Python warnings."""
    from verl_focal.integration.startup.admit import admit

    admit("actor", config).raise_first().warn()


def select_hooked_mode(config: DictConfig) -> str:
    """Set ``trainer.v1.trainer_mode`` to our hooked variant (:func:`hooked_mode`); return the new mode."""
    mode = hooked_mode(config.trainer.v1.trainer_mode)
    if mode != config.trainer.v1.trainer_mode:
        with open_dict(config):
            config.trainer.v1.trainer_mode = mode
    return mode


class _FocalTaskRunnerV1(TaskRunnerV1.__ray_actor_class__):
    def run(self, config: DictConfig):
        check_here(config)
        if available("v1"):  # else verl's own modes (the plugin warned)
            select_hooked_mode(config)
        return super().run(config)


class _FocalLegacyTaskRunner(LegacyTaskRunner.__ray_actor_class__):
    def run(self, config: DictConfig):
        from verl_focal.integration.hooks.dataproto_hook import install_legacy_hook

        model_cfg = config.actor_rollout_ref.model

        def tokenizer_factory():
            from verl.utils.config import omega_conf_to_dataclass

            return omega_conf_to_dataclass(model_cfg).tokenizer

        install("legacy", lambda: install_legacy_hook(tokenizer_factory))
        check_here(config)  # trainer.use_v1=false: our estimators need the legacy hook (hooks_live)
        return super().run(config)


FocalTaskRunnerV1 = ray.remote(_FocalTaskRunnerV1)
FocalLegacyTaskRunner = ray.remote(_FocalLegacyTaskRunner)


def copy_rollout_resources(config: DictConfig) -> None:
    """A separated trainer's rollout resources (``rollout.nnodes``, ``rollout.n_gpus_per_node``) copied into
    ``actor_rollout_ref.rollout``, as verl's own entry point of that trainer does (before the start-up rules read
    them)."""
    with open_dict(config):
        config.actor_rollout_ref.rollout.nnodes = config.rollout.nnodes
        config.actor_rollout_ref.rollout.n_gpus_per_node = config.rollout.n_gpus_per_node


def run_separated(config: DictConfig, trainer: str) -> None:
    """Run verl's ``one_step_off`` or ``fully_async`` trainer as verl's own entry point of that trainer does, on a
    config admitted by the launch's rules (``main_ppo``; :func:`copy_rollout_resources` applied)."""
    from verl.trainer.main_ppo import run_ppo

    forward_plugin(config)
    if trainer == "one_step_off":
        from verl.experimental.one_step_off_policy.main_ppo import OneStepTaskRunner

        run_ppo(config, task_runner_class=OneStepTaskRunner)
    elif trainer == "fully_async":
        from verl.experimental.fully_async_policy.fully_async_main import FullyAsyncTaskRunner
        from verl.experimental.reward_loop import migrate_legacy_reward_impl

        run_ppo(migrate_legacy_reward_impl(config), task_runner_class=FullyAsyncTaskRunner)
    else:
        raise ValueError(f"run_separated: no separated trainer {trainer!r}")
