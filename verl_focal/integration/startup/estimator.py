"""The pre-flight's rule functions about the estimator, its sections, our scorer and verl's own config.

:func:`check_estimator_name` (a known estimator, ours behind our names), :func:`check_partitioner` (the cue
partitioner resolves, its kwargs bind, the catalogue loads; the judge's offline checks), :func:`check_reward_kwargs`
(our scorer's kwargs) and :func:`check_verl_config` (verl's own ``validate_config``): rows of
:data:`~verl_focal.integration.startup.rules.RULES`.  Each raises :class:`~verl_focal.config.errors.ConfigError`
naming the key, the value and the fix.  Nothing here imports from an entry point.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from verl_focal.config.errors import ConfigError, did_you_mean
from verl_focal.config.key_names import config_get

if TYPE_CHECKING:
    from omegaconf import DictConfig

__all__ = ["check_estimator_name", "check_partitioner", "check_reward_kwargs", "check_verl_config", "is_our_name",
           "uses_our_scorer"]


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
    """Resolve ``algorithm.cue.partitioner`` and check its kwargs, before any step (no network); the judge's
    offline checks (its topology on several nodes is the ``judge_topology`` rule's)."""
    from verl_focal.partition.base import check_partitioner_kwargs, resolve_partitioner
    from verl_focal.partition.cues import get_extractor

    target = resolve_partitioner(cue.partitioner)
    # the strategy-cue catalogue (used by strategy_cue, random and the judge's fallback): name, file, backend
    _check_cue_set(cue.cue_set)
    get_extractor(cue.cue_set, cue.backend, cue.extract_timeout)
    if cue.partitioner == "judge":
        from verl_focal.partition.judge.check import check_judge

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


def check_verl_config(config: DictConfig, trainer: str = "ppo") -> list[str]:
    """verl's own ``validate_config`` on ``config`` (for fully-async, on its step batch's view), its refusal as a
    :class:`ConfigError` in one line; returns verl's warnings as lines naming verl."""
    from hydra.errors import HydraException
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    verl_view = _step_batch_view(config) if trainer == "fully_async" else config
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            validate_config(
                config=verl_view, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config)
            )
        except (AssertionError, ValueError, TypeError, KeyError, HydraException) as e:  # verl's own config checks
            if not _engine_absent_here(e, config):
                raise ConfigError(f"verl's config check: {_one_line(e)}{_micro_batch_hint(e)}") from e
            caught.append(warnings.WarningMessage(ENGINE_ABSENT_LINE, UserWarning, __file__, 0))
    # "Disabled critic": verl's note that a critic-free estimator has no critic, what every run of ours does
    return [f"verl: {w.message}" for w in caught if not str(w.message).startswith("Disabled critic")]


#: verl's LoRA-rank check, the last of ``validate_config``, imports the vLLM engine (verl.workers.rollout.vllm_rollout
#: .utils); where the engine is not installed everything before it has passed
ENGINE_ABSENT_LINE = ("the vLLM engine is not installed here, so verl's LoRA-rank check (its last config check, "
                      "which imports vLLM) runs where the rollout runs, in the TaskRunner before any model loads")


def _engine_absent_here(e: BaseException, config: DictConfig) -> bool:
    """Whether ``e`` is verl's refusal to import a vLLM that is not installed in this process, raised by its LoRA
    check of a vLLM rollout (verl/utils/config.py: the LoRA block closes ``validate_config``)."""
    import importlib.util

    if importlib.util.find_spec("vllm") is not None:
        return False
    name = config_get(config, "actor_rollout_ref.rollout.name")
    return name == "vllm" and "vllm version None not supported" in str(e)


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
