"""Mandatory values left at ``???``: verl raises ``MissingMandatoryValue`` for them only after ``ray.init``, so a dry
run and a launch refuse them before Ray, and ``verl-focal check`` names them in a warning
(:func:`check_mandatory`)."""

from __future__ import annotations

from omegaconf import DictConfig, OmegaConf

from verl_focal.config.key_names import config_get

__all__ = ["check_mandatory", "missing_mandatory"]

#: a mandatory key's fix, where one value is the usual choice (verl's own names)
_MANDATORY_FIXES = {
    "actor_rollout_ref.rollout.name": "actor_rollout_ref.rollout.name=vllm (or sglang), the rollout engine",
}


def missing_mandatory(config: DictConfig) -> list[str]:
    """The keys left at ``???`` that the run reads: verl raises ``MissingMandatoryValue`` for them only after
    ``ray.init``.  A key under a section switched off (an ancestor with ``enable: false``, e.g.
    ``reward.reward_model.rollout.name`` without a reward model) is never read, so not listed."""

    def switched_off(key: str) -> bool:
        parts = key.split(".")
        for i in range(1, len(parts)):
            if config_get(config, ".".join([*parts[:i], "enable"])) is False:
                return True
        return False

    return sorted(k for k in OmegaConf.missing_keys(config) if not switched_off(k))


def _fixes(keys: list[str]) -> str:
    return ", ".join(_MANDATORY_FIXES.get(k, f"{k}=VALUE") for k in keys)


def check_mandatory(config: DictConfig, refuse: bool = True) -> list[str]:
    """Refuse, naming every key, a mandatory value left unset (``???``): before Ray, in a dry run and a launch.
    ``refuse=False`` (``verl-focal check``, which takes configs that may name no engine yet): the same keys and
    fix in a warning line, returned."""
    from verl_focal.config.errors import ConfigError

    keys = missing_mandatory(config)
    if not keys:
        return []
    if not refuse:
        return [f"mandatory value(s) left unset (???): {', '.join(keys)}; a --dry-run and a launch refuse this "
                f"config until you set {_fixes(keys)}"]
    raise ConfigError(f"mandatory value(s) left unset (???): {', '.join(keys)}; verl would stop with "
                      f"MissingMandatoryValue after Ray starts: set {_fixes(keys)}")
