"""``python -m verl_focal.main_ppo``: verl's PPO trainer with the verl-focal hook.

``-h`` prints our usage (:data:`USAGE`: ``--dry-run``, ``--trainer``, ``verl-focal check``) before Hydra's help.

Composes the packaged ``verl_focal/config/focal_trainer.yaml`` (verl's
``ppo_trainer`` plus ``algorithm.focal.*`` / ``algorithm.cue.*``, so no ``+``
is needed), validates our sections and verl's config *before* Ray starts, then
calls verl's own ``run_ppo`` with our TaskRunner (v1 or legacy, by
``trainer.use_v1``).

``--dry-run`` runs the same checks, refuses local data files and model folders that do
not exist (hub names such as ``Qwen/Qwen2.5-7B`` are not checked: it runs offline), prints
the fully resolved config as YAML and exits 0 without starting anything::

    python -m verl_focal.main_ppo --dry-run actor_rollout_ref.rollout.name=vllm algorithm.focal.gamma=1.0 ...

``--trainer one_step_off`` / ``--trainer fully_async`` run verl's separated trainers
(``verl.experimental.one_step_off_policy`` / ``fully_async_policy``) instead: verl's own config of
that trainer plus our sections, validated the same way before Ray starts
(:func:`verl_focal.integration.hooks.runner.run_separated`).
"""

from __future__ import annotations

import sys

import hydra
from omegaconf import DictConfig, OmegaConf

from verl_focal.integration.startup.compose import CONFIG_NAME, compose_config

__all__ = ["main", "run"]


def admit_launch(config: DictConfig, overrides: list[str], trainer: str = "ppo") -> dict:
    """The launch's start-up rules (:func:`~verl_focal.integration.startup.admit.admit`, stage ``launch``) on the
    config this process will run, after verl's device detection: the warnings shown under :data:`PROG`, the first
    refusal raised.  Returns our validated sections."""
    from verl.utils.device import auto_set_device

    from verl_focal.integration.startup.admit import admit

    auto_set_device(config)
    report = admit("launch", config, overrides=overrides, trainer=trainer).raise_first()
    report.render(PROG)
    return report.sections


def run(config: DictConfig, admitted: bool = False) -> None:
    """verl's ``run_ppo`` with our TaskRunner (v1 or legacy, by ``trainer.use_v1``), after the launch's rules
    (unless ``admitted``: they ran on this config already)."""
    from verl.trainer.main_ppo import run_ppo
    from verl.utils.device import auto_set_device

    from verl_focal.integration.hooks.runner import FocalLegacyTaskRunner, FocalTaskRunnerV1, forward_plugin

    auto_set_device(config)
    if not admitted:
        admit_launch(config, [])
    forward_plugin(config)  # every Ray process of the run imports the plugin (VERL_USE_EXTERNAL_MODULES)
    run_ppo(config, task_runner_class=FocalTaskRunnerV1 if config.trainer.use_v1 else FocalLegacyTaskRunner)


@hydra.main(config_path="config", config_name=CONFIG_NAME, version_base=None)
def _hydra_main(config: DictConfig) -> None:
    from verl_focal.config.errors import UserError, report_user_error

    try:
        if not _CHECKED_BEFORE_HYDRA:  # Hydra's own flags: the launch's rules, on Hydra's composition
            _admit_under_hydra(config)
        run(config, admitted=True)
    except UserError as e:  # Hydra would print a traceback; a user error gets its one line
        raise SystemExit(report_user_error(PROG, e, debug=_DEBUG)) from None


PROG = "python -m verl_focal.main_ppo"
_DEBUG = False
#: the launch's rules ran on our own composition before Hydra's main (no Hydra flag was given)
_CHECKED_BEFORE_HYDRA = False


def _admit_under_hydra(config: DictConfig) -> None:
    """A launch with Hydra's own flags (``--config-name``, ``-m``, ``hydra.run.dir=...``) is composed by Hydra, not
    before it: the launch's rules run here instead, before Ray, on Hydra's config and the overrides Hydra applied
    (the unread-key rule needs our config's schema, so it reads them only when the config is ours)."""
    from hydra.core.hydra_config import HydraConfig

    hydra_cfg = HydraConfig.get()
    ours = hydra_cfg.job.config_name == CONFIG_NAME
    admit_launch(config, list(hydra_cfg.overrides.task) if ours else [])

#: printed by ``-h`` / ``--help`` before Hydra's own help (which lists the whole composed config)
USAGE = f"""usage: {PROG} [--dry-run] [--trainer {{ppo,one_step_off,fully_async}}] [--debug] [KEY=VALUE ...]

verl's PPO trainer with the verl-focal hook: composes verl's ppo_trainer.yaml with our algorithm.focal / .cue /
.passk / .unlikely sections (our keys need no +), validates everything before Ray starts, then runs verl's run_ppo.

options:
  --dry-run        run every start-up check and the local data / model checks, print the resolved config as
                   YAML and exit; nothing is started
  --trainer NAME   ppo (default), or verl's separated trainers one_step_off / fully_async
  --debug          show the traceback of a refused input (or set VERL_FOCAL_DEBUG=1)
  -h, --help       this text, then Hydra's help (the composed config, with any overrides given; ppo only)
  KEY=VALUE        any Hydra override of verl's config or ours, e.g. algorithm.adv_estimator=f_grpo

check a config first:  verl-focal check KEY=VALUE ...   (also loads the estimators in a fresh process)
example:               {PROG} --dry-run algorithm.adv_estimator=f_grpo algorithm.focal.gamma=0.5 \\
                           actor_rollout_ref.rollout.name=vllm trainer.logger=[console] \\
                           actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \\
                           actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8 \\
                           actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8
                       (add data.train_files=..., data.val_files=... and actor_rollout_ref.model.path=...)
docs:                  docs/usage.md (entry points), docs/config.md (every key we add)"""


def dry_run(overrides: list[str], trainer: str = "ppo") -> int:
    """The dry run's start-up rules (every launch rule, local files and folders, the run's size; nothing is written
    or started), then the resolved config on stdout.  A refusal prints only the error; warnings and the size lines go
    to stderr under :data:`PROG` when the dry run passes."""
    from verl_focal.integration.startup.admit import admit

    config = compose_config(overrides, trainer=trainer)
    if trainer != "ppo":
        from verl_focal.integration.hooks.runner import copy_rollout_resources

        copy_rollout_resources(config)
    admit("dry_run", config, overrides=overrides, trainer=trainer).raise_first().render(PROG)
    print(OmegaConf.to_yaml(config, resolve=True), end="")
    return 0


def _pop_trainer(args: list[str]) -> tuple[str, list[str]]:
    """``--trainer NAME`` / ``--trainer=NAME`` out of ``args`` (default ``ppo``)."""
    from verl_focal.integration.startup.compose import check_trainer_name

    trainer, rest, it = "ppo", [], iter(args)
    for a in it:
        if a == "--trainer":
            trainer = next(it, "")
        elif a.startswith("--trainer="):
            trainer = a.split("=", 1)[1]
        else:
            rest.append(a)
    check_trainer_name(trainer)
    return trainer, rest


def _hydra_args(args: list[str]) -> bool:
    return any(a.startswith("-") or a.split("=", 1)[0].lstrip("+~").startswith("hydra") for a in args)


def main(argv: list[str] | None = None) -> None:
    """``python -m verl_focal.main_ppo [--trainer NAME] [--dry-run] [--debug] overrides...``; user errors exit 2
    in one line."""
    global _DEBUG, _CHECKED_BEFORE_HYDRA
    from verl_focal.config.errors import UserError, debug_enabled, report_user_error
    from verl_focal.integration.startup.quiet import quiet_optional_engines

    args = list(sys.argv[1:] if argv is None else argv)
    _DEBUG = debug_enabled(args)
    args = [a for a in args if a != "--debug"]
    quiet_optional_engines()
    try:
        trainer, args = _pop_trainer(args)
        if "-h" in args or "--help" in args:  # ours first: Hydra's own help is the whole config
            print(USAGE, flush=True)
            if trainer != "ppo":  # Hydra's help would show the ppo config, not this trainer's
                return
            print("\nHydra's help follows.\n", flush=True)
            args = [a for a in args if a != "--dry-run"]
        if "--dry-run" in args:
            raise SystemExit(dry_run([a for a in args if a != "--dry-run"], trainer))
        if trainer != "ppo":
            from verl_focal.integration.hooks.runner import copy_rollout_resources, run_separated

            config = compose_config(args, trainer=trainer)
            copy_rollout_resources(config)
            admit_launch(config, args, trainer)
            run_separated(config, trainer)
            return
        if not _hydra_args(args):
            admit_launch(compose_config(args), args)  # override typos refused in one line, before Hydra
            _CHECKED_BEFORE_HYDRA = True
    except UserError as e:
        raise SystemExit(report_user_error(PROG, e, debug=_DEBUG)) from None
    sys.argv = [sys.argv[0], *args]
    _hydra_main()


if __name__ == "__main__":
    main()
