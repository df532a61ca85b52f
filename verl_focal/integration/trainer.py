"""The trainer hook: the one data path from verl's trainers to our estimators.

v1 trainer (``trainer.use_v1=true``, verl's default)
    :class:`FocalHookMixin` overrides ``PPOTrainer._compute_advantage``.  For one
    of our estimators it fetches, for exactly ``batch.keys``, the per-row fields
    the estimator declared (``acc`` and other reward extras from
    TransferQueue's ``extra_fields``, the ``raw_prompt``'s problem text, and the
    decoded ``responses`` -- only of the rows an estimator will read, see
    :func:`~verl_focal.integration.rows.text_rows`), runs the estimator's
    group-level ``prepare`` step, then calls the stock ``_compute_advantage``
    inside :func:`use_context`, and finally adds the context's diagnostics and
    its own timings (``verl_focal/fetch_s``, ``decode_s``, ``decoded_rows``,
    ``prepare_s``, ``advantage_s``) to the step metrics.  verl's own estimators
    pass straight through.

    The hooked classes are registered as trainer modes ``focal_sync``,
    ``focal_colocate_async`` and ``focal_separate_async``.  verl's base class
    branches on ``trainer_mode == "sync"`` (replay buffer, refill, checkpoint
    restore), so each hooked class puts the *base* mode back into
    ``config.trainer.v1.trainer_mode`` before ``PPOTrainer.__init__`` runs: a
    ``focal_sync`` run behaves exactly like ``sync``.

The DataProto trainers (the legacy trainer, ``trainer.use_v1=false``, and the separated
one-step-off / fully-async trainers) are hooked by :mod:`verl_focal.integration.dataproto_hook`.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from typing import Any

import numpy as np
import transfer_queue as tq
from omegaconf import open_dict
from verl.trainer.ppo.v1.trainer_base import PPOTrainer, get_trainer_cls, register_trainer

from verl_focal.config.schema import parse_settings
from verl_focal.integration.context import AdvantageContext, LazyTexts, text_metrics
from verl_focal.integration.cue_hook import PREFETCHED_LABELS, ROW_KEYS, judges_at_reward_time
from verl_focal.integration.decode import BatchDecoder
from verl_focal.integration.modes import HOOKED_MODES, hooked_mode
from verl_focal.integration.post_import import is_hooked
from verl_focal.integration.prefetch import BackgroundPrefetch
from verl_focal.integration.registration import get_spec
from verl_focal.integration.rows import (
    OLD_LOG_PROB_SUM,
    OLD_LOG_PROB_TOKENS,
    OLD_LOG_PROBS,
    SIGNATURE_EXTRA,
    as_list,
    build_context,
    last_user_text,
    nested_rows,
    reward_extra_info_of,
    sequence_log_prob_columns,
    text_rows,
)
from verl_focal.integration.sessions import session_finals, wrap_multi_trajectories
from verl_focal.integration.step import AdvantageStep

logger = logging.getLogger(__name__)

__all__ = ["FocalHookMixin", "hooked_trainer_cls", "HOOKED_MODES"]


class _LogProbTap:
    """Stands in for the ``transfer_queue`` module inside verl's ``_compute_old_log_prob`` (v1).

    Every call passes through.  What that pass writes as ``old_log_probs`` is reduced to each row's
    sequence log-prob and token count (:func:`~verl_focal.integration.rows.sequence_log_prob_columns`),
    with the ``response_mask`` that the same pass reads, in a background thread started at that write:
    it runs while verl finishes the pass (padding, the entropy metric) and any later pass, and the
    advantage step joins it (:meth:`columns`) instead of reading the log-probs back.

    In verl's bypass mode (``algorithm.rollout_correction.bypass_mode=true``) the pass only reads
    ``rollout_log_probs`` and writes them back as ``old_log_probs``: it reads no ``response_mask``.
    The thread started at that write then reads ``response_mask`` itself (tool-response tokens of a
    multi-turn row are 0 there, so the row lengths alone would not do), after verl's write has gone
    out, while verl runs its later passes (docs/methods.md §10).
    """

    def __init__(self, real: Any, lookup: Any = None) -> None:
        self.real = real
        #: bypass mode: ``lookup(keys)`` gives the columns reduced at reward time (None when some are missing)
        self.lookup = lookup
        self.from_reward_time = False
        self._mask = None
        self._thread: threading.Thread | None = None
        self._result: dict[str, np.ndarray] | None = None
        self._error: Exception | None = None
        self.wait_s = 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def kv_batch_get(self, *args: Any, **kwargs: Any):
        out = self.real.kv_batch_get(*args, **kwargs)
        try:
            if "response_mask" in out.keys():
                self._mask = out["response_mask"]
        except Exception:  # noqa: BLE001 - not a TensorDict: nothing to keep
            pass
        return out

    def kv_batch_put(self, *args: Any, **kwargs: Any):
        fields = kwargs.get("fields", args[2] if len(args) > 2 else None)
        log_probs = None
        try:
            if fields is not None and "old_log_probs" in fields.keys() and self._thread is None:
                log_probs = fields["old_log_probs"]
        except Exception:  # noqa: BLE001 - not a TensorDict: nothing to reduce
            pass
        if log_probs is not None and self._mask is not None:  # verl's own pass: it read the mask
            self._start(log_probs, self._mask)
            return self.real.kv_batch_put(*args, **kwargs)
        out = self.real.kv_batch_put(*args, **kwargs)
        if log_probs is not None:  # bypass mode: the thread reads the mask, after verl's write
            keys = kwargs.get("keys", args[0] if args else None)
            partition_id = kwargs.get("partition_id", args[1] if len(args) > 1 else None)
            if keys is not None and partition_id is not None:
                self._start(log_probs, None, (list(keys), partition_id))
        return out

    def _start(self, log_probs: Any, mask: Any, read_mask: tuple[list, Any] | None = None) -> None:
        self._mask = None  # the thread holds the tensors until it is done, nothing else here

        def work() -> None:
            try:
                m = mask
                if read_mask is not None:
                    keys, partition_id = read_mask
                    done = self.lookup(keys) if self.lookup is not None else None
                    if done is not None:  # reduced from the rollout's log-probs as the groups finished
                        self._result, self.from_reward_time = done, True
                        return
                    m = self.real.kv_batch_get(keys=keys, partition_id=partition_id,
                                               select_fields=["response_mask"])["response_mask"]
                self._result = sequence_log_prob_columns(log_probs, m)
            except Exception as e:  # noqa: BLE001 - an optimisation: the hook reads them back instead
                self._error = e

        self._thread = threading.Thread(target=work, name="verl-focal-old-log-probs", daemon=True)
        self._thread.start()

    @property
    def started(self) -> bool:
        return self._thread is not None

    def columns(self) -> dict[str, np.ndarray] | None:
        """The reduced columns (None when nothing was started or the reduction failed); the time
        this blocked is in :attr:`wait_s`."""
        if self._thread is None:
            return None
        t0 = time.perf_counter()
        self._thread.join()
        self.wait_s = time.perf_counter() - t0
        if self._error is not None:
            logger.warning("verl-focal: could not reduce old_log_probs in the pass (%s); reading them back",
                           self._error)
            return None
        return self._result


#: rows whose reward-time log-prob columns are kept at most (bypass mode; ~100 bytes each)
_RT_LP_MAX = 1 << 20
#: the longest the old-log-prob pass's thread waits for the reward-time worker before reading the mask itself
_RT_WAIT_S = 10.0


class _Rows:
    """The two fields of verl's ``KVBatchMeta`` that :meth:`FocalHookMixin._focal_fetch_context` reads."""

    def __init__(self, keys: list[str], partition_id: str) -> None:
        self.keys, self.partition_id = keys, partition_id


class FocalHookMixin:
    """Mixin for a verl v1 ``PPOTrainer`` subclass; see the module docstring."""

    _focal_base_mode: str = "sync"

    def __init__(self, config, *args: Any, **kwargs: Any) -> None:
        from verl_focal.integration.preflight import validate_start

        validate_start(config)  # stock main_ppo with a focal_* mode: refuse a bad config before workers start
        # verl/trainer/ppo/v1/trainer_base.py branches on `self.trainer_mode == "sync"` (replay
        # buffer, refill, checkpoint restore): the base class must see the base mode.
        with open_dict(config):
            config.trainer.v1.trainer_mode = self._focal_base_mode
        super().__init__(config, *args, **kwargs)

    # -- data path ---------------------------------------------------------
    def _focal_fetch_context(self, batch, needs: frozenset[str], acc_key: str | None = None) -> AdvantageContext:
        """Read the per-row fields of ``needs`` for ``batch.keys`` from TransferQueue.

        Only small columns are read here (``uid``, ``extra_fields``, ``raw_prompt`` when the
        problems are needed).  Response ids are read and decoded only for the rows an estimator
        is expected to read (:func:`~verl_focal.integration.rows.text_rows`: correct rows of
        mixed groups without reward-side signatures), in one batch; any other row is read on
        demand (:class:`~verl_focal.integration.context.LazyTexts`).
        """
        t0 = time.perf_counter()
        fields = ["uid", "extra_fields"]
        if "problems" in needs:
            fields.append("raw_prompt")
        data = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=fields)
        uids = as_list(data["uid"])
        infos = [reward_extra_info_of(x) for x in as_list(data["extra_fields"])]
        acc_key = acc_key or parse_settings(self.config.algorithm).focal.acc_key
        if not any(acc_key in info for info in infos):
            # A colocated reward model writes its extras as top-level columns.
            try:
                col = as_list(
                    tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=[acc_key])[acc_key]
                )
                infos = [{**info, acc_key: v} for info, v in zip(infos, col)]
            except Exception:  # noqa: BLE001 - the column simply is not there
                pass
        problems = [last_user_text(p) for p in as_list(data["raw_prompt"])] if "problems" in needs else None
        del data
        old_lp = None
        read_back = False
        old_lp_wait = 0.0
        old_lp_reward_time = False
        tapped = getattr(self, "_focal_old_lp", None)
        if OLD_LOG_PROBS in needs and tapped is not None and tapped[:2] == (tuple(batch.keys), batch.partition_id):
            old_lp = tapped[2].columns()  # reduced since verl's old-log-prob pass wrote them: nothing to read back
            old_lp_wait, old_lp_reward_time = tapped[2].wait_s, tapped[2].from_reward_time
        if OLD_LOG_PROBS in needs and old_lp is None:
            read_back = True  # written by _compute_old_log_prob: fetched at advantage time, never in prefetch
            try:
                lp = tq.kv_batch_get(
                    keys=batch.keys, partition_id=batch.partition_id, select_fields=["old_log_probs", "response_mask"]
                )
                old_lp = sequence_log_prob_columns(lp["old_log_probs"], lp["response_mask"])
            except Exception as e:  # noqa: BLE001 - absent column: the estimator refuses with its own message
                logger.warning("verl-focal: could not fetch old_log_probs from TransferQueue: %s", e)
        ctx = build_context(
            uids, needs, infos, problems=problems, acc_key=acc_key, source="v1-transferqueue", old_log_probs=old_lp
        )
        ctx.metrics["verl_focal/fetch_s"] = time.perf_counter() - t0
        if OLD_LOG_PROBS in needs:
            ctx.metrics["verl_focal/old_log_probs_read_back"] = float(read_back)
            ctx.metrics["verl_focal/old_log_probs_wait_s"] = old_lp_wait
            ctx.metrics["verl_focal/old_log_probs_reward_time"] = float(old_lp_reward_time and not read_back)
        if "responses" in needs:
            keys, partition_id = list(batch.keys), batch.partition_id
            ctx.extras[ROW_KEYS] = np.asarray(keys, dtype=object)  # the judge's session order (cue_hook.py)

            def fetch_ids(rows: np.ndarray) -> list:
                got = tq.kv_batch_get(keys=[keys[i] for i in rows.tolist()], partition_id=partition_id,
                                      select_fields=["responses"])["responses"]
                return nested_rows(got)

            sigs = ctx.extras.get(SIGNATURE_EXTRA) if SIGNATURE_EXTRA in needs else None
            ctx.responses = LazyTexts(
                len(uids), fetch_ids, self._focal_decoder(), preload=text_rows(ctx.uids, ctx.acc, sigs)
            )
        return ctx

    def _focal_decoder(self) -> BatchDecoder:
        """One :class:`BatchDecoder` per tokenizer (its byte table is built once)."""
        dec = getattr(self, "_focal_batch_decoder", None)
        if dec is None or dec.tokenizer is not self.tokenizer:
            dec = self._focal_batch_decoder = BatchDecoder(self.tokenizer)
        return dec

    # -- overlap: the judge's requests as soon as a group's rewards are known ---
    def _build_replay_buffer(self):
        buffer = super()._build_replay_buffer()
        self._focal_watch(buffer)
        return buffer

    def _focal_bypass(self) -> bool:
        rc = self.config.algorithm.get("rollout_correction", None)
        return bool(rc and rc.get("bypass_mode", False))

    def _focal_watch(self, buffer) -> None:
        """After each poll of verl's replay buffer (its view of which prompts have finished generating,
        rewards included), hand the train groups that finished since the last poll to
        :meth:`_focal_groups_finished`: for a judge config (their requests), and for ``unlikely_grpo`` in
        verl's bypass mode (their rollout log-probs, which that mode's pass copies to ``old_log_probs``,
        are reduced per row there and then).  A replay buffer without that poll (a custom sampler) is
        left alone: the work then starts at the old-log-prob pass."""
        spec = get_spec(self.config.algorithm.adv_estimator)
        if spec is None:
            return
        step = AdvantageStep(spec, self.config.algorithm)
        judge = spec.prefetch is not None and judges_at_reward_time(step.settings)
        reduce_lp = OLD_LOG_PROBS in step.needs and self._focal_bypass()
        sync = getattr(buffer, "_sync_metadata_from_transfer_queue", None)
        if not (judge or reduce_lp) or sync is None or not hasattr(buffer, "finished_keys"):
            return
        self._focal_seen_finished: set[str] = set()
        self._focal_early_lock = threading.Condition()
        self._focal_early_groups = self._focal_early_failed = 0  # counted by the worker, reported per step
        self._focal_early_pending = 0  # batches queued and not yet done
        self._focal_rt_lp: dict[str, tuple[float, float]] = {}  # key -> (Σ log-prob, tokens), bypass mode
        self._focal_early_jobs = (judge, reduce_lp)

        @functools.wraps(sync)
        def synced(*args: Any, **kwargs: Any):
            out = sync(*args, **kwargs)
            try:
                finished = set(buffer.finished_keys.get("train", ()))
                new = finished - self._focal_seen_finished
                self._focal_seen_finished = finished  # a sampled group leaves the set: it stays bounded
                if new:
                    keys = [k for k, tag in buffer.partitions.get("train", {}).items()
                            if k.split("_", 1)[0] in new and tag.get("status", "success") == "success"]
                    if keys:
                        self._focal_groups_finished(keys, step)
            except Exception as e:  # noqa: BLE001 - an optimisation: the pass-start prefetch still runs
                logger.warning("verl-focal: could not read the replay buffer's finished groups: %s", e)
            return out

        buffer._sync_metadata_from_transfer_queue = synced

    def _focal_groups_finished(self, keys: list[str], step: AdvantageStep) -> None:
        """Run the estimator's prefetch on these rows (whole groups whose rewards are in TransferQueue)
        in a background thread, in arrival order, while the rollout of other groups goes on."""
        import queue

        q = getattr(self, "_focal_early_queue", None)
        if q is None:
            q = self._focal_early_queue = queue.SimpleQueue()

            def work() -> None:
                while True:
                    item = q.get()
                    if item is None:
                        return
                    rows, st = item
                    judge, reduce_lp = self._focal_early_jobs
                    try:
                        if judge:
                            meta = _Rows(list(rows), "train")
                            st.prefetch(self._focal_fetch_context(meta, st.needs, st.settings.focal.acc_key))
                        if reduce_lp:
                            got = tq.kv_batch_get(keys=list(rows), partition_id="train",
                                                  select_fields=["rollout_log_probs", "response_mask"])
                            cols = sequence_log_prob_columns(got["rollout_log_probs"], got["response_mask"])
                            del got
                            with self._focal_early_lock:
                                lp = self._focal_rt_lp
                                lp.update(zip(rows, zip(cols[OLD_LOG_PROB_SUM].tolist(),
                                                        cols[OLD_LOG_PROB_TOKENS].tolist())))
                                while len(lp) > _RT_LP_MAX:  # groups evicted before any step used them
                                    lp.pop(next(iter(lp)))
                        with self._focal_early_lock:
                            self._focal_early_groups += len({k.split("_", 1)[0] for k in rows})
                    except Exception as e:  # noqa: BLE001 - the old-log-prob pass does the work instead
                        logger.warning("verl-focal: reward-time prefetch failed: %s", e)
                        with self._focal_early_lock:
                            self._focal_early_failed += 1
                    finally:
                        with self._focal_early_lock:
                            self._focal_early_pending -= 1
                            self._focal_early_lock.notify_all()

            threading.Thread(target=work, name="verl-focal-reward-time", daemon=True).start()
        with self._focal_early_lock:
            self._focal_early_pending += 1
        q.put((list(keys), step))

    def _focal_rt_columns(self, keys: list[str]) -> dict[str, np.ndarray] | None:
        """The per-row log-prob columns reduced at reward time for exactly ``keys`` (taken out), waiting
        (at most ``_RT_WAIT_S``) while the reward-time worker still has work; None when any key is missing."""
        lock = getattr(self, "_focal_early_lock", None)
        if lock is None or not self._focal_early_jobs[1]:
            return None
        lp = self._focal_rt_lp
        with lock:  # until these rows are reduced, or the worker has nothing left to do
            if not lock.wait_for(lambda: self._focal_early_pending == 0 or all(k in lp for k in keys),
                                 timeout=_RT_WAIT_S) or not all(k in lp for k in keys):
                return None
            got = [lp.pop(k) for k in keys]
        return {OLD_LOG_PROB_SUM: np.array([g[0] for g in got], dtype=np.float64),
                OLD_LOG_PROB_TOKENS: np.array([g[1] for g in got], dtype=np.float64)}

    # -- overlap: start slow group-level work before the old-log-prob pass -----
    def _focal_prefetch(self, batch) -> None:
        """Start, in a background thread, the context fetch and the estimator's ``prefetch``.

        ``_compute_old_log_prob`` calls this before verl's log-prob pass, during which the
        driver mostly waits on the workers: reading the rows, decoding the texts the estimator
        needs and sending the judge's requests then cost the step nothing.  The advantage step
        joins the thread (``verl_focal/prefetch_wait_s``).  Never raises: a failure is logged
        and counted at the join, and the advantage step does the work itself.
        """
        self._focal_prefetched = None
        spec = get_spec(self.config.algorithm.adv_estimator)
        if spec is None:
            return
        step = AdvantageStep(spec, self.config.algorithm)  # the step's one parse of the algorithm config
        build = None
        if spec.prefetch is not None:

            def build() -> AdvantageContext:
                return self._focal_fetch_context(batch, step.needs, step.settings.focal.acc_key)

        self._focal_prefetched = BackgroundPrefetch(step, (tuple(batch.keys), batch.partition_id), build)

    def _compute_old_log_prob(self, batch, metrics: dict):
        self._focal_prefetch(batch)
        self._focal_old_lp = None
        pending = getattr(self, "_focal_prefetched", None)
        step = pending.step if pending is not None else None
        if step is None or OLD_LOG_PROBS not in step.needs:
            return super()._compute_old_log_prob(batch, metrics)
        # unlikely_grpo: reduce old_log_probs to one number per row where verl's pass writes them,
        # instead of reading them back from TransferQueue at advantage time (docs/methods.md §10)
        from verl.trainer.ppo.v1 import trainer_base

        tap = _LogProbTap(trainer_base.tq, lookup=self._focal_rt_columns)
        trainer_base.tq = tap
        try:
            out = super()._compute_old_log_prob(batch, metrics)
        finally:
            trainer_base.tq = tap.real
        if tap.started:  # the reduction runs on; the advantage step joins it
            self._focal_old_lp = (tuple(batch.keys), batch.partition_id, tap)
        return out

    def _focal_context_for(self, batch, spec) -> tuple[AdvantageStep, AdvantageContext]:
        """The step (parsed at the old-log-prob pass when it ran for these rows) and its context:
        the prefetched one when the background fetch succeeded for these rows, else fetched now."""
        pending = getattr(self, "_focal_prefetched", None)
        self._focal_prefetched = None
        step = ctx = None
        if pending is not None:
            step, ctx, failed = pending.join((tuple(batch.keys), batch.partition_id), spec.name)
            if failed:
                self._focal_prefetch_failed = getattr(self, "_focal_prefetch_failed", 0) + 1
            if ctx is not None:
                return step, ctx
        if step is None:
            step = AdvantageStep(spec, self.config.algorithm)
        return step, self._focal_fetch_context(batch, step.needs, step.settings.focal.acc_key)

    def _compute_advantage(self, batch, metrics: dict):
        spec = get_spec(self.config.algorithm.adv_estimator)
        if spec is None:
            return super()._compute_advantage(batch, metrics)
        step, ctx = self._focal_context_for(batch, spec)
        finals = session_finals(batch.keys)
        if finals is not None:  # multi-output agent sessions: the final-output rule (integration/sessions.py)
            if ctx.extras.pop(PREFETCHED_LABELS, None) is not None:  # partitioned over all outputs: again
                ctx.metrics = {k: v for k, v in ctx.metrics.items() if not k.startswith("cue/")}
            ctx = ctx.select(finals[0])
        failed = getattr(self, "_focal_prefetch_failed", 0)
        if failed:
            ctx.metrics["verl_focal/prefetch_failed"] = float(failed)
            self._focal_prefetch_failed = 0
        lock = getattr(self, "_focal_early_lock", None)
        if lock is not None:  # groups whose prefetch ran at reward time since the last step
            with lock:
                early, early_failed = self._focal_early_groups, self._focal_early_failed
                self._focal_early_groups = self._focal_early_failed = 0
            ctx.metrics["verl_focal/reward_time_groups"] = float(early)
            if early_failed:
                ctx.metrics["verl_focal/reward_time_prefetch_failed"] = float(early_failed)
        out = step.run(ctx, functools.partial(super()._compute_advantage, batch, metrics))
        metrics.update(ctx.metrics)
        metrics.update(text_metrics(ctx))
        return out

    # -- validation: unbiased pass@k next to verl's best@k ---------------------
    def _val_metrics_update(self, data_sources, sample_uids, reward_extra_infos_dict, sample_turns, *args, **kwargs):
        metric_dict = super()._val_metrics_update(
            data_sources, sample_uids, reward_extra_infos_dict, sample_turns, *args, **kwargs
        )
        accs = reward_extra_infos_dict.get(parse_settings(self.config.algorithm).focal.acc_key)
        if accs is None:
            return metric_dict
        try:
            from verl_focal.integration.val_metrics import unbiased_pass_at_k_metrics

            metric_dict.update(unbiased_pass_at_k_metrics(sample_uids, accs, data_sources=data_sources))
        except Exception as e:  # noqa: BLE001 - a metric must never end a run
            logger.warning("verl-focal: unbiased pass@k validation metric failed: %s", e)
            metric_dict["val-aux/unbiased_pass@k_failed"] = 1.0
        return metric_dict


def hooked_trainer_cls(mode: str) -> type:
    """The hooked subclass of verl's trainer for ``mode`` (a verl mode or one of ours)."""
    return get_trainer_cls(hooked_mode(mode))


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
        attrs = {"_focal_base_mode": base_mode, "__module__": __name__}
        cls = type(f"Focal{base.__name__}", (FocalHookMixin, base), attrs)
        register_trainer(name)(cls)


def _install_session_rule() -> None:
    """Our estimators follow verl's final-output rule for multi-output agent sessions (sessions.py)."""
    from verl.trainer.ppo.v1 import trainer_base, utils

    fn = trainer_base.compute_advantage_for_multi_trajectories
    if not is_hooked(fn):
        trainer_base.compute_advantage_for_multi_trajectories = wrap_multi_trajectories(
            fn, lambda: utils.compute_advantage
        )


_register_hooked_trainers()
_install_session_rule()
assert issubclass(get_trainer_cls("focal_sync"), PPOTrainer)
