"""The hook around verl's ``compute_advantage``, and the DataProto trainers' own seams.

Every verl trainer reaches a registered estimator through one function,
``verl.trainer.ppo.ray_trainer.compute_advantage(data, adv_estimator, ..., config=algorithm)``, on a
``DataProto``: the legacy ``RayPPOTrainer`` calls it, and the v1 trainer's ``utils`` and the separated
trainers' module import it from there by name.  :func:`hook_compute_advantage` wraps it once, right
after ``ray_trainer`` is imported, so the modules that import it afterwards bind the wrapper.  For verl's
own estimators the wrapper calls verl's function unchanged.  For ours it runs the step around it:

* a context installed by an outer hook (the v1 trainer's, the separated trainers') is completed from
  the DataProto: the sequence log-probs from its ``old_log_probs`` (``unlikely_grpo``), and, for v1
  agent sessions with several outputs, the final-output rule
  (:func:`~verl_focal.estimators.sessions.spread_session_advantages`);
* without one (the legacy trainer), the context is built from the DataProto itself
  (:func:`~verl_focal.estimators.rows.dataproto_rows`: reward extras in ``non_tensor_batch``, texts
  decoded with the tokenizer our legacy TaskRunner hands over) and the step's metrics are left in
  ``meta_info[METRICS_KEY]`` for the legacy trainer's ``compute_data_metrics``
  (:func:`install_legacy_hook`).

The separated trainers (one-step-off, fully-async: ``SeparateRayPPOTrainer``) are hooked on their two
methods around the advantage (:func:`hook_separated_trainers`): ``_fit_compute_log_prob``, which runs
right after the rewards, starts the estimator's prefetch; ``_fit_compute_advantage`` builds the step's
context from the batch, the rewards' extras and the trainer's tokenizer, runs verl's method inside it and
adds the step's metrics to the trainer's.  Every install step is guarded (:mod:`.compat`).
"""

from __future__ import annotations

import functools
import importlib
import logging
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from verl_focal.estimators.context import AdvantageContext, current_context, text_metrics
from verl_focal.estimators.decode import BatchDecoder, decoder_for
from verl_focal.estimators.prefetch import BackgroundPrefetch
from verl_focal.estimators.rows import (
    OLD_LOG_PROBS,
    TEXT_NEEDS,
    attach_old_log_probs,
    context_from_rows,
    dataproto_rows,
)
from verl_focal.estimators.sessions import spread_session_advantages
from verl_focal.estimators.step import AdvantageStep
from verl_focal.integration.post_import import is_hooked, mark_hooked
from verl_focal.integration.registration import get_spec

__all__ = ["METRICS_KEY", "DOWNSTREAM_BINDINGS", "hook_compute_advantage", "hook_separated_trainers",
           "install_legacy_hook", "wrap_compute_advantage"]

logger = logging.getLogger(__name__)

#: where the wrapper leaves a legacy step's metrics on the returned DataProto's ``meta_info``
METRICS_KEY = "verl_focal_metrics"

#: modules that import ``compute_advantage`` from ``verl.trainer.ppo.ray_trainer`` by name
DOWNSTREAM_BINDINGS = ("verl.trainer.ppo.v1.utils", "verl.experimental.separation.ray_trainer")

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

    @functools.wraps(orig)
    def compute_advantage(data, adv_estimator, *args, **kwargs):
        spec = get_spec(adv_estimator)
        if spec is None:
            return orig(data, adv_estimator, *args, **kwargs)

        def call(d):
            return orig(d, adv_estimator, *args, **kwargs)

        ctx = current_context()
        if ctx is not None:  # an outer hook's step (v1, separated, the demo): complete it from the DataProto
            return _complete(ctx, data, spec.needs_for(ctx.settings or kwargs.get("config") or {}), call)
        algo = kwargs.get("config")
        step = AdvantageStep(spec, algo if algo is not None else {})
        decode = _legacy_decoder() if step.needs & TEXT_NEEDS else None
        ctx = context_from_rows(dataproto_rows(data.batch, data.non_tensor_batch, decode), step.needs,
                                step.settings.focal.acc_key)
        out = step.run(ctx, lambda: _complete(ctx, data, step.needs, call))
        if "factory" in _LEGACY:  # our legacy TaskRunner: its compute_data_metrics hands them to verl's log
            out.meta_info[METRICS_KEY] = {**ctx.metrics, **text_metrics(ctx)}
        return out

    return mark_hooked(compute_advantage)


def _complete(ctx: AdvantageContext, data, needs: frozenset[str], call: Callable[[Any], Any]):
    """Run ``call`` (verl's function) on ``data`` for the installed ``ctx``: old log-probs from the DataProto
    when the estimator ``needs`` them; the final-output rule when ``ctx`` holds agent sessions' final outputs."""
    def run(rows):  # the rows of ctx: all of data, or the sessions' final outputs
        if OLD_LOG_PROBS in needs:
            attach_old_log_probs(ctx, rows.batch)
        return call(rows)

    if ctx.sessions is None:
        return run(data)
    ctx.metrics["verl_focal/session_outputs"] = float(len(ctx.sessions[1]))
    ctx.metrics["verl_focal/sessions"] = float(len(ctx.sessions[0]))
    return spread_session_advantages(data, ctx.sessions, run)


def hook_compute_advantage() -> None:
    """Wrap ``verl.trainer.ppo.ray_trainer.compute_advantage`` (idempotent), and the downstream bindings
    already imported with verl's original (the plugin runs this right after ``ray_trainer`` is imported)."""
    rt = importlib.import_module("verl.trainer.ppo.ray_trainer")
    orig = rt.compute_advantage
    if not is_hooked(orig):
        rt.compute_advantage = wrap_compute_advantage(orig)
    for name in DOWNSTREAM_BINDINGS:
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, "compute_advantage", None) is orig:
            mod.compute_advantage = rt.compute_advantage


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


#: the attribute of a separated trainer holding the prefetch started for its current batch
_PENDING = "_verl_focal_prefetch"


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

    if is_hooked(cls._fit_compute_advantage):
        return
    orig_log_prob, orig_adv = cls._fit_compute_log_prob, cls._fit_compute_advantage

    @functools.wraps(orig_log_prob)
    def _fit_compute_log_prob(self, batch):
        setattr(self, _PENDING, None)  # a batch that never reached the advantage step: its prefetch is dropped
        spec = get_spec(self.config.algorithm.adv_estimator)
        if spec is not None and spec.prefetch is not None:
            try:
                step = AdvantageStep(spec, self.config.algorithm)
                rows = _separated_rows(self, batch)
                setattr(self, _PENDING, BackgroundPrefetch(
                    step, tuple(rows.uids), lambda: context_from_rows(rows, step.needs, step.settings.focal.acc_key)))
            except Exception as e:  # noqa: BLE001 - an optimisation: the advantage step does the work instead
                logger.warning("verl-focal: could not start the prefetch: %s", e)
        return orig_log_prob(self, batch)

    @functools.wraps(orig_adv)
    def _fit_compute_advantage(self, batch):
        spec = get_spec(self.config.algorithm.adv_estimator)
        pending = getattr(self, _PENDING, None)
        setattr(self, _PENDING, None)
        if spec is None:
            return orig_adv(self, batch)
        rows = tuple(batch.non_tensor_batch["uid"])
        step, ctx, failed = pending.join(rows, spec.name) if pending else (None, None, False)
        step = step or AdvantageStep(spec, self.config.algorithm)
        if ctx is None:
            ctx = context_from_rows(_separated_rows(self, batch), step.needs, step.settings.focal.acc_key)
        if failed:
            ctx.metrics["verl_focal/prefetch_failed"] = 1.0
        out = step.run(ctx, lambda: orig_adv(self, batch))
        self.metrics.update({**ctx.metrics, **text_metrics(ctx)})
        return out

    cls._fit_compute_log_prob = mark_hooked(_fit_compute_log_prob)
    cls._fit_compute_advantage = mark_hooked(_fit_compute_advantage)
