"""The hook around verl's ``compute_advantage``, and the DataProto trainers' own seams.

Every verl trainer reaches a registered estimator through one function,
``verl.trainer.ppo.ray_trainer.compute_advantage(data, adv_estimator, ..., config=algorithm)``, on a
``DataProto``: the legacy ``RayPPOTrainer`` calls it, and the v1 trainer's ``utils`` and the separated
trainers' module import it by name (from ``ray_trainer`` in 0.9.1).  :func:`hook_compute_advantage` wraps it once,
right after ``ray_trainer`` is imported, and binds the wrapper in the module that defines it and every verl module
that holds verl's function (:func:`follow_compute_advantage`), so the modules that import it afterwards, from
either module, bind the wrapper.  For verl's
own estimators the wrapper calls verl's function unchanged.  For ours it dispatches the estimator itself, as
verl's generic branch does (:func:`_dispatch`), with the step's context as an argument (``ctx=``):

* a context an outer hook's :func:`~verl_focal.step.seam.finish` installed (the v1 trainer's, the
  separated trainers', the demo's; read here, the contextvar's one reader) is completed from the DataProto:
  the sequence log-probs from its ``old_log_probs`` (``unlikely_grpo``), and, for v1 agent sessions with
  several outputs, the final-output rule (:func:`~verl_focal.step.sessions.spread_session_advantages`);
* without one (the legacy trainer), the wrapper runs the step seam itself, with the context built from the
  DataProto (:func:`~verl_focal.step.rows.dataproto_rows`: reward extras in ``non_tensor_batch``, texts
  decoded with the tokenizer our legacy TaskRunner hands over), and leaves the step's metrics in
  ``meta_info[METRICS_KEY]`` for the legacy trainer's ``compute_data_metrics`` (:func:`install_legacy_hook`).

The separated trainers (one-step-off, fully-async: ``SeparateRayPPOTrainer``) are hooked on their two
methods around the advantage (:func:`hook_separated_trainers`): ``_fit_compute_log_prob``, which runs
right after the rewards, starts the estimator's prefetch (:func:`~verl_focal.step.seam.begin`);
``_fit_compute_advantage`` finishes the step with verl's method (:func:`~verl_focal.step.seam.finish`), its
context read from the batch, the rewards' extras and the trainer's tokenizer (:func:`_separated_rows`), and
adds the step's metrics to the trainer's.  Every install step is guarded (:mod:`.compat`).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from verl_focal.estimators.context import AdvantageContext, current_context
from verl_focal.estimators.old_log_probs import OLD_LOG_PROBS
from verl_focal.integration.hooks.post_import import is_hooked, mark_hooked
from verl_focal.integration.registration import get_spec
from verl_focal.step.decode import BatchDecoder, decoder_for
from verl_focal.step.rows import TEXT_NEEDS, attach_old_log_probs, context_from_rows, dataproto_rows
from verl_focal.step.seam import begin, finish
from verl_focal.step.sessions import spread_session_advantages

__all__ = ["METRICS_KEY", "ON_DEVICE", "follow_compute_advantage", "hook_compute_advantage", "hook_separated_trainers",
           "install_legacy_hook", "wrap_compute_advantage"]

#: where the wrapper leaves a legacy step's metrics on the returned DataProto's ``meta_info``
METRICS_KEY = "verl_focal_metrics"
#: the step metric that says where verl handed ``compute_advantage`` the batch: 1 off the host, 0 on it
ON_DEVICE = "verl_focal/advantages_on_device"

#: the legacy trainer's tokenizer factory (and the tokenizer, once built), set by :func:`install_legacy_hook`
_LEGACY: dict[str, Any] = {}


def _legacy_decoder() -> BatchDecoder | None:
    if "factory" not in _LEGACY:
        return None
    if "tokenizer" not in _LEGACY:
        _LEGACY["tokenizer"] = _LEGACY["factory"]()
    return decoder_for(_LEGACY["tokenizer"])


def wrap_compute_advantage(orig: Callable) -> Callable:
    """``orig`` (verl's ``compute_advantage``) with the step around it for our estimators (module docstring)."""
    signature = inspect.signature(orig)

    @functools.wraps(orig)
    def compute_advantage(data, adv_estimator, *args, **kwargs):
        spec = get_spec(adv_estimator)
        if spec is None:
            return orig(data, adv_estimator, *args, **kwargs)
        config = signature.bind(data, adv_estimator, *args, **kwargs).arguments.get("config")
        if "response_mask" not in data.batch.keys():  # as verl's: trainers that do not compute it in fit
            from verl.trainer.ppo.ray_trainer import compute_response_mask

            data.batch["response_mask"] = compute_response_mask(data)
        ctx = current_context()
        if ctx is not None:  # an outer hook's step (v1, separated, the demo): complete it from the DataProto
            return _complete(ctx, data, adv_estimator, config)

        def build(step):  # the legacy trainer: the step's context from the DataProto itself
            decode = _legacy_decoder() if step.needs & TEXT_NEEDS else None
            return context_from_rows(dataproto_rows(data.batch, data.non_tensor_batch, decode), step.needs,
                                     step.settings.focal.acc_key)

        metrics: dict = {}
        out = finish(spec, config if config is not None else {}, build,
                     lambda c: _complete(c, data, adv_estimator, config), metrics)
        if "factory" in _LEGACY:  # our legacy TaskRunner: its compute_data_metrics hands them to verl's log
            out.meta_info[METRICS_KEY] = metrics
        return out

    return mark_hooked(compute_advantage)


def _dispatch(data, adv_estimator, config, ctx: AdvantageContext):
    """verl's generic branch of ``compute_advantage`` (``ray_trainer.py``, verl 0.9.1) for our estimator, with
    ``ctx`` as an argument: writes ``advantages`` and ``returns`` (bs, L) into ``data.batch``; returns ``data``.
    The keys it reads and writes are in :data:`~verl_focal.integration.compat.CONTRACT`."""
    from verl.trainer.ppo import core_algos

    kwargs = {"token_level_rewards": data.batch["token_level_rewards"], "response_mask": data.batch["response_mask"],
              "config": config}
    if "uid" in data.non_tensor_batch:  # optional in verl: our estimators refuse a batch without it
        kwargs["index"] = data.non_tensor_batch["uid"]
    data.batch["advantages"], data.batch["returns"] = core_algos.get_adv_estimator_fn(adv_estimator)(**kwargs, ctx=ctx)
    # where verl handed us the batch (docs/gpu.md: the host in each of verl 0.9.1's trainers); the host is "cpu"
    ctx.metrics[ON_DEVICE] = float(str(data.batch["advantages"].device) != "cpu")
    return data


def _complete(ctx: AdvantageContext, data, adv_estimator, config):
    """Our estimator on ``data`` for the step's ``ctx``: old log-probs from the DataProto when the estimator needs
    them; the final-output rule when ``ctx`` holds agent sessions' final outputs."""
    needs = get_spec(adv_estimator).needs_for(ctx.settings or config or {})

    def run(rows):  # the rows of ctx: all of data, or the sessions' final outputs
        if OLD_LOG_PROBS in needs:
            attach_old_log_probs(ctx, rows.batch)
        return _dispatch(rows, adv_estimator, config, ctx)

    if ctx.sessions is None:
        return run(data)
    ctx.metrics["verl_focal/session_outputs"] = float(len(ctx.sessions[1]))
    ctx.metrics["verl_focal/sessions"] = float(len(ctx.sessions[0]))
    return spread_session_advantages(data, ctx.sessions, run)


def hook_compute_advantage() -> None:
    """Wrap ``verl.trainer.ppo.ray_trainer.compute_advantage`` (idempotent) and bind the wrapper wherever a verl
    module holds verl's function (:func:`follow_compute_advantage`); the plugin runs this right after
    ``ray_trainer`` is imported."""
    rt = importlib.import_module("verl.trainer.ppo.ray_trainer")
    if not is_hooked(rt.compute_advantage):
        rt.compute_advantage = wrap_compute_advantage(rt.compute_advantage)
    follow_compute_advantage()


def follow_compute_advantage() -> list[str]:
    """Bind the wrapper in every imported verl module whose global ``compute_advantage`` is verl's function: the
    module that defines it (``ray_trainer`` in 0.9.1; ``trainer_utils`` after verl PR #7237, which re-exports it
    from ``ray_trainer``), so that modules importing it later get the wrapper, and the modules that imported it
    already (the v1 ``utils``, the separated trainers').  Returns the modules rebound."""
    wrapper = sys.modules["verl.trainer.ppo.ray_trainer"].compute_advantage
    if not is_hooked(wrapper):
        return []
    orig, done = inspect.unwrap(wrapper), []
    for name, mod in list(sys.modules.items()):
        if name.partition(".")[0] == "verl" and getattr(mod, "__dict__", {}).get("compute_advantage") is orig:
            mod.compute_advantage = wrapper
            done.append(name)
    return done


def install_legacy_hook(tokenizer_factory: Callable[[], Any]) -> None:
    """The legacy trainer (``trainer.use_v1=false``) through our TaskRunner: texts decoded with the tokenizer
    ``tokenizer_factory()`` builds on first need, and ``compute_data_metrics`` wrapped to log the step's
    metrics (idempotent)."""
    from verl.trainer.ppo import ray_trainer

    _LEGACY.clear()
    _LEGACY["factory"] = tokenizer_factory
    orig = ray_trainer.compute_data_metrics
    if is_hooked(orig):
        return

    @functools.wraps(orig)
    def compute_data_metrics(batch, *args, **kwargs):
        m = orig(batch, *args, **kwargs)
        m.update(batch.meta_info.pop(METRICS_KEY, None) or {})
        return m

    ray_trainer.compute_data_metrics = mark_hooked(compute_data_metrics)


def _separated_rows(trainer, batch):
    """The rows of a separated trainer's batch with the reward extras its ``_fit_compute_advantage`` merges."""
    ntb = dict(batch.non_tensor_batch)
    ntb.update({k: np.array(v) for k, v in (trainer.reward_extra_infos_dict or {}).items()})
    return dataproto_rows(batch.batch, ntb, decoder_for(trainer.tokenizer), "separated-dataproto")


def hook_separated_trainers() -> None:
    """Wrap ``SeparateRayPPOTrainer._fit_compute_log_prob`` and ``_fit_compute_advantage`` (idempotent); the
    plugin runs this as soon as ``verl.experimental.separation.ray_trainer`` is imported, in whichever process
    (the fully-async trainer is a Ray actor of its own)."""
    from verl.experimental.separation.ray_trainer import SeparateRayPPOTrainer as cls

    follow_compute_advantage()  # the module-global compute_advantage its step calls (compat.step_problem)
    if is_hooked(cls._fit_compute_advantage):
        return
    orig_log_prob, orig_adv = cls._fit_compute_log_prob, cls._fit_compute_advantage

    def build(trainer, batch):
        return lambda step: context_from_rows(_separated_rows(trainer, batch), step.needs, step.settings.focal.acc_key)

    @functools.wraps(orig_log_prob)
    def _fit_compute_log_prob(self, batch):
        spec = get_spec(self.config.algorithm.adv_estimator)
        if spec is not None and spec.prefetch is None:  # the DataProto is cheap to read: nothing to start early
            spec = None
        begin(self, spec, self.config.algorithm, lambda: tuple(batch.non_tensor_batch["uid"]), build(self, batch))
        return orig_log_prob(self, batch)

    @functools.wraps(orig_adv)
    def _fit_compute_advantage(self, batch):
        spec = get_spec(self.config.algorithm.adv_estimator)
        if spec is None:
            return orig_adv(self, batch)
        return finish(spec, self.config.algorithm, build(self, batch), lambda ctx: orig_adv(self, batch),
                      self.metrics, self, tuple(batch.non_tensor_batch["uid"]))

    cls._fit_compute_log_prob = mark_hooked(_fit_compute_log_prob)
    cls._fit_compute_advantage = mark_hooked(_fit_compute_advantage)
