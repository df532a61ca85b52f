"""The v1 trainer hook: hooked subclasses of verl's ``PPOTrainer``, registered as trainer modes.

:class:`FocalHookMixin` overrides four methods of verl's v1 ``PPOTrainer`` and nothing else:

* ``__init__``: the start-up checks, then verl's constructor with the *base* mode in
  ``config.trainer.v1.trainer_mode`` (verl branches on ``trainer_mode == "sync"``: a ``focal_sync``
  run behaves exactly like ``sync``);
* ``_compute_old_log_prob``: starts the step's TransferQueue read, and a cue estimator's ``prefetch`` (the
  judge's requests, the strategy-cue partition), in the background
  (:func:`~verl_focal.step.seam.begin`) before verl's pass;
* ``_compute_advantage``: the step's context (:func:`~verl_focal.step.seam.finish`) -- the prefetched
  one, or read now: the reward extras (``acc``, ``cue_sig``), the problems and, for the rows an estimator
  reads, the decoded responses, in one TransferQueue read (:func:`tq_rows`; verl's DataProto at that point
  holds none of them) narrowed to each agent session's final output (:meth:`FocalHookMixin._focal_context`,
  the adapter) -- then verl's own ``_compute_advantage`` inside it.
  The hook around ``compute_advantage`` (:mod:`.dataproto_hook`) adds the old log-probs from the
  DataProto verl builds there.  The step's metrics go to verl's;
* ``_val_metrics_update``: the unbiased pass@k next to verl's ``best@k``.

verl's own estimators pass straight through.  The classes are registered as ``focal_sync``,
``focal_colocate_async`` and ``focal_separate_async`` (:func:`register_hooked_trainers`).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from omegaconf import open_dict

from verl_focal.config.schema import parse_settings
from verl_focal.integration.hooks.modes import HOOKED_MODES, hooked_mode
from verl_focal.integration.registration import get_spec
from verl_focal.step.rows import context_from_rows
from verl_focal.step.seam import AdvantageStep, begin, finish
from verl_focal.step.sessions import session_finals
from verl_focal.step.tq_rows import tq_rows

logger = logging.getLogger(__name__)

__all__ = ["FocalHookMixin", "hooked_trainer_cls", "register_hooked_trainers", "HOOKED_MODES"]


class FocalHookMixin:
    """Mixin for a verl v1 ``PPOTrainer`` subclass; see the module docstring."""

    _focal_base_mode: str = "sync"

    def __init__(self, config, *args: Any, **kwargs: Any) -> None:
        from verl_focal.integration.startup.admit import admit

        admit("trainer", config).raise_first().warn()  # stock main_ppo, a focal_* mode: refused before workers start
        with open_dict(config):
            config.trainer.v1.trainer_mode = self._focal_base_mode
        super().__init__(config, *args, **kwargs)

    def _focal_context(self, batch, step: AdvantageStep):
        """The row-reading adapter of the step seam: one TransferQueue read, narrowed to each agent session's
        final output (verl's final-output rule, step/sessions.py) before any prefetch sees it."""
        t0 = time.perf_counter()
        rows = tq_rows(batch, step.needs, step.settings.focal.acc_key, self.tokenizer)
        fetch_s = time.perf_counter() - t0
        ctx = context_from_rows(rows, step.needs, step.settings.focal.acc_key)
        ctx.metrics["verl_focal/fetch_s"] = fetch_s  # the small columns; text_metrics adds the response ids'
        finals = session_finals(batch.keys)
        if finals is not None:  # multi-output agent sessions
            ctx = ctx.select(finals[0])
            ctx.sessions = finals
        return ctx

    def _compute_old_log_prob(self, batch, metrics: dict):
        # the TransferQueue read (and a cue estimator's partition) behind verl's passes
        begin(self, get_spec(self.config.algorithm.adv_estimator), self.config.algorithm,
              lambda: tuple(batch.keys), lambda step: self._focal_context(batch, step))
        return super()._compute_old_log_prob(batch, metrics)

    def _compute_advantage(self, batch, metrics: dict):
        spec, verl_call = get_spec(self.config.algorithm.adv_estimator), super()._compute_advantage
        if spec is None:
            return verl_call(batch, metrics)
        return finish(spec, self.config.algorithm, lambda step: self._focal_context(batch, step),
                      lambda ctx: verl_call(batch, metrics), metrics, self, tuple(batch.keys))

    def _val_metrics_update(self, data_sources, sample_uids, reward_extra_infos_dict, sample_turns, *args, **kwargs):
        metric_dict = super()._val_metrics_update(
            data_sources, sample_uids, reward_extra_infos_dict, sample_turns, *args, **kwargs
        )
        accs = reward_extra_infos_dict.get(parse_settings(self.config.algorithm).focal.acc_key)
        if accs is None:
            return metric_dict
        try:
            from verl_focal.validation import unbiased_pass_at_k_metrics

            metric_dict.update(unbiased_pass_at_k_metrics(sample_uids, accs, data_sources=data_sources))
        except Exception as e:  # noqa: BLE001 - a metric must never end a run
            logger.warning("verl-focal: unbiased pass@k validation metric failed: %s", e)
            metric_dict["val-aux/unbiased_pass@k_failed"] = 1.0
        return metric_dict


def hooked_trainer_cls(mode: str) -> type:
    """The hooked subclass of verl's trainer for ``mode`` (a verl mode or one of ours)."""
    from verl.trainer.ppo.v1 import trainer_base  # the plugin registers ours when this package is imported

    return trainer_base.get_trainer_cls(hooked_mode(mode))


def register_hooked_trainers() -> None:
    """Register a hooked subclass of each of verl's v1 modes (:data:`HOOKED_MODES`) under our name; idempotent.
    With the hook around ``compute_advantage`` installed, verl's v1 ``utils`` must call it (old log-probs,
    agent sessions); without it, the pre-flight refuses our estimators anyway (compat.require)."""
    from verl.trainer.ppo import ray_trainer  # noqa: F401 - its import runs the advantage hook, if not yet run
    from verl.trainer.ppo.v1 import trainer_base

    from verl_focal.integration.compat import disabled, step_problem
    from verl_focal.integration.hooks.dataproto_hook import follow_compute_advantage

    follow_compute_advantage()  # utils may have imported verl's function from its defining module before
    if "advantage" not in disabled() and (problem := step_problem("v1")) is not None:
        raise RuntimeError(problem)
    for base_mode, name in HOOKED_MODES.items():
        try:
            base = trainer_base.get_trainer_cls(base_mode)
        except ValueError:  # a mode this verl build lacks
            continue
        existing = trainer_base.TRAINER_REGISTRY.get(name)
        if existing is not None and getattr(existing, "_focal_base_mode", None) == base_mode:
            continue  # registered already in this process
        attrs = {"_focal_base_mode": base_mode, "__module__": __name__}
        trainer_base.register_trainer(name)(type(f"Focal{base.__name__}", (FocalHookMixin, base), attrs))
