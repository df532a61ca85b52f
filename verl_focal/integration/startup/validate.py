"""Start-up validation: everything about the config that can be checked before Ray, workers or models start.

One function, :func:`validate_start`, used by every way a run can start:
``verl-focal check``, ``python -m verl_focal.main_ppo`` (and ``--dry-run``), our
TaskRunners, and the hooked trainer's constructor (stock ``verl.trainer.main_ppo`` with
``trainer.v1.trainer_mode=focal_sync``).  It raises
:class:`~verl_focal.config.errors.ConfigError` naming the key, the value and the fix:

* ``algorithm.adv_estimator`` is a known estimator (ours and verl's listed, did-you-mean),
  and, if it is one of our names, verl's registry really maps it to our function and the verl names
  its hooks need exist (``compat.require``);
* our ``algorithm.*`` sections (ranges, choices, unknown keys);
* settings with which nothing trains (:mod:`~verl_focal.integration.startup.no_signal`: group size, the largest
  focal weight, a critic no estimator reads);
* the reward function, verl's own enumerations (:mod:`~verl_focal.integration.startup.verl_checks`); a wandb logger
  without a W&B key here (:mod:`~verl_focal.config.tracking`);
* for an estimator that partitions: the partitioner resolves (registered name, or an
  importable ``pkg.module:Class`` that is a Partitioner), its kwargs bind, the cue
  catalogue loads with its backend; the judge gets its offline checks.  Nothing is built,
  no network.

:func:`validate_all` is :func:`validate_start` + verl's own ``validate_config``.  Where the other classes of
check live: composition and the trainers in :mod:`~verl_focal.integration.startup.compose`; keys the user set that
nothing reads in :mod:`~verl_focal.integration.startup.unread`; local data files and model folders in
:mod:`~verl_focal.data.local_inputs`.  Nothing here imports from an entry point.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from verl_focal.config.errors import ConfigError, did_you_mean
from verl_focal.config.key_names import config_get
from verl_focal.integration.startup.compose import check_separated_trainer

if TYPE_CHECKING:
    from omegaconf import DictConfig

__all__ = ["validate_start", "validate_all", "check_estimator_name", "check_partitioner"]


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


def check_partitioner(cue: Any, nnodes: int = 1) -> None:
    """Resolve ``algorithm.cue.partitioner`` and check its kwargs, before any step (no network); for the judge on
    ``nnodes`` > 1, warn about settings that name one node's resources."""
    from verl_focal.partition.base import check_partitioner_kwargs, resolve_partitioner
    from verl_focal.partition.cues import get_extractor

    target = resolve_partitioner(cue.partitioner)
    # the strategy-cue catalogue (used by strategy_cue, random and the judge's fallback): name, file, backend
    _check_cue_set(cue.cue_set)
    get_extractor(cue.cue_set, cue.backend, cue.extract_timeout)
    if cue.partitioner == "judge":
        from verl_focal.partition.judge.check import check_judge, judge_topology_warnings

        problems = check_judge(cue.judge, network=False)  # offline subset; `verl-focal check` goes online
        if problems:
            raise ConfigError("algorithm.cue.judge: " + "; ".join(problems))
        for line in judge_topology_warnings(cue.judge, nnodes):
            warnings.warn(line, UserWarning, stacklevel=3)
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
    from verl_focal.config.ray_env import check_env_vars
    from verl_focal.config.schema import validate_algorithm_config
    from verl_focal.config.tracking import check_logger
    from verl_focal.integration.compat import features_for, missing, require
    from verl_focal.integration.registration import get_spec, register_all, run_startup_check
    from verl_focal.integration.startup.no_signal import (
        check_critic,
        check_focal_signal,
        check_group_size,
        check_pf_ppo,
    )
    from verl_focal.integration.startup.verl_checks import check_reward_function, check_verl_choices

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
    for line in check_focal_signal(config, spec, sections):
        warnings.warn(line, UserWarning, stacklevel=2)
    check_critic(config)
    check_pf_ppo(config)
    run_startup_check(config)  # checks across sections, e.g. algorithm.passk.k vs actor_rollout_ref.rollout.n
    if spec is not None and spec.prepare is not None:  # an estimator with a group-level step partitions
        try:
            check_partitioner(sections["cue"], int(config_get(config, "trainer.nnodes", 1) or 1))
        except ConfigError:
            raise
        except ValueError as e:  # a consumer's own check (catalogue file, backend, ...)
            raise ConfigError(str(e)) from None
    check_reward_kwargs(config)
    check_logger(config)
    check_env_vars(config)
    from verl_focal.config.no_update import check_update
    from verl_focal.integration.startup.no_signal import is_group_relative

    check_update(config, group_relative=is_group_relative(config, spec))
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
    path = config_get(config, "reward.custom_reward_function.path")
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

    kwargs = config_get(config, "reward.custom_reward_function.reward_kwargs")
    if kwargs is not None and not isinstance(kwargs, dict):
        kwargs = OmegaConf.to_container(kwargs, resolve=True)
    validate_reward_kwargs(kwargs)


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
        if str(w.message).startswith("Disabled critic"):  # critic.enable unset, estimator not gae
            continue  # verl's note that a critic-free estimator has no critic: what every run of ours does
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
