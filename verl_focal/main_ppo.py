"""``python -m verl_focal.main_ppo``: verl's PPO trainer with the verl-focal hook.

Composes the packaged ``verl_focal/config/focal_trainer.yaml`` (verl's
``ppo_trainer`` plus ``algorithm.focal.*`` / ``algorithm.cue.*``, so no ``+``
is needed), validates our sections and verl's config *before* Ray starts, then
calls verl's own ``run_ppo`` with our TaskRunner (v1 or legacy, by
``trainer.use_v1``).

``--dry-run`` prints the fully resolved config as YAML and exits 0 without
starting anything::

    python -m verl_focal.main_ppo --dry-run algorithm.focal.gamma=1.0 data.train_batch_size=256
"""

from __future__ import annotations

import sys

import hydra
from omegaconf import DictConfig, OmegaConf

__all__ = ["main", "compose_config", "validate_all", "run"]

CONFIG_MODULE = "verl_focal.config"
CONFIG_NAME = "focal_trainer"


def compose_config(overrides: list[str] | None = None, config_name: str = CONFIG_NAME) -> DictConfig:
    """Compose our packaged config with Hydra overrides (no Ray, no model)."""
    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    with initialize_config_module(config_module=CONFIG_MODULE, version_base=None):
        return compose(config_name=config_name, overrides=list(overrides or []))


def validate_all(config: DictConfig) -> dict:
    """Our sections + verl's own ``validate_config``; raises with the offending key."""
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    from verl_focal.config.schema import validate_algorithm_config
    from verl_focal.integration.compat import require_contract
    from verl_focal.integration.registration import register_all

    require_contract(full=True)
    register_all()
    sections = validate_algorithm_config(config.algorithm)
    from verl_focal.integration.registration import run_startup_check

    run_startup_check(config)  # checks across sections, e.g. algorithm.passk.k vs actor_rollout_ref.rollout.n
    from verl.trainer.ppo.core_algos import get_adv_estimator_fn

    est = config.algorithm.adv_estimator
    if est not in ("gae", "grpo"):
        get_adv_estimator_fn(est)  # raises "Unknown advantage estimator" early
    if est in ("cue_grpo", "f_cue_grpo") and sections["cue"].partitioner == "judge":
        from verl_focal.partition.judge import check_judge

        problems = check_judge(sections["cue"].judge, network=False)  # offline subset; `verl-focal check` goes online
        if problems:
            raise ValueError("algorithm.cue.judge: " + "; ".join(problems))
    validate_config(config=config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config))
    return sections


def run(config: DictConfig) -> None:
    from verl.trainer.main_ppo import run_ppo
    from verl.utils.device import auto_set_device

    from verl_focal.integration.runner import FocalLegacyTaskRunner, FocalTaskRunnerV1

    auto_set_device(config)
    validate_all(config)
    run_ppo(config, task_runner_class=FocalTaskRunnerV1 if config.trainer.use_v1 else FocalLegacyTaskRunner)


@hydra.main(config_path="config", config_name=CONFIG_NAME, version_base=None)
def _hydra_main(config: DictConfig) -> None:
    run(config)


def dry_run(overrides: list[str]) -> int:
    import contextlib

    config = compose_config(overrides)
    with contextlib.redirect_stdout(sys.stderr):  # verl's validate_config prints; stdout stays pure YAML
        validate_all(config)
    print(OmegaConf.to_yaml(config, resolve=True), end="")
    return 0


def main() -> None:
    if "--dry-run" in sys.argv[1:]:
        args = [a for a in sys.argv[1:] if a != "--dry-run"]
        raise SystemExit(dry_run(args))
    _hydra_main()


if __name__ == "__main__":
    main()
