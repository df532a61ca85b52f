"""The plugin's install steps, arranged once per process: what ``import verl_focal.plugin`` does.

Each step of :data:`STEPS` (listed in :mod:`verl_focal.plugin`'s docstring) waits for its verl module
(:func:`~verl_focal.integration.hooks.post_import.when_imported`) and is guarded
(:func:`~verl_focal.integration.compat.install`).

verl imports our ``verl.plugins`` entry point, which calls :func:`arrange`, on every ``import verl``,
unless ``VERL_USE_EXTERNAL_PLUGINS`` leaves it out.  Our TaskRunners call :func:`arrange` themselves, so a
TaskRunner whose process skipped the entry point is hooked all the same (:func:`arranged` tells whether
this process has done it).
"""

from __future__ import annotations

import functools
import importlib

from verl_focal.integration.compat import install
from verl_focal.integration.hooks.post_import import when_imported

__all__ = ["arrange", "arranged", "require_live", "PLUGIN_MODULE", "STEPS"]

#: the module verl's entry point (and ``VERL_USE_EXTERNAL_MODULES``) imports
PLUGIN_MODULE = "verl_focal.plugin"

_DONE: list[bool] = []

#: (verl module, feature, our module, its install function): each runs once its verl module is imported
STEPS = (
    ("verl.trainer.ppo.core_algos", "estimators", "verl_focal.integration.registration", "register_all"),
    ("verl.trainer.ppo.ray_trainer", "advantage", "verl_focal.integration.hooks.dataproto_hook",
     "hook_compute_advantage"),
    ("verl.trainer.ppo.v1", "v1", "verl_focal.integration.hooks.trainer", "register_hooked_trainers"),
    ("verl.experimental.separation.ray_trainer", "separated", "verl_focal.integration.hooks.dataproto_hook",
     "hook_separated_trainers"),
)


def _step(feature: str, module: str, name: str) -> None:
    install(feature, lambda: getattr(importlib.import_module(module), name)())  # our module imported only now


def arrange() -> None:
    """Arrange every install step of :data:`STEPS` for when its verl module is imported (at once for one imported
    already).  Idempotent: the second call in a process does nothing."""
    if _DONE:
        return
    _DONE.append(True)
    for verl_module, feature, module, name in STEPS:
        when_imported(verl_module, functools.partial(_step, feature, module, name))


def arranged() -> bool:
    """Whether :func:`arrange` ran in this process."""
    return bool(_DONE)


def _live(feature: str) -> bool:
    """Whether ``feature``'s install is in effect in this process (imports its verl module)."""
    from verl_focal.integration.hooks.post_import import is_hooked

    if feature in ("advantage", "legacy"):
        from verl.trainer.ppo import ray_trainer

        name = "compute_advantage" if feature == "advantage" else "compute_data_metrics"
        return is_hooked(getattr(ray_trainer, name, None))
    if feature == "v1":
        from verl.trainer.ppo.v1 import trainer_base

        from verl_focal.integration.hooks.modes import HOOKED_MODES

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
