"""Composition: our packaged config (or a separated trainer's verl config) + the user's Hydra overrides.

:func:`compose_config` (no Ray, no model, no ``import verl``), the ``--trainer`` choices (:data:`TRAINERS`) and
what verl's separated trainers assert when built (:data:`SEPARATED_REQUIREMENTS`, checked by
:func:`check_separated_trainer`).  A Hydra error becomes one :class:`~verl_focal.config.errors.ConfigError`
line; an unknown key is named with a did-you-mean (:mod:`verl_focal.integration.startup.unread`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from verl_focal.config.errors import ConfigError, did_you_mean

if TYPE_CHECKING:
    from omegaconf import DictConfig

__all__ = ["CONFIG_MODULE", "CONFIG_NAME", "TRAINERS", "SEPARATED_REQUIREMENTS", "SEPARATED_DEFAULTS",
           "check_trainer_name", "check_separated_trainer", "compose_config", "verl_config_searchpath", "legacy_blocks"]

CONFIG_MODULE = "verl_focal.config"
CONFIG_NAME = "focal_trainer"

#: ``--trainer`` choices: the package holding verl's config for that trainer and its config name
#: (``ppo`` is verl's main_ppo through our packaged ``focal_trainer.yaml``)
TRAINERS: dict[str, tuple[str, str] | None] = {
    "ppo": None,
    "one_step_off": ("verl.experimental.one_step_off_policy", "one_step_off_ppo_trainer"),
    "fully_async": ("verl.experimental.fully_async_policy", "fully_async_ppo_trainer"),
}


#: what verl's separated trainers assert when they are built (after Ray and the workers start), as
#: (trainers, key, the value that works, why); checked before start-up by :func:`check_separated_trainer`
SEPARATED_REQUIREMENTS: tuple[tuple[tuple[str, ...], str, Any, str], ...] = (
    (("one_step_off", "fully_async"), "actor_rollout_ref.hybrid_engine", False,
     "the {trainer} trainer runs the actor and the rollout in separate pools"),
    (("fully_async",), "data.train_batch_size", 0,
     "the fully_async rollouter feeds prompts one by one; a training step takes "
     "async_training.require_batches x actor_rollout_ref.actor.ppo_mini_batch_size of them"),
    (("fully_async",), "data.gen_batch_size", 1, "the fully_async rollouter samples one prompt at a time"),
    (("fully_async",), "actor_rollout_ref.rollout.calculate_log_probs", True,
     "the fully_async trainer trains on the rollout's log-probs"),
)

#: keys the composition of each separated trainer sets to the value that works (user overrides come after)
SEPARATED_DEFAULTS = {
    t: [f"{key}={str(v).lower() if isinstance(v, bool) else v}" for ts, key, v, _ in SEPARATED_REQUIREMENTS
        if t in ts]
    for t in ("one_step_off", "fully_async")
}


def check_trainer_name(trainer: str) -> None:
    """Raise ConfigError (with a did-you-mean) unless ``trainer`` is one of :data:`TRAINERS`."""
    if trainer not in TRAINERS:
        raise ConfigError(f"--trainer {trainer!r} is not a trainer{did_you_mean(trainer, list(TRAINERS))}; "
                          f"choose one of {list(TRAINERS)}")


def check_separated_trainer(config: Any, trainer: str) -> None:
    """What makes a separated trainer (``one_step_off``, ``fully_async``) fail after Ray starts, checked now.

    :data:`SEPARATED_REQUIREMENTS` (verl's assertions in those trainers' constructors), then the
    checkpoint engine: both trainers move the weights between separate actor and rollout pools,
    which the colocated-only ``naive`` backend cannot do (its first sync fails).
    """
    from verl_focal.config.key_names import config_get

    if trainer not in SEPARATED_DEFAULTS:
        return
    for trainers, key, want, why in SEPARATED_REQUIREMENTS:
        if trainer in trainers:
            got = config_get(config, key)
            if got != want or type(got) is not type(want):
                shown = str(want).lower() if isinstance(want, bool) else want
                raise ConfigError(f"{key}={got}: {why.format(trainer=trainer)}; set {key}={shown}")
    backend = config_get(config, "actor_rollout_ref.rollout.checkpoint_engine.backend")
    if backend == "naive":
        raise ConfigError(f"actor_rollout_ref.rollout.checkpoint_engine.backend=naive only syncs a colocated "
                          f"rollout; the {trainer} trainer needs one that moves weights between pools "
                          f"(verl's default for it: nccl)")


def _trainer_config_dir(trainer: str) -> tuple[str, str]:
    """verl's config folder and config name of a separated trainer (not a Python package, so
    Hydra reaches it as a folder)."""
    import importlib
    import os

    package, name = TRAINERS[trainer]  # type: ignore[misc]
    mod = importlib.import_module(package)
    return os.path.join(os.path.dirname(mod.__file__), "config"), name


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


def _unknown_key_error(key: str, value: str | None, config_name: str, trainer: str = "ppo",
                       overrides: list[str] | None = None) -> Exception:
    from verl_focal.config.errors import ConfigError, did_you_mean

    parent, _, leaf = key.rpartition(".")
    ours = _schema_keys(parent)
    if ours is not None:  # one of our sections: a typo, never "use +"
        return ConfigError(
            f"unknown key {key}{did_you_mean(leaf, ours)}; valid keys under {parent}: {sorted(ours)}"
        )
    from omegaconf import OmegaConf

    from verl_focal.config.key_names import unknown_key_message
    from verl_focal.estimators import sections_by_estimator
    from verl_focal.integration.startup.liveness import DECIDING_KEYS
    from verl_focal.integration.startup.reads import reads_here

    try:
        base = compose_config([], config_name=config_name, trainer=trainer)
        for o in overrides or []:  # the user's estimator, critic, KL and engine: the hint is a key this run reads
            k, _, v = o.lstrip("+").partition("=")
            if k in DECIDING_KEYS and v:
                OmegaConf.update(base, k, OmegaConf.create({"v": v}).v if v not in ("true", "false") else v == "true")
    except ConfigError:
        base = {}
    return ConfigError(unknown_key_message(key, value, base, exclude=legacy_blocks(),
                                           estimators=sections_by_estimator(), live=reads_here))


def _refuse_trainer_override(overrides: list[str]) -> None:
    """``trainer=fully_async`` (Hydra style) would replace verl's whole ``trainer`` section by a string; the
    trainer is chosen with ``--trainer``."""
    for o in overrides:
        key, sep, value = o.partition("=")
        if sep and key.lstrip("+~") == "trainer":
            hint = (f"choose the trainer with --trainer {value} (verl-focal check --trainer {value} / python -m "
                    f"verl_focal.main_ppo --trainer {value})" if value in TRAINERS else
                    f"choose a trainer with --trainer, one of {list(TRAINERS)}")
            raise ConfigError(f"{o}: `trainer` is verl's section of trainer settings (trainer.total_epochs, ...), "
                              f"not a trainer name; {hint}")


def legacy_blocks() -> tuple[str, ...]:
    """The top-level blocks of verl's ``legacy_reward_impl.yaml`` (kept for backward compatibility, read only by
    the trainers that migrate them), read from verl's config folder without importing verl."""
    import os

    import yaml

    search = verl_config_searchpath()
    if search:
        try:
            with open(os.path.join(search.removeprefix("file://"), "legacy_reward_impl.yaml"), encoding="utf-8") as f:
                return tuple(yaml.safe_load(f) or {})
        except OSError:
            pass
    return ("custom_reward_function", "reward_model", "sandbox_fusion")


def verl_config_searchpath() -> str | None:
    """verl's packaged config folder as a ``file://`` search path, found without importing verl.

    The packaged YAML names ``pkg://verl.trainer.config``, which makes Hydra import ``verl`` (and with it
    torch: seconds) just to locate verl's YAML files; composing from the folder needs neither.  ``None``
    when verl is not installed as a plain folder (then the ``pkg://`` path is used).
    """
    import importlib.util
    import os

    spec = importlib.util.find_spec("verl")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = os.path.join(list(spec.submodule_search_locations)[0], "trainer", "config")
    if "'" in folder or not os.path.isfile(os.path.join(folder, "ppo_trainer.yaml")):
        return None
    return f"file://{folder}"


#: how a Megatron run reaches our estimators: verl's entry point with its Megatron config and our hooked mode
MEGATRON_COMMAND = ("python -m verl.trainer.main_ppo --config-name ppo_megatron_trainer "
                    "trainer.v1.trainer_mode=focal_sync "
                    "+ray_kwargs.ray_init.runtime_env.env_vars.VERL_USE_EXTERNAL_MODULES=verl_focal.plugin "
                    "algorithm.adv_estimator=f_grpo +algorithm.focal.gamma=1.0 actor_rollout_ref.rollout.n=8 ...")


def refuse_megatron(overrides: list[str]) -> None:
    """A Megatron strategy (``*.strategy=megatron``, or ``model_engine=megatron``, which picks verl's Megatron
    actor, ref and critic configs) or another primary config (``--config-name``): our entry point composes verl's
    FSDP ``ppo_trainer`` only, so refuse in one line naming the command that runs Megatron with our hooks."""
    from verl_focal.config.errors import ConfigError

    for o in overrides:
        key, _, value = o.lstrip("+~").partition("=")
        if o.startswith(("--config-name", "-cn", "--config-path", "-cp")):
            what = o
        elif (key.endswith(".strategy") or key == "model_engine") and value.strip("'\"") == "megatron":
            what = o
        else:
            continue
        raise ConfigError(f"{what}: python -m verl_focal.main_ppo composes verl's FSDP config (ppo_trainer) only; "
                          f"run Megatron through verl's entry point with our hooked mode: {MEGATRON_COMMAND}")


def _with_verl_searchpath(overrides: list[str], verl_path: str) -> list[str]:
    """A user's ``hydra.searchpath=[...]`` keeps verl's config folder on it (Hydra's override replaces the list,
    and our config's ``ppo_trainer`` lives there): verl's folder is appended to the user's entries."""
    out = []
    for o in overrides:
        key, _, value = o.partition("=")
        if key.lstrip("+") == "hydra.searchpath" and not key.startswith("~"):
            entries = [e.strip() for e in value.strip().strip("[]").split(",") if e.strip()]
            o = f"hydra.searchpath=[{','.join([*entries, verl_path])}]"
        out.append(o)
    return out


def compose_config(overrides: list[str] | None = None, config_name: str = CONFIG_NAME,
                   trainer: str = "ppo") -> DictConfig:
    """Compose a trainer's config plus our sections with Hydra overrides (no Ray, no model, no ``import verl``).

    ``trainer`` (:data:`TRAINERS`): ``ppo`` composes our packaged ``focal_trainer.yaml`` (verl's
    ``ppo_trainer`` + ``sections/focal.yaml``); ``one_step_off`` / ``fully_async`` compose verl's
    own config of that trainer with ``sections/focal.yaml`` added (``+sections=focal``), so our keys
    need no ``+`` there either, and the values those trainers require (:data:`SEPARATED_DEFAULTS`,
    e.g. ``actor_rollout_ref.hybrid_engine=false``) unless the overrides say otherwise.

    A Hydra error becomes a :class:`~verl_focal.config.errors.ConfigError`: an unknown key under
    ``algorithm.focal`` / ``algorithm.cue`` gets "did you mean" (not Hydra's "use +key" advice).
    """
    import re

    from hydra import compose, initialize_config_dir, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException

    from verl_focal.config.errors import ConfigError

    check_trainer_name(trainer)
    given = list(overrides or [])
    _refuse_trainer_override(given)
    refuse_megatron(given)
    search = verl_config_searchpath()  # verl's YAML folder, so that composing does not import verl
    given = _with_verl_searchpath(given, f"'{search}'" if search else "pkg://verl.trainer.config")
    GlobalHydra.instance().clear()
    try:
        if TRAINERS[trainer] is None:
            if search and not any(o.startswith("hydra.searchpath=") for o in given):
                given = [f"hydra.searchpath=['{search}']", *given]
            with initialize_config_module(config_module=CONFIG_MODULE, version_base=None):
                return compose(config_name=config_name, overrides=given)
        config_dir, name = _trainer_config_dir(trainer)
        verl_path = f"'{search}'" if search else "pkg://verl.trainer.config"
        # verl's configs of these trainers inherit values from ppo_trainer that their trainers refuse
        # (hybrid_engine=true, ...): the only working ones go first, so a user's own setting is checked instead
        user = [o for o in given if o.startswith("hydra.searchpath=")]  # the user's entries, then verl's, ours
        given = [o for o in given if o not in user]
        path = user[-1].partition("=")[2].strip("[]") + f",pkg://{CONFIG_MODULE}" if user else \
            f"{verl_path},pkg://{CONFIG_MODULE}"
        ours = [f"hydra.searchpath=[{path}]", "+sections=focal", *SEPARATED_DEFAULTS[trainer]]
        with initialize_config_dir(config_dir=config_dir, version_base=None):
            return compose(config_name=name, overrides=ours + given)
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
            given_key = next((o.split("=", 1)[0].lstrip("+~") for o in overrides or [] if "=" in o and (
                o.split("=", 1)[0].lstrip("+~") + ".").startswith(key + ".")), key)
            key = given_key  # Hydra names the first missing part; the user's key is the whole one
            value = next(
                (o.split("=", 1)[1] for o in overrides or [] if "=" in o and o.split("=", 1)[0].lstrip("+~") == key),
                None,
            )
            raise _unknown_key_error(key, value, config_name, trainer, overrides) from e
        lines = [ln for ln in msg.splitlines() if ln.strip() and not ln.startswith("See https")]
        cause = str(e.__cause__).splitlines()[0] if e.__cause__ is not None and str(e.__cause__) else ""
        text = "; ".join(lines[:2]) + (f" ({cause})" if cause and cause not in msg else "")
        raise ConfigError(f"bad override: {text}") from e
    finally:
        GlobalHydra.instance().clear()
