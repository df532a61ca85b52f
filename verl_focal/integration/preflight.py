"""Start-up validation: everything that can be checked before Ray, workers or models start.

One function, :func:`validate_start`, used by every way a run can start:
``verl-focal check``, ``python -m verl_focal.main_ppo`` (and ``--dry-run``), our
TaskRunners, and the hooked trainer's constructor (stock ``verl.trainer.main_ppo`` with
``trainer.v1.trainer_mode=focal_sync``).  It raises
:class:`~verl_focal.config.errors.ConfigError` naming the key, the value and the fix:

* ``algorithm.adv_estimator`` is a known estimator (ours and verl's listed, did-you-mean),
  and, if it is one of our names, verl's registry really maps it to our function and the verl names
  its hooks need exist (``compat.require``);
* ``actor_rollout_ref.rollout.n``, the reward function, verl's own enumerations
  (:mod:`~verl_focal.integration.late_checks`);
* our ``algorithm.focal`` / ``algorithm.cue`` sections (ranges, choices, unknown keys);
* for an estimator that partitions: the partitioner resolves (registered name, or an
  importable ``pkg.module:Class`` that is a Partitioner), its kwargs bind, the cue
  catalogue loads with its backend; the judge gets its offline checks.  Nothing is built,
  no network.

It also owns composition: :func:`compose_config` (our packaged ``focal_trainer.yaml`` + Hydra
overrides, with one-line errors) and :func:`validate_all` (:func:`validate_start` + verl's own
``validate_config``).  The entry points (``python -m verl_focal.main_ppo``, ``verl-focal check``)
and the hooked trainer call these; nothing here imports from an entry point.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from verl_focal.config.errors import ConfigError, did_you_mean

if TYPE_CHECKING:
    from omegaconf import DictConfig

__all__ = ["validate_start", "validate_all", "check_trainer_name", "check_separated_trainer", "SEPARATED_REQUIREMENTS",
           "compose_config", "check_estimator_name", "check_partitioner", "check_local_paths",
           "verl_config_searchpath", "CONFIG_MODULE", "CONFIG_NAME"]


def _verl_estimator_names() -> list[str]:
    from verl.trainer.ppo import core_algos

    registry = getattr(core_algos, "ADV_ESTIMATOR_REGISTRY", {})
    return sorted(set(registry) | {e.value for e in getattr(core_algos, "AdvantageEstimator", ())})


def check_estimator_name(est: Any) -> None:
    """``algorithm.adv_estimator`` names a registered estimator, and ours is the one behind our names."""
    from verl_focal.integration.registration import collision_problem, registered_names

    key = getattr(est, "value", est)
    known = _verl_estimator_names()
    if key not in known:
        ours = registered_names(aliases=True)
        theirs = [n for n in known if n not in ours]
        raise ConfigError(
            f"unknown algorithm.adv_estimator={key!r}{did_you_mean(key, known)}; verl-focal's: {', '.join(ours)}; "
            f"verl's: {', '.join(theirs)}"
        )
    problem = collision_problem(key)
    if problem:
        raise ConfigError(problem)


def check_partitioner(cue: Any) -> None:
    """Resolve ``algorithm.cue.partitioner`` and check its kwargs, before any step (no network)."""
    from verl_focal.partition.base import check_partitioner_kwargs, resolve_partitioner
    from verl_focal.partition.cues import get_extractor

    target = resolve_partitioner(cue.partitioner)
    # the strategy-cue catalogue (used by strategy_cue, random and the judge's fallback): name, file, backend
    _check_cue_set(cue.cue_set)
    get_extractor(cue.cue_set, cue.backend, cue.extract_timeout)
    if cue.partitioner == "judge":
        from verl_focal.partition.judge import check_judge

        problems = check_judge(cue.judge, network=False)  # offline subset; `verl-focal check` goes online
        if problems:
            raise ConfigError("algorithm.cue.judge: " + "; ".join(problems))
        return
    # the kwargs must bind; nothing is built here (a user's class may load a model)
    check_partitioner_kwargs(target, dict(cue.partitioner_kwargs), cue.partitioner)


def _check_cue_set(cue_set: str) -> None:
    from verl_focal.partition.cues import list_cue_sets

    if cue_set.endswith((".yaml", ".yml", ".json")) or "/" in cue_set:
        return  # a file: the catalogue loader names a missing or malformed one
    names = list_cue_sets()
    if cue_set not in names:
        raise ConfigError(
            f"unknown algorithm.cue.cue_set={cue_set!r}{did_you_mean(cue_set, names)}; packaged catalogues: "
            f"{names}, or give a .yaml/.json file path"
        )


def validate_start(config: Any, trainer: str = "ppo") -> dict:
    """Everything of ours that can fail at step 1, checked now; returns the validated sections.

    For one of our estimators, first the verl names its hooks need on this ``trainer``
    (:func:`~verl_focal.integration.compat.require`): a renamed or missing one refuses the config here.
    """
    from verl_focal.config.schema import validate_algorithm_config
    from verl_focal.integration.compat import features_for, missing, require
    from verl_focal.integration.late_checks import (
        check_group_size,
        check_reward_function,
        check_verl_choices,
        config_get,
    )
    from verl_focal.integration.registration import get_spec, register_all, run_startup_check

    algorithm = config.algorithm
    est = algorithm.get("adv_estimator", None)
    if is_our_name(est):
        use_v1 = bool(config_get(config, "trainer.use_v1", True))
        hooks = [f for f in features_for(trainer, use_v1) if f != "entry" and not f.endswith("_entry")]
        require(hooks, f"algorithm.adv_estimator={getattr(est, 'value', est)}")
    if not missing("estimators"):  # else verl's own estimators only (the plugin warned)
        register_all()
    check_estimator_name(est)
    sections = validate_algorithm_config(algorithm)
    spec = get_spec(est)
    check_group_size(config, spec)
    run_startup_check(config)  # checks across sections, e.g. algorithm.passk.k vs actor_rollout_ref.rollout.n
    if spec is not None and spec.prepare is not None:  # an estimator with a group-level step partitions
        try:
            check_partitioner(sections["cue"])
        except ConfigError:
            raise
        except ValueError as e:  # a consumer's own check (catalogue file, backend, ...)
            raise ConfigError(str(e)) from None
    check_reward_kwargs(config)
    if not missing("entry"):  # verl's names these read (else our entry point refuses, naming them)
        check_reward_function(config)
        check_verl_choices(config)
    return sections


def is_our_name(est: Any) -> bool:
    """Whether ``est`` names one of our estimators (plain or ``verl_focal.`` alias), known without verl."""
    from verl_focal.estimators import all_specs
    from verl_focal.integration.registration import ALIAS_PREFIX

    key = str(getattr(est, "value", est))
    return key.removeprefix(ALIAS_PREFIX) in {s.name for s in all_specs()}


def uses_our_scorer(config: Any) -> bool:
    """Whether ``reward.custom_reward_function.path`` names verl-focal's scorer (``pkg://verl_focal.reward``
    or a file ``.../verl_focal/reward.py``)."""
    reward = config.get("reward", None) if hasattr(config, "get") else None
    crf = reward.get("custom_reward_function", None) if reward is not None else None
    path = crf.get("path", None) if crf is not None else None
    if not path:
        return False
    path = str(path)
    return path.rstrip("/").endswith(("verl_focal.reward", "verl_focal/reward.py"))


def check_reward_kwargs(config: Any) -> None:
    """Unknown or out-of-range reward kwargs of our scorer are refused now, not in a reward worker at step 1."""
    if not uses_our_scorer(config):
        return
    from omegaconf import OmegaConf

    from verl_focal.reward import validate_reward_kwargs

    kwargs = config.reward.custom_reward_function.get("reward_kwargs", None)
    if kwargs is not None and not isinstance(kwargs, dict):
        kwargs = OmegaConf.to_container(kwargs, resolve=True)
    validate_reward_kwargs(kwargs)


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
    from omegaconf import OmegaConf

    if trainer not in SEPARATED_DEFAULTS:
        return
    for trainers, key, want, why in SEPARATED_REQUIREMENTS:
        if trainer in trainers:
            got = OmegaConf.select(config, key, default=None)
            if got != want or type(got) is not type(want):
                shown = str(want).lower() if isinstance(want, bool) else want
                raise ConfigError(f"{key}={got}: {why.format(trainer=trainer)}; set {key}={shown}")
    backend = OmegaConf.select(config, "actor_rollout_ref.rollout.checkpoint_engine.backend", default=None)
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


def _unknown_key_error(key: str, value: str | None, config_name: str, trainer: str = "ppo") -> Exception:
    from verl_focal.config.errors import ConfigError, did_you_mean

    parent, _, leaf = key.rpartition(".")
    ours = _schema_keys(parent)
    if ours is not None:  # one of our sections: a typo, never "use +"
        return ConfigError(
            f"unknown key {key}{did_you_mean(leaf, ours)}; valid keys under {parent}: {sorted(ours)}"
        )
    siblings: list[str] = []
    try:
        node = compose_config([], config_name=config_name, trainer=trainer)
        for part in parent.split(".") if parent else []:
            node = node[part]
        siblings = [str(k) for k in node.keys()]
    except Exception:  # noqa: BLE001 - only for the hint
        pass
    add = f"+{key}={value}" if value is not None else f"+{key}=VALUE"
    return ConfigError(
        f"unknown key {key}{did_you_mean(leaf, siblings)}; to add a new key to verl's config write {add}"
    )


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
    search = verl_config_searchpath()  # verl's YAML folder, so that composing does not import verl
    user_search = any(o.lstrip("+~").startswith("hydra.searchpath") for o in given)
    GlobalHydra.instance().clear()
    try:
        if TRAINERS[trainer] is None:
            if search and not user_search:
                given = [f"hydra.searchpath=['{search}']", *given]
            with initialize_config_module(config_module=CONFIG_MODULE, version_base=None):
                return compose(config_name=config_name, overrides=given)
        config_dir, name = _trainer_config_dir(trainer)
        verl_path = f"'{search}'" if search else "pkg://verl.trainer.config"
        # verl's configs of these trainers inherit values from ppo_trainer that their trainers refuse
        # (hybrid_engine=true, ...): the only working ones go first, so a user's own setting is checked instead
        ours = [f"hydra.searchpath=[{verl_path},pkg://{CONFIG_MODULE}]", "+sections=focal",
                *SEPARATED_DEFAULTS[trainer]]
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
            value = next(
                (o.split("=", 1)[1] for o in overrides or [] if "=" in o and o.split("=", 1)[0].lstrip("+~") == key),
                None,
            )
            raise _unknown_key_error(key, value, config_name, trainer) from e
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


def validate_all(config: DictConfig, trainer: str = "ppo") -> dict:
    """Our start-up checks + verl's own ``validate_config`` (+ :func:`check_separated_trainer` for a
    separated ``trainer``); raises ConfigError naming the key and the fix."""
    from hydra.errors import HydraException

    from verl_focal.config.errors import ConfigError
    from verl_focal.integration.compat import features_for, require

    require(features_for(trainer, ours=False), "python -m verl_focal.main_ppo" + (
        f" --trainer {trainer}" if trainer != "ppo" else ""))
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    sections = validate_start(config, trainer)
    check_separated_trainer(config, trainer)
    verl_view = _step_batch_view(config) if trainer == "fully_async" else config
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            validate_config(
                config=verl_view, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config)
            )
        except (AssertionError, ValueError, TypeError, KeyError, HydraException) as e:  # verl's own config checks
            raise ConfigError(f"verl's config check: {_one_line(e)}{_micro_batch_hint(e)}") from e
    for w in caught:  # verl warns with a stacklevel that points at this file: name verl as the source
        warnings.warn_explicit(f"verl: {w.message}", w.category, filename=VERL_WARNING_SOURCE, lineno=0,
                               module="verl.utils.config")
    return sections


def _step_batch_view(config: DictConfig) -> DictConfig:
    """A copy of a fully-async config with ``data.train_batch_size`` = the prompts one training step takes
    (``async_training.require_batches`` x ``actor.ppo_mini_batch_size``): verl's ``validate_config`` checks
    the synchronous trainer's batch arithmetic, and fully-async's own ``train_batch_size`` is 0."""
    from omegaconf import OmegaConf, open_dict

    view = OmegaConf.create(OmegaConf.to_container(config, resolve=False))
    with open_dict(view):
        view.data.train_batch_size = int(config.async_training.require_batches) * int(
            config.actor_rollout_ref.actor.ppo_mini_batch_size)
    return view


#: the "file" verl's config-check warnings are reported at (they come from verl's own code)
VERL_WARNING_SOURCE = "verl.utils.config.validate_config"

MICRO_BATCH_KEYS = (
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu",
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu",
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu",
)


def _micro_batch_hint(e: BaseException) -> str:
    """verl has no default for its per-GPU micro-batch sizes; say which keys to set, and why."""
    if "micro_batch_size" not in str(e):
        return ""
    return ("; verl has no default for the per-GPU micro-batch sizes (sequences per GPU per forward pass: "
            "memory, not results): set " + ", ".join(f"{k}=N" for k in MICRO_BATCH_KEYS)
            + ", or use_dynamic_bsz=true")


def _local_paths(config: Any) -> list[tuple[str, str, str]]:
    """(key, path, kind) of the local files and folders a run reads before its first step."""
    from omegaconf import OmegaConf

    def get(key: str) -> Any:
        return OmegaConf.select(config, key, default=None)

    out: list[tuple[str, str, str]] = []
    for key in ("data.train_files", "data.val_files"):
        val = get(key)
        files = [val] if isinstance(val, str) else list(val or [])
        for i, f in enumerate(files):
            out.append((key if isinstance(val, str) else f"{key}[{i}]", str(f), "data"))
    out.append(("actor_rollout_ref.model.path", get("actor_rollout_ref.model.path"), "model"))
    tok = get("actor_rollout_ref.model.tokenizer_path")
    if tok:
        out.append(("actor_rollout_ref.model.tokenizer_path", tok, "model"))
    if get("critic.enable"):
        out.append(("critic.model.path", get("critic.model.path"), "model"))
    return [(k, str(p), kind) for k, p, kind in out if p]


def looks_like_hub_name(name: str) -> bool:
    """``org/name`` (a Hugging Face hub id) rather than a path: one slash, no leading ``/ . ~``.

    >>> looks_like_hub_name("Qwen/Qwen2.5-7B"), looks_like_hub_name("/models/Qwen2.5-7B"), looks_like_hub_name("a/b/c")
    (True, False, False)
    """
    import re

    return bool(re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", name)) and not name.startswith((".", "~"))


def check_local_paths(config: Any) -> None:
    """Refuse, in one line, data files and model folders that do not exist on this machine or cannot be loaded.

    Every missing data file is named (a list of files: how many of how many, then all of them).  A local model
    folder needs ``config.json`` and a tokenizer that ``AutoTokenizer`` can load: ``tokenizer.json``, or the vocab
    files of a slow tokenizer (``tokenizer.model``, ``vocab.json``, ``vocab.txt``, ...); without
    ``actor_rollout_ref.model.tokenizer_path`` the tokenizer is read from the model folder.  Remote locations
    (``hdfs://``, ``s3://``, ...) are not checked, nor model names that look like hub ids (``Qwen/Qwen2.5-7B``)
    and are not a local path: the check runs offline.
    """
    import os

    from omegaconf import OmegaConf

    # a tokenizer folder holds tokenizer.json (fast) or the vocab files a slow tokenizer reads (AutoTokenizer
    # fails on a folder with only tokenizer_config.json)
    tokenizer_files = ("tokenizer.json", "tokenizer.model", "vocab.json", "vocab.txt", "spiece.model",
                       "sentencepiece.bpe.model", "tokenizer.tiktoken", "qwen.tiktoken")
    own_tokenizer = not OmegaConf.select(config, "actor_rollout_ref.model.tokenizer_path", default=None)

    def model_problem(key: str, local: str) -> str | None:
        if not os.path.isdir(local):
            return "a file, not a model folder"
        lacks = [] if os.path.isfile(os.path.join(local, "config.json")) or key.endswith("tokenizer_path") else [
            "config.json"]
        needs_tokenizer = key.endswith("tokenizer_path") or (key == "actor_rollout_ref.model.path" and own_tokenizer)
        if needs_tokenizer and not any(os.path.isfile(os.path.join(local, f)) for f in tokenizer_files):
            lacks.append("tokenizer files (tokenizer.json, or the vocab files of a slow tokenizer such as "
                         "tokenizer.model or vocab.json + merges.txt)")
        return f"the folder has no {' and no '.join(lacks)}" if lacks else None

    missing: list[str] = []
    lists: dict[str, list[tuple[str, str]]] = {}  # data.val_files -> (path, why) of its missing entries
    counts: dict[str, int] = {}
    bad_model = False
    for key, path, kind in _local_paths(config):
        if "://" in path:
            continue
        local = os.path.expanduser(path)
        base = key.split("[", 1)[0]
        counts[base] = counts.get(base, 0) + 1
        if kind == "model":
            if not os.path.exists(local):
                if not looks_like_hub_name(path):
                    missing.append(f"{key}={path} (no such folder, and not a hub name like Qwen/Qwen2.5-7B)")
                continue
            problem = model_problem(key, local)
            if problem:
                missing.append(f"{key}={path}: {problem}")
                bad_model = True
        elif not os.path.isfile(local):
            why = "a folder, not a file" if os.path.isdir(local) else "no such file"
            if "[" in key:
                lists.setdefault(base, []).append((path, why))
            else:
                missing.append(f"{key}={path} ({why})")
    for base, items in lists.items():  # a list of files: how many are missing, and every one of them
        whys = {why for _, why in items}
        named = ", ".join(p if len(whys) == 1 else f"{p} ({why})" for p, why in items)
        tail = f" ({next(iter(whys))})" if len(whys) == 1 else ""
        head = "" if len(items) == 1 else f"{len(items)} of {counts[base]} missing: "
        missing.append(f"{base}: {head}{named}{tail}")
    if missing:
        fixes = []
        if any(m.startswith("data.") for m in missing):
            fixes.append("make the data with `verl-focal prep-data deepscaler|math-subset|eval` (docs/recipes.md), or "
                         "for a dry run without real data `verl-focal prep-data example --out-dir DIR` (recipes: "
                         "DATA_DIR=DIR), or point data.* at existing files")
        if bad_model:
            fixes.append("a model folder needs config.json and its tokenizer (save both with save_pretrained), or "
                         "give a hub name like Qwen/Qwen2.5-7B")
        elif any(not m.startswith("data.") for m in missing):
            fixes.append("give an existing model folder or a hub name")
        raise ConfigError(f"missing local input: {'; '.join(missing)}; {'; and '.join(fixes)}")
