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
from verl_focal.integration.startup.mandatory import check_mandatory
from verl_focal.integration.startup.validate import validate_all

__all__ = ["main", "run"]

def run(config: DictConfig) -> None:
    from verl.trainer.main_ppo import run_ppo
    from verl.utils.device import auto_set_device

    from verl_focal.integration.hooks.runner import FocalLegacyTaskRunner, FocalTaskRunnerV1, forward_plugin
    from verl_focal.integration.startup.versions import warn_on_version_mismatch

    auto_set_device(config)
    validate_all(config)
    warn_on_version_mismatch()
    forward_plugin(config)  # every Ray process of the run imports the plugin (VERL_USE_EXTERNAL_MODULES)
    run_ppo(config, task_runner_class=FocalTaskRunnerV1 if config.trainer.use_v1 else FocalLegacyTaskRunner)


@hydra.main(config_path="config", config_name=CONFIG_NAME, version_base=None)
def _hydra_main(config: DictConfig) -> None:
    from verl_focal.config.errors import UserError, report_user_error

    try:
        if not _CHECKED_BEFORE_HYDRA:  # Hydra's own flags skipped them: the same checks, on Hydra's composition
            _check_under_hydra(config)
        run(config)
    except UserError as e:  # Hydra would print a traceback; a user error gets its one line
        raise SystemExit(report_user_error(PROG, e, debug=_DEBUG)) from None


PROG = "python -m verl_focal.main_ppo"
_DEBUG = False
#: the launch checks ran on our own composition before Hydra's main (no Hydra flag was given)
_CHECKED_BEFORE_HYDRA = False


def _check_under_hydra(config: DictConfig) -> None:
    """A launch with Hydra's own flags (``--config-name``, ``-m``, ``hydra.run.dir=...``) is composed by Hydra, not
    before it: the launch checks run here instead, before Ray, on Hydra's config and the overrides Hydra applied
    (the unread-key check needs our config's schema, so it runs when the config is ours)."""
    from hydra.core.hydra_config import HydraConfig

    hydra_cfg = HydraConfig.get()
    if hydra_cfg.job.config_name == CONFIG_NAME:
        _warn_unread(config, list(hydra_cfg.overrides.task))
    _check_launch_data(config, launch=True)

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


def _warn_unread(config: DictConfig, overrides: list[str], trainer: str = "ppo") -> None:
    """Refuse the overrides nothing reads; one line on stderr for each one only warned about
    (integration/startup/unread)."""
    from verl_focal.integration.startup.unread import check_unread

    for line in check_unread(config, overrides, trainer):
        print(f"{PROG}: warning: {line}", file=sys.stderr)


def _check_launch_data(config: DictConfig, launch: bool) -> None:
    """Mandatory values (``???``) are set; the checkpoint folder is this run's (run_identity); example data
    (``prep-data example``) never reaches a real launch unless VERL_FOCAL_ALLOW_EXAMPLE_DATA=1; the data files'
    columns are those verl's dataset and the reward read (data/local_inputs)."""
    from verl_focal.data.local_inputs import check_data_columns, check_example_data

    check_mandatory(config)
    for line in check_example_data(config, launch):
        print(f"{PROG}: warning: {line}", file=sys.stderr)
    if launch:
        check_data_columns(config)
    _check_run_identity(config, launch)


def _check_run_identity(config: DictConfig, launch: bool) -> None:
    """The checkpoint folder holds no other run's checkpoints (resume_mode=auto would resume from them); a launch
    records this run's configuration there, a dry run writes nothing (run_identity)."""
    from verl_focal.integration.startup.run_identity import check_run_identity

    for line in check_run_identity(config, write=launch):
        print(f"{PROG}: warning: {line}", file=sys.stderr)


def dry_run(overrides: list[str], trainer: str = "ppo") -> int:
    """Validate everything a run would check before Ray, and the local input paths; print the config.

    On a refusal only the error is printed: verl's "[validate_config] All configuration checks passed"
    line is dropped and warnings are shown only when the dry run succeeds.
    """
    import contextlib
    import io
    import warnings

    from verl_focal.data.local_inputs import check_data_columns, check_local_paths
    from verl_focal.integration.startup.versions import warn_on_version_mismatch

    config = compose_config(overrides, trainer=trainer)
    _warn_unread(config, overrides, trainer)  # keys nothing reads: refused first, as a launch does
    printed = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(printed):
        validate_all(config, trainer)
        check_local_paths(config)  # data files and model folders that a run would read (hub names: not checked)
        check_data_columns(config)
        warn_on_version_mismatch()
    for line in printed.getvalue().splitlines():  # stdout stays pure YAML
        if line.strip() and not line.startswith("[validate_config]"):
            print(line, file=sys.stderr)
    for w in caught:
        warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    _check_launch_data(config, launch=False)
    from verl_focal.integration.startup.run_size import checkpoint_disk_line, validation_line

    for line in (validation_line(config), checkpoint_disk_line(config)):  # the run's size, before GPU hours
        if line:
            print(f"{PROG}: {line}", file=sys.stderr)
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
        else:
            from verl_focal.integration.compat import features_for, require

            require(features_for(trainer, ours=False), PROG)  # the verl names our entry point imports
        if "--dry-run" in args:
            raise SystemExit(dry_run([a for a in args if a != "--dry-run"], trainer))
        if trainer != "ppo":
            from verl_focal.integration.hooks.runner import run_separated

            config = compose_config(args, trainer=trainer)
            _warn_unread(config, args, trainer)
            _check_launch_data(config, launch=True)
            run_separated(config, trainer)
            return
        if not _hydra_args(args):
            config = compose_config(args)  # override typos refused here, in one line, before Hydra
            _warn_unread(config, args)
            _check_launch_data(config, launch=True)
            _CHECKED_BEFORE_HYDRA = True
    except UserError as e:
        raise SystemExit(report_user_error(PROG, e, debug=_DEBUG)) from None
    sys.argv = [sys.argv[0], *args]
    _hydra_main()


if __name__ == "__main__":
    main()
