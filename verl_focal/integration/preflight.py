"""Start-up validation: everything that can be checked before Ray, workers or models start.

One function, :func:`validate_start`, used by every way a run can start:
``verl-focal check``, ``python -m verl_focal.main_ppo`` (and ``--dry-run``), our
TaskRunners, and the hooked trainer's constructor (stock ``verl.trainer.main_ppo`` with
``trainer.v1.trainer_mode=focal_sync``).  It raises
:class:`~verl_focal.config.errors.ConfigError` naming the key, the value and the fix:

* ``algorithm.adv_estimator`` is a known estimator (ours and verl's listed, did-you-mean),
  and, if it is one of our names, verl's registry really maps it to our function;
* our ``algorithm.focal`` / ``algorithm.cue`` sections (ranges, choices, unknown keys);
* for an estimator that partitions: the partitioner resolves (registered name, or an
  importable ``pkg.module:Class`` that is a Partitioner), its kwargs bind, the cue
  catalogue loads with its backend; the judge gets its offline checks.  Nothing is built,
  no network.
"""

from __future__ import annotations

from typing import Any

from verl_focal.config.errors import ConfigError, did_you_mean

__all__ = ["validate_start", "check_estimator_name", "check_partitioner"]


def _verl_estimator_names() -> list[str]:
    from verl.trainer.ppo import core_algos

    return sorted(set(core_algos.ADV_ESTIMATOR_REGISTRY) | {e.value for e in core_algos.AdvantageEstimator})


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


def validate_start(config: Any) -> dict:
    """Everything of ours that can fail at step 1, checked now; returns the validated sections."""
    from verl_focal.config.schema import validate_algorithm_config
    from verl_focal.integration.registration import get_spec, register_all, run_startup_check

    register_all()
    algorithm = config.algorithm
    est = algorithm.get("adv_estimator", None)
    check_estimator_name(est)
    sections = validate_algorithm_config(algorithm)
    run_startup_check(config)  # checks across sections, e.g. algorithm.passk.k vs actor_rollout_ref.rollout.n
    spec = get_spec(est)
    if spec is not None and spec.prepare is not None:  # an estimator with a group-level step partitions
        try:
            check_partitioner(sections["cue"])
        except ConfigError:
            raise
        except ValueError as e:  # a consumer's own check (catalogue file, backend, ...)
            raise ConfigError(str(e)) from None
    check_reward_kwargs(config)
    return sections


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
