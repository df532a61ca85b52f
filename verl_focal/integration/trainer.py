"""The trainer hook: the one data path from verl's trainers to our estimators.

v1 trainer (``trainer.use_v1=true``, verl's default)
    :class:`FocalHookMixin` overrides ``PPOTrainer._compute_advantage``.  For one
    of our estimators it fetches, for exactly ``batch.keys``, the per-row fields
    the estimator declared (``acc`` and other reward extras from
    TransferQueue's ``extra_fields``, decoded ``responses``, the ``raw_prompt``'s
    problem text), runs the estimator's group-level ``prepare`` step, then calls
    the stock ``_compute_advantage`` inside :func:`use_context`, and finally adds
    the context's diagnostics to the step metrics.  verl's own estimators pass
    straight through.

    The hooked classes are registered as trainer modes ``focal_sync``,
    ``focal_colocate_async`` and ``focal_separate_async``.  verl's base class
    branches on ``trainer_mode == "sync"`` (replay buffer, refill, checkpoint
    restore), so each hooked class puts the *base* mode back into
    ``config.trainer.v1.trainer_mode`` before ``PPOTrainer.__init__`` runs: a
    ``focal_sync`` run behaves exactly like ``sync``.

Legacy trainer (``trainer.use_v1=false``)
    :func:`install_legacy_hook` wraps ``verl.trainer.ppo.ray_trainer``'s module
    functions ``compute_advantage`` (context from the DataProto's
    ``non_tensor_batch``) and ``compute_data_metrics`` (to log our diagnostics),
    in the TaskRunner process only.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
import transfer_queue as tq
from omegaconf import open_dict

from verl.trainer.ppo.v1.trainer_base import PPOTrainer, get_trainer_cls, register_trainer
from verl_focal.integration.context import AdvantageContext, use_context
from verl_focal.integration.registration import get_spec, run_startup_check
from verl_focal.integration.rows import (
    OLD_LOG_PROBS,
    as_list,
    build_context,
    last_user_text,
    reward_extra_info_of,
    sequence_log_prob_columns,
)

logger = logging.getLogger(__name__)

__all__ = ["FocalHookMixin", "hooked_trainer_cls", "HOOKED_MODES", "install_legacy_hook", "context_from_dataproto"]

#: verl trainer mode -> our registered mode name
HOOKED_MODES = {"sync": "focal_sync", "colocate_async": "focal_colocate_async", "separate_async": "focal_separate_async"}


def _acc_key(algorithm_config: Any) -> str:
    focal = algorithm_config.get("focal", None) or {}
    return focal.get("acc_key", "acc") if hasattr(focal, "get") else "acc"


def _run_prepare(spec, ctx: AdvantageContext, algorithm_config: Any) -> None:
    if spec.prepare is None:
        return
    t0 = time.perf_counter()
    spec.prepare(ctx, algorithm_config)
    ctx.metrics["verl_focal/prepare_s"] = time.perf_counter() - t0


class FocalHookMixin:
    """Mixin for a verl v1 ``PPOTrainer`` subclass; see the module docstring."""

    _focal_base_mode: str = "sync"

    def __init__(self, config, *args: Any, **kwargs: Any) -> None:
        # The trap (verl-0.9.md): the base class branches on trainer_mode == "sync".
        with open_dict(config):
            config.trainer.v1.trainer_mode = self._focal_base_mode
        run_startup_check(config)  # e.g. algorithm.passk.k vs rollout.n, also under stock main_ppo
        super().__init__(config, *args, **kwargs)

    # -- data path ---------------------------------------------------------
    def _focal_fetch_context(self, batch, needs: frozenset[str]) -> AdvantageContext:
        fields = ["uid", "extra_fields"]
        if "responses" in needs:
            fields.append("responses")
        if "problems" in needs:
            fields.append("raw_prompt")
        data = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=fields)
        uids = as_list(data["uid"])
        infos = [reward_extra_info_of(x) for x in as_list(data["extra_fields"])]
        acc_key = _acc_key(self.config.algorithm)
        if not any(acc_key in info for info in infos):
            # A colocated reward model writes its extras as top-level columns.
            try:
                col = as_list(
                    tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=[acc_key])[acc_key]
                )
                infos = [{**info, acc_key: v} for info, v in zip(infos, col)]
            except Exception:  # noqa: BLE001 - the column simply is not there
                pass
        responses = problems = None
        if "responses" in needs:
            nested = data["responses"]
            ids = [t.tolist() for t in nested.unbind()] if hasattr(nested, "unbind") else as_list(nested)
            responses = self.tokenizer.batch_decode(ids, skip_special_tokens=True)
        if "problems" in needs:
            problems = [last_user_text(p) for p in as_list(data["raw_prompt"])]
        old_lp = None
        if OLD_LOG_PROBS in needs:  # written by _compute_old_log_prob before the advantage step
            try:
                lp = tq.kv_batch_get(
                    keys=batch.keys, partition_id=batch.partition_id, select_fields=["old_log_probs", "response_mask"]
                )
                old_lp = sequence_log_prob_columns(lp["old_log_probs"], lp["response_mask"])
            except Exception as e:  # noqa: BLE001 - absent column: the estimator refuses with its own message
                logger.warning("verl-focal: could not fetch old_log_probs from TransferQueue: %s", e)
        return build_context(
            uids,
            needs,
            infos,
            responses=responses,
            problems=problems,
            acc_key=acc_key,
            source="v1-transferqueue",
            old_log_probs=old_lp,
        )

    # -- overlap: start slow group-level work before the old-log-prob pass -----
    def _focal_prefetch(self, batch) -> None:
        """Fetch the context early and run the estimator's ``prefetch`` (never raises)."""
        self._focal_prefetched = None
        spec = get_spec(self.config.algorithm.adv_estimator)
        if spec is None or spec.prefetch is None:
            return
        try:
            ctx = self._focal_fetch_context(batch, spec.needs_for(self.config.algorithm))
            spec.prefetch(ctx, self.config.algorithm)
            self._focal_prefetched = (tuple(batch.keys), batch.partition_id, ctx)
        except Exception as e:  # noqa: BLE001 - prefetching is an optimisation, never a failure
            logger.warning("verl-focal: prefetch for %s failed, prepare will do the work: %s", spec.name, e)
            self._focal_prefetch_failed = getattr(self, "_focal_prefetch_failed", 0) + 1

    def _compute_old_log_prob(self, batch, metrics: dict):
        self._focal_prefetch(batch)
        return super()._compute_old_log_prob(batch, metrics)

    def _focal_context_for(self, batch, spec) -> AdvantageContext:
        cached = getattr(self, "_focal_prefetched", None)
        self._focal_prefetched = None
        if cached is not None and cached[0] == tuple(batch.keys) and cached[1] == batch.partition_id:
            ctx = cached[2]  # same rows: reuse what prefetch fetched and decoded
            ctx.metrics = {"verl_focal/prefetched": 1.0}
            return ctx
        t0 = time.perf_counter()
        ctx = self._focal_fetch_context(batch, spec.needs_for(self.config.algorithm))
        ctx.metrics["verl_focal/fetch_s"] = time.perf_counter() - t0
        return ctx

    def _compute_advantage(self, batch, metrics: dict):
        spec = get_spec(self.config.algorithm.adv_estimator)
        if spec is None:
            return super()._compute_advantage(batch, metrics)
        ctx = self._focal_context_for(batch, spec)
        failed = getattr(self, "_focal_prefetch_failed", 0)
        if failed:
            ctx.metrics["verl_focal/prefetch_failed"] = float(failed)
            self._focal_prefetch_failed = 0
        _run_prepare(spec, ctx, self.config.algorithm)
        with use_context(ctx):
            out = super()._compute_advantage(batch, metrics)
        metrics.update(ctx.metrics)
        return out

    # -- validation: unbiased pass@k next to verl's best@k ---------------------
    def _val_metrics_update(self, data_sources, sample_uids, reward_extra_infos_dict, sample_turns, *args, **kwargs):
        metric_dict = super()._val_metrics_update(
            data_sources, sample_uids, reward_extra_infos_dict, sample_turns, *args, **kwargs
        )
        acc_key = _acc_key(self.config.algorithm)
        accs = reward_extra_infos_dict.get(acc_key)
        if accs is None:
            return metric_dict
        try:
            from verl_focal.integration.validation import unbiased_pass_at_k_metrics

            metric_dict.update(unbiased_pass_at_k_metrics(sample_uids, accs, data_sources=data_sources))
        except Exception as e:  # noqa: BLE001 - a metric must never end a run
            logger.warning("verl-focal: unbiased pass@k validation metric failed: %s", e)
            metric_dict["val-aux/unbiased_pass@k_failed"] = 1.0
        return metric_dict


def hooked_trainer_cls(mode: str) -> type:
    """The hooked subclass of verl's trainer for ``mode`` (a verl mode or one of ours)."""
    if mode in HOOKED_MODES.values():
        return get_trainer_cls(mode)
    if mode not in HOOKED_MODES:
        raise ValueError(
            f"trainer.v1.trainer_mode={mode!r} has no verl-focal hook; use one of {sorted(HOOKED_MODES)} "
            f"(or {sorted(HOOKED_MODES.values())})"
        )
    return get_trainer_cls(HOOKED_MODES[mode])


def _register_hooked_trainers() -> None:
    for base_mode, name in HOOKED_MODES.items():
        try:
            base = get_trainer_cls(base_mode)
        except ValueError:  # a mode this verl build lacks
            continue
        from verl.trainer.ppo.v1 import trainer_base

        existing = trainer_base.TRAINER_REGISTRY.get(name)
        if existing is not None and getattr(existing, "_focal_base_mode", None) == base_mode:
            continue  # module imported twice: keep the first registration
        cls = type(f"Focal{base.__name__}", (FocalHookMixin, base), {"_focal_base_mode": base_mode, "__module__": __name__})
        register_trainer(name)(cls)


_register_hooked_trainers()
assert issubclass(get_trainer_cls("focal_sync"), PPOTrainer)


# ---------------------------------------------------------------------------
# legacy trainer
# ---------------------------------------------------------------------------
def context_from_dataproto(data, needs: frozenset[str], tokenizer=None, acc_key: str = "acc") -> AdvantageContext:
    """Build the context from a legacy-trainer DataProto (reward extras in ``non_tensor_batch``)."""
    ntb = data.non_tensor_batch
    uids = list(ntb["uid"])
    n = len(uids)
    infos: list[dict] = [{} for _ in range(n)]
    for key, col in ntb.items():
        if key == "uid" or len(col) != n:
            continue
        for i, v in enumerate(col):
            infos[i][key] = v
    responses = problems = None
    if "responses" in needs:
        if tokenizer is None:
            raise RuntimeError("the estimator needs response text but the legacy hook has no tokenizer")
        resp = data.batch["responses"]
        mask = data.batch["response_mask"] if "response_mask" in data.batch.keys() else None
        ids = [resp[i][mask[i].bool()].tolist() if mask is not None else resp[i].tolist() for i in range(n)]
        responses = tokenizer.batch_decode(ids, skip_special_tokens=True)
    if "problems" in needs:
        if "raw_prompt" in ntb:
            problems = [last_user_text(p) for p in ntb["raw_prompt"]]
        elif tokenizer is not None:
            problems = tokenizer.batch_decode(data.batch["prompts"], skip_special_tokens=True)
    old_lp = None
    if OLD_LOG_PROBS in needs and "old_log_probs" in data.batch.keys():
        mask = data.batch["response_mask"] if "response_mask" in data.batch.keys() else None
        if mask is None:
            resp_len = data.batch["old_log_probs"].shape[-1]
            mask = data.batch["attention_mask"][:, -resp_len:]
        old_lp = sequence_log_prob_columns(data.batch["old_log_probs"], mask)
    return build_context(
        uids,
        needs,
        infos,
        responses=responses,
        problems=problems,
        acc_key=acc_key,
        source="legacy-dataproto",
        old_log_probs=old_lp,
    )


_LEGACY_METRICS_KEY = "verl_focal_metrics"


def install_legacy_hook(tokenizer_factory=None) -> None:
    """Wrap the legacy trainer's ``compute_advantage`` / ``compute_data_metrics`` (idempotent)."""
    from verl.trainer.ppo import ray_trainer

    if getattr(ray_trainer.compute_advantage, "_verl_focal_hook", False):
        return
    orig_adv = ray_trainer.compute_advantage
    orig_metrics = ray_trainer.compute_data_metrics
    cache: dict[str, Any] = {}

    def tokenizer():
        if "tok" not in cache:
            cache["tok"] = tokenizer_factory() if tokenizer_factory is not None else None
        return cache["tok"]

    def compute_advantage(data, adv_estimator, *args, **kwargs):
        spec = get_spec(adv_estimator)
        if spec is None:
            return orig_adv(data, adv_estimator, *args, **kwargs)
        algo = kwargs.get("config")
        needs = spec.needs_for(algo if algo is not None else {})
        tok = tokenizer() if needs & {"responses", "problems"} else None
        ctx = context_from_dataproto(data, needs, tok, acc_key=_acc_key(algo) if algo is not None else "acc")
        _run_prepare(spec, ctx, algo)
        with use_context(ctx):
            out = orig_adv(data, adv_estimator, *args, **kwargs)
        out.meta_info[_LEGACY_METRICS_KEY] = dict(ctx.metrics)
        return out

    def compute_data_metrics(batch, *args, **kwargs):
        m = orig_metrics(batch, *args, **kwargs)
        m.update(batch.meta_info.pop(_LEGACY_METRICS_KEY, {}) or {})
        return m

    compute_advantage._verl_focal_hook = True  # type: ignore[attr-defined]
    ray_trainer.compute_advantage = compute_advantage
    ray_trainer.compute_data_metrics = compute_data_metrics
