"""When verl 0.9.1 reads a key: the keys that exist in its config but are read only under a condition.

A key the user sets that nothing reads under the run's configuration is refused at start-up, like a key that exists
in no config (:mod:`verl_focal.integration.startup.unread`): a "KL control" with ``kl_loss_coef`` but no
``use_kl_loss=true`` is plain GRPO, and ``critic.*`` under a critic-free estimator changes nothing.  Each entry of
:data:`LIVENESS` names the keys, the condition under which verl reads them, and where in verl that condition
sits; ``tests/startup/test_liveness_against_verl.py`` checks every entry against verl's own code.  No verl import.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from verl_focal.config.key_names import config_get

__all__ = ["DECIDING_KEYS", "FOCAL_ESTIMATORS", "LIVENESS", "Live", "SAMPLING_ROLLOUTS", "dead_key_findings",
           "dead_key_problems", "entry_for", "is_live", "uses_critic"]

#: the rollouts of verl 0.9.1 that read ``rollout.do_sample`` (the others, vLLM and SGLang behind the agent loop,
#: sample at ``temperature`` always)
SAMPLING_ROLLOUTS = ("hf", "naive")


#: our estimators that read ``algorithm.focal.gamma`` (tests/startup/test_liveness_against_verl.py checks it against
#: the specs)
FOCAL_ESTIMATORS = ("f_grpo", "f_cue_grpo")
#: verl's estimators that read ``algorithm.gamma`` (GAE through ``compute_advantage``, REINFORCE++ through its
#: ``config``) and ``algorithm.lam`` (GAE only)
GAMMA_ESTIMATORS = ("gae", "reinforce_plus_plus")
LAM_ESTIMATORS = ("gae",)
#: the keys the conditions below read: a hint for a mistyped key is ranked under the user's values of these
DECIDING_KEYS = ("algorithm.adv_estimator", "critic.enable", "actor_rollout_ref.actor.use_kl_loss",
                 "algorithm.use_kl_in_reward", "actor_rollout_ref.rollout.name")


def _est(config: Any) -> str:
    est = config_get(config, "algorithm.adv_estimator", "")
    return str(getattr(est, "value", est))


def _gamma_fix(config: Any) -> str:
    ours = _est(config).removeprefix("verl_focal.") in FOCAL_ESTIMATORS
    return "for the focal exponent write algorithm.focal.gamma instead" if ours else "remove it"


def uses_critic(config: Any) -> bool:
    """verl's ``need_critic``: ``critic.enable`` when set, else whether the estimator is GAE."""
    enable = config_get(config, "critic.enable", None)
    return bool(enable) if enable is not None else _est(config) == "gae"


def _kl_loss(config: Any) -> bool:
    return bool(config_get(config, "actor_rollout_ref.actor.use_kl_loss", False))


def _kl_in_reward(config: Any) -> bool:
    return bool(config_get(config, "algorithm.use_kl_in_reward", False))


def _reads_do_sample(config: Any) -> bool:
    return str(config_get(config, "actor_rollout_ref.rollout.name", "")) in SAMPLING_ROLLOUTS


def _is_false(value: str | None) -> bool:
    return str(value).strip().lower() in ("false", "0", "no", "off")


def _is_zero(value: str | None) -> bool:
    try:
        return float(str(value)) == 0.0
    except ValueError:
        return False


#: verl's two KL switches: the KL loss on the actor, the KL penalty in the reward
KL_SWITCHES = ("actor_rollout_ref.actor.use_kl_loss", "algorithm.use_kl_in_reward")


def _kl_harmless(switch: str) -> Callable[[Any, str, str | None, dict], str | None]:
    """A KL coefficient of 0 asks for what happens anyway; a command line that sets ``switch`` off, or sets the KL
    switches itself (verl's scripts pass one coefficient to both KL terms and choose the term by its switch), shows
    it knows which KL acts."""
    def harmless(c: Any, key: str, value: str | None, given: dict) -> str | None:
        if key.endswith("coef") and _is_zero(value):
            return "a coefficient of 0 adds no KL term"
        chosen = [k for k in KL_SWITCHES if k in given]
        if switch in given and _is_false(given[switch]):
            return f"{switch}={given[switch]} is set on the same command line"
        if chosen:
            return f"the command line chooses its KL term itself ({chosen[0]}={given[chosen[0]]})"
        return None
    return harmless


def _never(c: Any, key: str, value: str | None, given: dict) -> str | None:
    return None


def _samples_anyway(c: Any, key: str, value: str | None, given: dict) -> str | None:
    """``do_sample=true`` where verl's engine samples at its temperature always: what the user asked for happens."""
    return "the engine samples at its temperature, as do_sample=true asks" if not _is_false(value) else None


#: the critic keys that describe what a critic would learn (a learning rate set there is the actor's, mistyped);
#: the others (strategy, FSDP, micro-batches, model) say only how one would run
_CRITIC_TRAINING = ("critic.optim", "critic.ppo_epochs", "critic.cliprange_value", "critic.loss_agg_mode")


def _critic_harmless(c: Any, key: str, value: str | None, given: dict) -> str | None:
    if "critic.enable" in given and _is_false(given["critic.enable"]):
        return f"critic.enable={given['critic.enable']} is set on the same command line"
    if any(key == p or key.startswith(p + ".") for p in _CRITIC_TRAINING):
        return None
    return "it says only how a critic would run, and none runs"


def _discount_harmless(c: Any, key: str, value: str | None, given: dict) -> str | None:
    """GAE's γ and λ are mistaken for the focal γ only by an estimator that reads ``algorithm.focal.gamma``."""
    if _est(c).removeprefix("verl_focal.") in FOCAL_ESTIMATORS:
        return None
    return f"algorithm.adv_estimator={_est(c)} reads no discount"


@dataclass(frozen=True)
class Live:
    """Keys (``prefixes``: a key, or a section whose every key is meant) that verl reads only when ``reads(config)``.

    ``when``: the condition in words; ``fix``: the way out, given the config (never a key this table calls dead
    under the config it names); ``verl``: where verl 0.9.1 decides it (``module:function``), for the test.
    ``harmless(config, key, value, given)``: why setting the key here cannot be a belief that it acts (a value that
    asks for what happens anyway, a switch the user's own command line ``given`` sets off), or None: such a key is
    a warning, not a refusal (verl runs the command as its author meant).
    """

    prefixes: tuple[str, ...]
    reads: Callable[[Any], bool]
    when: str
    fix: Callable[[Any], str]
    verl: str
    harmless: Callable[[Any, str, str | None, dict], str | None] = _never

    def covers(self, key: str) -> bool:
        return any(key == p or key.startswith(p + ".") for p in self.prefixes)


LIVENESS: tuple[Live, ...] = (
    Live(("critic",), uses_critic,
         "verl builds a critic only with critic.enable=true or algorithm.adv_estimator=gae",
         lambda c: f"remove it: algorithm.adv_estimator={_est(c)} trains no critic (for the actor's learning rate, "
                   "actor_rollout_ref.actor.optim.lr)",
         "verl.trainer.ppo.utils:need_critic", _critic_harmless),
    Live(("actor_rollout_ref.actor.kl_loss_coef", "actor_rollout_ref.actor.kl_loss_type"), _kl_loss,
         "verl adds the KL loss only with actor_rollout_ref.actor.use_kl_loss=true",
         lambda c: "add actor_rollout_ref.actor.use_kl_loss=true (as recipes/deepscaler/grpo_kl.sh does), or remove it",
         "verl.workers.utils.losses:ppo_loss", _kl_harmless("actor_rollout_ref.actor.use_kl_loss")),
    Live(("algorithm.kl_ctrl", "algorithm.kl_penalty"), _kl_in_reward,
         "verl applies the KL penalty to the reward only with algorithm.use_kl_in_reward=true",
         lambda c: "add algorithm.use_kl_in_reward=true, or remove it",
         "verl.trainer.ppo.ray_trainer:RayPPOTrainer.fit", _kl_harmless("algorithm.use_kl_in_reward")),
    Live(("algorithm.gamma",), lambda c: _est(c) in GAMMA_ESTIMATORS,
         "it is the discount of GAE and REINFORCE++, which only those estimators read", _gamma_fix,
         "verl.trainer.ppo.ray_trainer:compute_advantage", _discount_harmless),
    Live(("algorithm.lam",), lambda c: _est(c) in LAM_ESTIMATORS,
         "it is GAE's λ, which only algorithm.adv_estimator=gae reads", lambda c: "remove it",
         "verl.trainer.ppo.ray_trainer:compute_advantage", _discount_harmless),
    Live(("actor_rollout_ref.rollout.do_sample",), _reads_do_sample,
         "no vLLM or SGLang rollout of verl 0.9.1 reads it: they always sample at rollout.temperature",
         lambda c: "remove it (greedy training rollouts would make each group's responses identical, and every "
                   "advantage 0)",
         "verl.workers.rollout.hf_rollout:HFRollout.generate_sequences", _samples_anyway),
    Live(("actor_rollout_ref.rollout.val_kwargs.do_sample",), _reads_do_sample,
         "no vLLM or SGLang rollout of verl 0.9.1 reads it: validation samples at val_kwargs.temperature",
         lambda c: "for greedy validation write actor_rollout_ref.rollout.val_kwargs.temperature=0 instead",
         "verl.trainer.ppo.ray_trainer:RayPPOTrainer._validate", _samples_anyway),
)


def entry_for(key: str) -> Live | None:
    """The :data:`LIVENESS` entry that covers ``key``, if any."""
    return next((e for e in LIVENESS if e.covers(key)), None)


def is_live(key: str, config: Any) -> bool:
    """Whether verl reads ``key`` under ``config`` as far as :data:`LIVENESS` knows (a key it does not cover: yes)."""
    e = entry_for(key)
    return e is None or bool(e.reads(config))


def dead_key_findings(config: Any, keys: Iterable[tuple[str, str | None]]) -> tuple[list[str], list[str]]:
    """(refusals, warnings): one line for each ``(key, value)`` the user set that verl does not read under
    ``config`` -- the key, the condition, the fix; a warning where :attr:`Live.harmless` says why it cannot act."""
    keys = list(keys)
    given = {k: v for k, v in keys}
    problems, warnings = [], []
    for key, value in keys:
        e = entry_for(key)
        if e is None or e.reads(config):
            continue
        why = e.harmless(config, key, value, given)
        if why:
            warnings.append(f"{key}={value} is not read under this configuration ({e.when}); harmless here: {why}")
        else:
            problems.append(f"{key}={value} is not read under this configuration ({e.when}): the run would go on "
                            f"as if it were not set; {e.fix(config)}")
    return problems, warnings


def dead_key_problems(config: Any, keys: Iterable[tuple[str, str | None]]) -> list[str]:
    """The refusals of :func:`dead_key_findings`."""
    return dead_key_findings(config, keys)[0]
