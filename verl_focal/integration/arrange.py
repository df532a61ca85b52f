"""The plugin's install steps, arranged once per process: what ``import verl_focal.plugin`` does.

Each step waits for its verl module (:func:`~verl_focal.integration.post_import.when_imported`) and is
guarded (:func:`~verl_focal.integration.compat.install`):

* ``verl.trainer.ppo.core_algos``: our advantage estimators enter its ``ADV_ESTIMATOR_REGISTRY``;
* ``verl.trainer.ppo.ray_trainer``: the hook around verl's ``compute_advantage``;
* ``verl.trainer.ppo.v1``: the hooked v1 trainer modes ``focal_*``;
* ``verl.experimental.separation.ray_trainer``: the hook of the separated trainers.

verl imports our ``verl.plugins`` entry point, which calls :func:`arrange`, on every ``import verl``,
unless ``VERL_USE_EXTERNAL_PLUGINS`` leaves it out.  Our TaskRunners call :func:`arrange` themselves, so a
TaskRunner whose process skipped the entry point is hooked all the same (:func:`arranged` tells whether
this process has done it).
"""

from __future__ import annotations

from verl_focal.integration.compat import install
from verl_focal.integration.post_import import when_imported

__all__ = ["arrange", "arranged", "PLUGIN_MODULE"]

#: the module verl's entry point (and ``VERL_USE_EXTERNAL_MODULES``) imports
PLUGIN_MODULE = "verl_focal.plugin"

_DONE: list[bool] = []


def _register() -> None:
    from verl_focal.integration.registration import register_all

    register_all()


def _hook_compute_advantage() -> None:
    from verl_focal.integration.dataproto_hook import hook_compute_advantage

    hook_compute_advantage()


def _register_trainers() -> None:
    from verl_focal.integration.trainer import register_hooked_trainers

    register_hooked_trainers()


def _hook_separated_trainers() -> None:
    from verl_focal.integration.dataproto_hook import hook_separated_trainers

    hook_separated_trainers()


def arrange() -> None:
    """Arrange every install step for when its verl module is imported (at once for one imported already).
    Idempotent: the second call in a process does nothing."""
    if _DONE:
        return
    _DONE.append(True)
    when_imported("verl.trainer.ppo.core_algos", lambda: install("estimators", _register))
    when_imported("verl.trainer.ppo.ray_trainer", lambda: install("advantage", _hook_compute_advantage))
    when_imported("verl.trainer.ppo.v1", lambda: install("v1", _register_trainers))
    when_imported("verl.experimental.separation.ray_trainer", lambda: install("separated", _hook_separated_trainers))


def arranged() -> bool:
    """Whether :func:`arrange` ran in this process."""
    return bool(_DONE)


def _live(feature: str) -> bool:
    """Whether ``feature``'s install is in effect in this process (imports its verl module)."""
    from verl_focal.integration.post_import import is_hooked

    if feature == "estimators":
        from verl.trainer.ppo import core_algos

        from verl_focal.estimators import all_specs
        from verl_focal.integration.registration import alias

        registry = getattr(core_algos, "ADV_ESTIMATOR_REGISTRY", {})  # the alias: a name another package holds
        return all(registry.get(alias(spec.name)) is spec.fn for spec in all_specs())
    if feature in ("advantage", "legacy"):
        from verl.trainer.ppo import ray_trainer

        name = "compute_advantage" if feature == "advantage" else "compute_data_metrics"
        return is_hooked(getattr(ray_trainer, name, None))
    if feature == "v1":
        from verl.trainer.ppo.v1 import trainer_base

        from verl_focal.integration.modes import HOOKED_MODES

        return HOOKED_MODES["sync"] in getattr(trainer_base, "TRAINER_REGISTRY", {})
    if feature == "separated":
        from verl.experimental.separation.ray_trainer import SeparateRayPPOTrainer

        return is_hooked(getattr(SeparateRayPPOTrainer, "_fit_compute_advantage", None))
    raise ValueError(f"no live check for feature {feature!r}")


def require_live(features: list[str], what: str) -> None:
    """Raise :class:`~verl_focal.config.errors.ConfigError` (one line) unless every install of ``features`` is in
    effect *in this process* -- the one that runs the step (our TaskRunner, the hooked trainer).

    :func:`~verl_focal.integration.compat.require` refuses a missing verl name or an install that failed; this
    also catches an install that never ran, as in a process where verl's entry point skipped the plugin.
    """
    import os

    from verl_focal.config.errors import ConfigError
    from verl_focal.integration.compat import FEATURES, require

    require(features, what)  # a missing name or a failed install: its own message
    for feature in features:
        if not _live(feature):
            policy = os.environ.get("VERL_USE_EXTERNAL_PLUGINS", "auto")
            raise ConfigError(
                f"{what} needs {FEATURES[feature]} in this process ({os.uname().nodename}, pid {os.getpid()}), "
                f"but it is not installed here (VERL_USE_EXTERNAL_PLUGINS={policy!r}, plugin arranged: "
                f"{arranged()}): launch with python -m verl_focal.main_ppo, or pass "
                f"+ray_kwargs.ray_init.runtime_env.env_vars.VERL_USE_EXTERNAL_MODULES={PLUGIN_MODULE}"
            )
