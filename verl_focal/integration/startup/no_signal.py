"""Settings with which a run trains nothing, or trains a part nothing reads: refused at start-up with the number
that shows it (or warned about, where some signal is left).

* :func:`check_group_size`: ``actor_rollout_ref.rollout.n`` below what the estimator needs: our estimators'
  :attr:`~verl_focal.estimators.spec.EstimatorSpec.min_rollouts`, and ``n >= 2`` for every estimator of verl's
  that groups rows by prompt (its function takes verl's ``index``; found in verl's registry, not listed here);
* :func:`check_focal_signal`: the largest focal weight ``(1 - 1/N)^γ`` (one correct rollout of N) of an estimator
  that reads ``algorithm.focal.gamma``: every advantage is at most that share of GRPO's;
* :func:`check_pf_ppo`: ``algorithm.use_pf_ppo=true``, which verl 0.9.1's ``compute_advantage`` applies only
  in its GAE branch: with any other estimator (ours included) nothing reads it; with GAE on the v1 trainer it
  resamples rows that are then written back under the original rows' keys (verl issue #7956: advantages
  land on other rows).  tests/integration/test_pf_ppo_pairing_on_cpu.py pins both;
* :func:`check_critic`: ``critic.enable=true`` under an estimator whose function takes no ``values`` (only GAE
  does, in verl 0.9.1): the critic would be trained on the GPU and never read.

Each raises :class:`~verl_focal.config.errors.ConfigError` naming the key, the number and the fix; the warnings
are returned as lines.
"""

from __future__ import annotations

import inspect
from typing import Any

from verl_focal.config.errors import ConfigError
from verl_focal.config.key_names import config_get

__all__ = ["check_group_size", "check_focal_signal", "check_critic", "check_pf_ppo", "largest_focal_weight", "RECIPE_N",
           "FOCAL_REFUSE_BELOW", "FOCAL_WARN_BELOW"]

RECIPE_N = 8  # the rollouts per prompt of the recipes (recipes/deepscaler/*.sh)
#: the largest focal weight below which nothing trains (refused), and below which little does (a warning)
FOCAL_REFUSE_BELOW = 0.01
FOCAL_WARN_BELOW = 0.1


def _verl_fn(est: Any) -> Any:
    """verl's registered function for ``est`` (None when verl has none by that name)."""
    try:
        from verl.trainer.ppo import core_algos
    except ImportError:
        return None
    return getattr(core_algos, "ADV_ESTIMATOR_REGISTRY", {}).get(str(getattr(est, "value", est)))


def _takes(fn: Any, name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def check_group_size(config: Any, spec: Any) -> None:
    """Refuse ``actor_rollout_ref.rollout.n`` below ``spec.min_rollouts`` (our estimator ``spec``), or 1 for an
    estimator of verl's that normalises within a prompt's group (a group of one has nothing to compare with)."""
    n = config_get(config, "actor_rollout_ref.rollout.n")
    if n is None:
        return
    est = config_get(config, "algorithm.adv_estimator")
    if spec is None and distills_without_task_rewards(config):
        return  # the distillation loss alone trains: no group compares rewards
    if spec is None:
        if int(n) < 2 and is_group_relative(config, None):
            raise ConfigError(
                f"actor_rollout_ref.rollout.n={n}: {getattr(est, 'value', est)} compares each response with the "
                "others of its prompt's group, and a group of 1 has none (verl gives it mean 0 and std 1: the "
                "estimator becomes REINFORCE on raw rewards); set actor_rollout_ref.rollout.n="
                f"{RECIPE_N} (the recipes' value)")
        return
    if int(n) >= spec.min_rollouts:
        return
    why = ("with one rollout per prompt every advantage is 0 and nothing trains" if spec.min_rollouts <= 2 else
           "its credit is redistributed among the correct rollouts of a group that holds >= 2 of them and a "
           "wrong one; with fewer it is plain GRPO")
    raise ConfigError(f"actor_rollout_ref.rollout.n={n}: {spec.name} needs rollout.n >= {spec.min_rollouts} "
                      f"({why}); set actor_rollout_ref.rollout.n={max(RECIPE_N, spec.min_rollouts)} "
                      "(the recipes' value)")


def distills_without_task_rewards(config: Any) -> bool:
    """verl's on-policy distillation with the task rewards off (``distillation.enabled=true``,
    ``distillation.distillation_loss.use_task_rewards=false``): the teacher's loss alone trains, so a group of one
    rollout is what such a run means (verl ``trainer/config/distillation/distillation.yaml``)."""
    return bool(config_get(config, "distillation.enabled", False)) and config_get(
        config, "distillation.distillation_loss.use_task_rewards", True) is False


def largest_focal_weight(n: int, gamma: float) -> float:
    """``(1 - 1/n)^γ``: the focal weight ``(1 - p̂)^γ`` (F-GRPO Sec. 3) of a group of ``n`` with one correct
    rollout, the largest any group that trains gets (all-wrong and all-right groups have advantage 0)."""
    return (1.0 - 1.0 / n) ** gamma if n >= 2 else 0.0


def check_focal_signal(config: Any, spec: Any, sections: dict) -> list[str]:
    """Refuse a γ whose largest focal weight at the configured N is below :data:`FOCAL_REFUSE_BELOW`; return a
    warning below :data:`FOCAL_WARN_BELOW`."""
    if spec is None or not spec.reads("focal", "gamma") or "focal" not in sections:
        return []
    n = config_get(config, "actor_rollout_ref.rollout.n")
    gamma = float(sections["focal"].gamma)
    if n is None or int(n) < 2 or gamma == 0:
        return []
    n = int(n)
    w = largest_focal_weight(n, gamma)
    said = (f"algorithm.focal.gamma={gamma:g}: the largest focal weight at actor_rollout_ref.rollout.n={n} is "
            f"(1-1/{n})^{gamma:g} = {w:.3g}, so every advantage is at most {w:.3g} x GRPO's")
    if w < FOCAL_REFUSE_BELOW:
        raise ConfigError(f"{said}: nothing trains; the paper sweeps γ in 0.5-2 (at N={n}: weights up to "
                          f"{largest_focal_weight(n, 2.0):.2f}); set algorithm.focal.gamma=0.5 (the default)")
    if w < FOCAL_WARN_BELOW:
        return [f"{said}: little trains (the paper sweeps γ in 0.5-2)"]
    return []


def check_critic(config: Any) -> None:
    """Refuse ``critic.enable=true`` when the estimator reads no values (its function takes no ``values``)."""
    if config_get(config, "critic.enable") is not True:
        return
    est = config_get(config, "algorithm.adv_estimator")
    fn = _verl_fn(est)
    if fn is None or _takes(fn, "values"):
        return
    name = getattr(est, "value", est)
    raise ConfigError(f"critic.enable=true: algorithm.adv_estimator={name} never reads a critic's values (only an "
                      "estimator that takes values does: gae), so the run would train a critic on the GPU for "
                      "nothing; remove critic.enable=true (or set critic.enable=false)")


def check_pf_ppo(config: Any) -> None:
    """Refuse ``algorithm.use_pf_ppo=true`` where verl does not apply it (a non-GAE estimator: read by nothing)
    or applies it wrongly (GAE on the v1 trainer, verl #7956)."""
    if config_get(config, "algorithm.use_pf_ppo") is not True:
        return
    est = config_get(config, "algorithm.adv_estimator")
    name = str(getattr(est, "value", est))
    fn = _verl_fn(est)
    if fn is not None and not _takes(fn, "values"):
        raise ConfigError(f"algorithm.use_pf_ppo=true: verl 0.9.1 resamples rows by reward only for gae, so with "
                          f"algorithm.adv_estimator={name} nothing reads it and the run would go on as without it; "
                          "remove algorithm.use_pf_ppo=true")
    if config_get(config, "trainer.use_v1") is not False:
        raise ConfigError("algorithm.use_pf_ppo=true with gae on verl's v1 trainer (trainer.use_v1=true, the default) "
                          "writes the resampled rows' advantages back under the original rows (verl issue #7956): "
                          "each advantage would train another response; set trainer.use_v1=false, or remove "
                          "algorithm.use_pf_ppo=true")


def is_group_relative(config: Any, spec: Any) -> bool:
    """Whether the run's estimator compares a prompt's responses with each other: ours (``spec``), or verl's whose
    registered function takes ``index`` (grpo, rloo, ...); GAE and REINFORCE++ do not."""
    if spec is not None:
        return True
    fn = _verl_fn(config_get(config, "algorithm.adv_estimator"))
    return fn is not None and _takes(fn, "index")
