"""The hook for verl's DataProto trainers: the legacy trainer and the separated trainers.

These trainers call a module-level ``compute_advantage(data, adv_estimator, ..., config=algorithm)``
that each of their modules binds by name at import, on a ``DataProto`` whose ``non_tensor_batch``
already holds the reward extras.  The hook replaces each binding with a wrapper that, for one of
our estimators, builds the :class:`~verl_focal.integration.context.AdvantageContext` from the
DataProto (:func:`context_from_dataproto`: ``acc`` and ``cue_sig`` from the reward extras, texts
decoded from the response ids, problems from ``raw_prompt``, sequence log-probs from
``old_log_probs``) and runs the :class:`~verl_focal.integration.step.AdvantageStep` around verl's
own function; verl's estimators, and calls made while a context is already installed (the v1
hook), pass straight through.

Bindings and who installs the hook on each:

* ``verl.trainer.ppo.ray_trainer.compute_advantage`` -- the legacy ``RayPPOTrainer``
  (``trainer.use_v1=false``); our entry point's legacy TaskRunner installs it;
* ``verl.experimental.separation.ray_trainer.compute_advantage`` -- ``SeparateRayPPOTrainer``
  and its subclasses ``OneStepOffRayTrainer`` (one-step-off) and ``FullyAsyncTrainer``
  (fully-async); the plugin installs it in every process that imports the module (the
  fully-async trainer is a Ray actor of its own);
* ``verl.trainer.ppo.trainer_utils.compute_advantage`` -- a verl where the function moved
  there; installed with the legacy hook when the module exists.

The step metrics reach verl's log through the trainer: the legacy hook wraps
``compute_data_metrics``; the separated hook wraps ``SeparateRayPPOTrainer._fit_compute_advantage``
(which also hands the hook the trainer's tokenizer) and adds them to the trainer's ``metrics``.

On the separated trainers the hook also wraps ``_fit_compute_log_prob``, which runs right after the
rewards are extracted: an estimator with a ``prefetch`` (the cue estimators: the judge's requests,
the strategy-cue extraction, the texts they read) starts it there in the background
(:class:`~verl_focal.integration.prefetch.BackgroundPrefetch`), hidden behind the old-log-prob,
reference and critic passes that follow, and the advantage step joins it.
The v1 trainer is hooked by :mod:`verl_focal.integration.trainer`.
"""

from __future__ import annotations

import contextvars
import functools
import importlib
import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from verl_focal.integration.context import AdvantageContext, LazyTexts, current_context, text_metrics
from verl_focal.integration.decode import BatchDecoder
from verl_focal.integration.post_import import is_hooked, mark_hooked
from verl_focal.integration.prefetch import BackgroundPrefetch
from verl_focal.integration.registration import get_spec
from verl_focal.integration.rows import (
    OLD_LOG_PROBS,
    SIGNATURE_EXTRA,
    TEXT_NEEDS,
    build_context,
    last_user_text,
    sequence_log_prob_columns,
    text_rows,
)
from verl_focal.integration.step import AdvantageStep

__all__ = [
    "BINDINGS",
    "METRICS_KEY",
    "context_from_dataproto",
    "context_from_parts",
    "hooked_bindings",
    "install_legacy_hook",
    "install_separated_hook",
    "start_separated_prefetch",
    "wrap_compute_advantage",
]

#: every module of verl that defines or binds ``compute_advantage`` for a DataProto trainer
BINDINGS = (
    "verl.trainer.ppo.ray_trainer",
    "verl.experimental.separation.ray_trainer",
    "verl.trainer.ppo.trainer_utils",
)

#: where the wrapper leaves the step's metrics on the returned DataProto's ``meta_info``
METRICS_KEY = "verl_focal_metrics"

logger = logging.getLogger(__name__)



def context_from_dataproto(data, needs: frozenset[str], tokenizer=None, acc_key: str = "acc",
                           source: str = "legacy-dataproto") -> AdvantageContext:
    """:func:`context_from_parts` of a DataProto's ``batch`` and ``non_tensor_batch``."""
    return context_from_parts(data.batch, data.non_tensor_batch, needs, tokenizer, acc_key, source)


def context_from_parts(batch, ntb, needs: frozenset[str], tokenizer=None, acc_key: str = "acc",
                       source: str = "legacy-dataproto") -> AdvantageContext:
    """Build the context from a DataProto (reward extras in ``non_tensor_batch``).

    ``needs`` as the estimator declared it; ``tokenizer`` decodes response ids (only when text is
    needed); the rollout policy's log-probs come from ``batch["old_log_probs"]`` (recomputed by the
    actor, or ``rollout_log_probs`` copied there by verl's bypass mode).
    """
    uids = list(ntb["uid"])
    n = len(uids)
    infos: list[dict] = [{} for _ in range(n)]
    for key, col in ntb.items():
        if key == "uid" or len(col) != n:
            continue
        for i, v in enumerate(col):
            infos[i][key] = v
    problems = None
    if "responses" in needs and tokenizer is None and source != "verl-kwargs":
        raise RuntimeError(f"the estimator needs response text but the {source} hook has no tokenizer")
    if "problems" in needs:
        if "raw_prompt" in ntb:
            problems = [last_user_text(p) for p in ntb["raw_prompt"]]
        elif tokenizer is not None:
            problems = tokenizer.batch_decode(batch["prompts"], skip_special_tokens=True)
    old_lp = None
    if OLD_LOG_PROBS in needs and batch is not None and "old_log_probs" in batch.keys():
        mask = batch["response_mask"] if "response_mask" in batch.keys() else None
        if mask is None:
            resp_len = batch["old_log_probs"].shape[-1]
            mask = batch["attention_mask"][:, -resp_len:]
        old_lp = sequence_log_prob_columns(batch["old_log_probs"], mask)
    ctx = build_context(
        uids, needs, infos, problems=problems, acc_key=acc_key, source=source, old_log_probs=old_lp
    )
    if "responses" in needs and tokenizer is not None:
        resp = batch["responses"]
        mask = batch["response_mask"] if "response_mask" in batch.keys() else None

        def fetch_ids(rows: np.ndarray) -> list:
            return [resp[i][mask[i].bool()].numpy() if mask is not None else resp[i].numpy() for i in rows.tolist()]

        sigs = ctx.extras.get(SIGNATURE_EXTRA) if SIGNATURE_EXTRA in needs else None
        ctx.responses = LazyTexts(n, fetch_ids, BatchDecoder(tokenizer), preload=text_rows(ctx.uids, ctx.acc, sigs))
    return ctx


def wrap_compute_advantage(orig: Callable, tokenizer: Callable[[], Any], source: str) -> Callable:
    """``orig`` (verl's ``compute_advantage``) with the hook around it for our estimators.

    ``tokenizer()`` returns the tokenizer that decodes response ids (called only when the
    estimator needs text).  The step's metrics are left in ``meta_info[METRICS_KEY]``.
    """

    @functools.wraps(orig)
    def compute_advantage(data, adv_estimator, *args, **kwargs):
        spec = get_spec(adv_estimator)
        if spec is None or current_context() is not None:
            return orig(data, adv_estimator, *args, **kwargs)
        ctx, step, failed = None, None, False
        pending = _take_prefetch(_TRAINER.get())
        if pending is not None:
            step, ctx, failed = pending.join(_row_key(data.non_tensor_batch), spec.name)
        if step is None:
            algo = kwargs.get("config")
            step = AdvantageStep(spec, algo if algo is not None else {})
        if ctx is None:
            tok = tokenizer() if step.needs & TEXT_NEEDS else None
            ctx = context_from_dataproto(data, step.needs, tok, acc_key=step.settings.focal.acc_key, source=source)
        if failed:
            ctx.metrics["verl_focal/prefetch_failed"] = 1.0
        out = step.run(ctx, functools.partial(orig, data, adv_estimator, *args, **kwargs))
        out.meta_info[METRICS_KEY] = {**ctx.metrics, **text_metrics(ctx)}
        return out

    return mark_hooked(compute_advantage)


def _wrap_data_metrics(orig: Callable) -> Callable:
    @functools.wraps(orig)
    def compute_data_metrics(batch, *args, **kwargs):
        m = orig(batch, *args, **kwargs)
        m.update(batch.meta_info.pop(METRICS_KEY, {}) or {})
        return m

    return mark_hooked(compute_data_metrics)


def _import(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def install_legacy_hook(tokenizer_factory: Callable[[], Any] | None = None) -> None:
    """Wrap the legacy trainer's ``compute_advantage`` / ``compute_data_metrics`` (idempotent), and
    ``trainer_utils.compute_advantage`` where this verl has it.  ``tokenizer_factory`` builds the
    tokenizer on first need."""
    cache: dict[str, Any] = {}

    def tokenizer():
        if "tok" not in cache:
            cache["tok"] = tokenizer_factory() if tokenizer_factory is not None else None
        return cache["tok"]

    for name in ("verl.trainer.ppo.ray_trainer", "verl.trainer.ppo.trainer_utils"):
        mod = _import(name)
        if mod is None or not hasattr(mod, "compute_advantage") or is_hooked(mod.compute_advantage):
            continue
        mod.compute_advantage = wrap_compute_advantage(mod.compute_advantage, tokenizer, "legacy-dataproto")
        if hasattr(mod, "compute_data_metrics") and not is_hooked(mod.compute_data_metrics):
            mod.compute_data_metrics = _wrap_data_metrics(mod.compute_data_metrics)


#: the separated trainer whose ``_fit_compute_advantage`` is running (its tokenizer decodes texts)
_TRAINER: contextvars.ContextVar[Any] = contextvars.ContextVar("verl_focal_separated_trainer", default=None)

#: the attribute of a separated trainer holding the prefetch started for its current batch
_PREFETCH_ATTR = "_verl_focal_prefetch"


def _row_key(ntb) -> tuple:
    return tuple(ntb["uid"])


def _take_prefetch(trainer: Any) -> BackgroundPrefetch | None:
    pending = getattr(trainer, _PREFETCH_ATTR, None)
    if pending is not None:
        setattr(trainer, _PREFETCH_ATTR, None)
    return pending


def start_separated_prefetch(trainer: Any, batch) -> BackgroundPrefetch | None:
    """Start the estimator's prefetch for ``batch`` in the background (see the module docstring), with
    the reward extras the trainer has extracted (``trainer.reward_extra_infos_dict``) merged into the
    rows as ``_fit_compute_advantage`` will merge them.  None when the estimator has no prefetch or
    needs old log-probs (they do not exist yet)."""
    spec = get_spec(trainer.config.algorithm.adv_estimator)
    if spec is None or spec.prefetch is None:
        return None
    step = AdvantageStep(spec, trainer.config.algorithm)
    if OLD_LOG_PROBS in step.needs:
        return None
    ntb = dict(batch.non_tensor_batch)
    ntb.update({k: np.array(v) for k, v in (getattr(trainer, "reward_extra_infos_dict", None) or {}).items()})
    tensors = batch.batch
    tok = trainer.tokenizer if step.needs & TEXT_NEEDS else None
    acc_key = step.settings.focal.acc_key
    return BackgroundPrefetch(
        step, _row_key(ntb), lambda: context_from_parts(tensors, ntb, step.needs, tok, acc_key, "separated-dataproto")
    )


def install_separated_hook() -> bool:
    """Hook verl's separated trainers (one-step-off, fully-async); idempotent.  Returns False when
    this verl has no ``verl.experimental.separation``.  The plugin calls it as soon as that module
    is imported, in whichever process (the fully-async trainer is a Ray actor of its own)."""
    sep = _import("verl.experimental.separation.ray_trainer")
    if sep is None:
        return False
    if is_hooked(sep.compute_advantage):
        return True
    sep.compute_advantage = wrap_compute_advantage(
        sep.compute_advantage, lambda: getattr(_TRAINER.get(), "tokenizer", None), "separated-dataproto"
    )
    cls = sep.SeparateRayPPOTrainer
    orig_fit = cls._fit_compute_advantage

    @functools.wraps(orig_fit)
    def _fit_compute_advantage(self, batch):
        token = _TRAINER.set(self)
        try:
            out = orig_fit(self, batch)
        finally:
            _TRAINER.reset(token)
        metrics = out.meta_info.pop(METRICS_KEY, None)
        if metrics:
            self.metrics.update(metrics)
        return out

    orig_log_prob = cls._fit_compute_log_prob

    @functools.wraps(orig_log_prob)
    def _fit_compute_log_prob(self, batch):
        setattr(self, _PREFETCH_ATTR, None)  # a batch that never reached the advantage step: drop its prefetch
        try:
            setattr(self, _PREFETCH_ATTR, start_separated_prefetch(self, batch))
        except Exception as e:  # noqa: BLE001 - an optimisation: the advantage step does the work instead
            logger.warning("verl-focal: could not start the prefetch: %s", e)
        return orig_log_prob(self, batch)

    cls._fit_compute_advantage = mark_hooked(_fit_compute_advantage)
    cls._fit_compute_log_prob = mark_hooked(_fit_compute_log_prob)
    return True


def hooked_bindings() -> dict[str, bool]:
    """For each module of :data:`BINDINGS` that this verl has: whether its ``compute_advantage`` is
    hooked in this process (``verl-focal check`` reports it)."""
    out = {}
    for name in BINDINGS:
        mod = _import(name)
        if mod is not None and hasattr(mod, "compute_advantage"):
            out[name] = is_hooked(mod.compute_advantage)
    return out
