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


#: our namespaces: an unknown key under them is a typo of one of ours, never a key to add with +
OUR_NAMESPACES = ("algorithm.focal", "algorithm.cue", "algorithm.cue.judge")


def _schema_keys(parent: str) -> list[str] | None:
    import dataclasses

    from verl_focal.config.schema import SECTIONS

    parts = parent.split(".")
    if len(parts) < 2 or parts[0] != "algorithm" or parts[1] not in SECTIONS:
        return None
    cls = SECTIONS[parts[1]]
    for name in parts[2:]:
        f = {f.name: f for f in dataclasses.fields(cls)}.get(name)
        if f is None or f.default_factory is dataclasses.MISSING or not dataclasses.is_dataclass(f.default_factory()):
            return None
        cls = type(f.default_factory())
    return [f.name for f in dataclasses.fields(cls)]


def _unknown_key_error(key: str, value: str | None, config_name: str) -> Exception:
    from verl_focal.config.errors import ConfigError, did_you_mean

    parent, _, leaf = key.rpartition(".")
    ours = _schema_keys(parent)
    if ours is not None:  # one of our sections: a typo, never "use +"
        return ConfigError(
            f"unknown key {key}{did_you_mean(leaf, ours)}; valid keys under {parent}: {sorted(ours)}"
        )
    siblings: list[str] = []
    try:
        node = compose_config([], config_name=config_name)
        for part in parent.split(".") if parent else []:
            node = node[part]
        siblings = [str(k) for k in node.keys()]
    except Exception:  # noqa: BLE001 - only for the hint
        pass
    add = f"+{key}={value}" if value is not None else f"+{key}=VALUE"
    return ConfigError(
        f"unknown key {key}{did_you_mean(leaf, siblings)}; to add a new key to verl's config write {add}"
    )


def compose_config(overrides: list[str] | None = None, config_name: str = CONFIG_NAME) -> DictConfig:
    """Compose our packaged config with Hydra overrides (no Ray, no model).

    A Hydra error becomes a :class:`~verl_focal.config.errors.ConfigError`: an unknown key under
    ``algorithm.focal`` / ``algorithm.cue`` gets "did you mean" (not Hydra's "use +key" advice).
    """
    import re

    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException

    from verl_focal.config.errors import ConfigError

    GlobalHydra.instance().clear()
    try:
        with initialize_config_module(config_module=CONFIG_MODULE, version_base=None):
            return compose(config_name=config_name, overrides=list(overrides or []))
    except HydraException as e:
        msg = str(e)
        m = re.search(r"Could not override '([^']+)'", msg)
        if m and "not in struct" in str(e.__cause__ or ""):
            full = re.search(r"full_key: (\S+)", str(e.__cause__))
            key = full.group(1) if full else m.group(1)
            if key.startswith("algorithm.cue.partitioner_kwargs."):
                leaf = key.rsplit(".", 1)[1]
                raise ConfigError(
                    f"algorithm.cue.partitioner_kwargs takes free keys, added one by one with +: "
                    f"write +algorithm.cue.partitioner_kwargs.{leaf}=VALUE"
                ) from e
            value = next(
                (o.split("=", 1)[1] for o in overrides or [] if "=" in o and o.split("=", 1)[0].lstrip("+~") == key),
                None,
            )
            raise _unknown_key_error(key, value, config_name) from e
        lines = [ln for ln in msg.splitlines() if ln.strip() and not ln.startswith("See https")]
        cause = str(e.__cause__).splitlines()[0] if e.__cause__ is not None and str(e.__cause__) else ""
        text = "; ".join(lines[:2]) + (f" ({cause})" if cause and cause not in msg else "")
        raise ConfigError(f"bad override: {text}") from e
    finally:
        GlobalHydra.instance().clear()


def _one_line(e: BaseException) -> str:
    """verl's config errors in one line: the innermost message, and the config key when given."""
    import re

    text = str(e)
    inner = re.search(r"\w+Error\((['\"])(.*?)\1\)", text, re.S)
    msg = inner.group(2) if inner else (text.strip().splitlines() or [type(e).__name__])[0]
    key = re.search(r"full_key: (\S+)", text)
    return f"{msg.strip()}" + (f" (in {key.group(1)})" if key else "")


def validate_all(config: DictConfig) -> dict:
    """Our start-up checks + verl's own ``validate_config``; raises ConfigError naming the key and the fix."""
    from hydra.errors import HydraException
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    from verl_focal.config.errors import ConfigError
    from verl_focal.integration.compat import require_contract
    from verl_focal.integration.preflight import validate_start

    require_contract(full=True)
    sections = validate_start(config)
    try:
        validate_config(
            config=config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config)
        )
    except (AssertionError, ValueError, TypeError, KeyError, HydraException) as e:  # verl's own config checks
        raise ConfigError(f"verl's config check: {_one_line(e)}") from e
    return sections


def run(config: DictConfig) -> None:
    from verl.trainer.main_ppo import run_ppo
    from verl.utils.device import auto_set_device

    from verl_focal.integration.runner import FocalLegacyTaskRunner, FocalTaskRunnerV1
    from verl_focal.integration.versions import warn_on_version_mismatch

    auto_set_device(config)
    validate_all(config)
    warn_on_version_mismatch()
    run_ppo(config, task_runner_class=FocalTaskRunnerV1 if config.trainer.use_v1 else FocalLegacyTaskRunner)


@hydra.main(config_path="config", config_name=CONFIG_NAME, version_base=None)
def _hydra_main(config: DictConfig) -> None:
    from verl_focal.config.errors import UserError, report_user_error

    try:
        run(config)
    except UserError as e:  # Hydra would print a traceback; a user error gets its one line
        raise SystemExit(report_user_error(PROG, e, debug=_DEBUG)) from None


PROG = "python -m verl_focal.main_ppo"
_DEBUG = False


def dry_run(overrides: list[str]) -> int:
    import contextlib

    config = compose_config(overrides)
    with contextlib.redirect_stdout(sys.stderr):  # verl's validate_config prints; stdout stays pure YAML
        validate_all(config)
        from verl_focal.integration.versions import warn_on_version_mismatch

        warn_on_version_mismatch()
    print(OmegaConf.to_yaml(config, resolve=True), end="")
    return 0


def _hydra_args(args: list[str]) -> bool:
    return any(a.startswith("-") or a.split("=", 1)[0].lstrip("+~").startswith("hydra") for a in args)


def main(argv: list[str] | None = None) -> None:
    """``python -m verl_focal.main_ppo [--dry-run] [--debug] overrides...``; user errors exit 2 in one line."""
    global _DEBUG
    from verl_focal.config.errors import UserError, debug_enabled, report_user_error
    from verl_focal.integration.quiet import quiet_optional_engines

    args = list(sys.argv[1:] if argv is None else argv)
    _DEBUG = debug_enabled(args)
    args = [a for a in args if a != "--debug"]
    quiet_optional_engines()
    try:
        if "--dry-run" in args:
            raise SystemExit(dry_run([a for a in args if a != "--dry-run"]))
        if not _hydra_args(args):
            compose_config(args)  # catch override typos here, in one line, before Hydra's own run
    except UserError as e:
        raise SystemExit(report_user_error(PROG, e, debug=_DEBUG)) from None
    sys.argv = [sys.argv[0], *args]
    _hydra_main()


if __name__ == "__main__":
    main()
