"""One training step's advantage work for one of our estimators, in one place.

Every caller -- the v1 trainer hook, the DataProto trainers' hook and the demo's RL loop -- runs the
same sequence:

1. :class:`AdvantageStep` (``AdvantageStep(spec, algorithm_config)``) parses the ``algorithm``
   config **once** into :class:`~verl_focal.config.schema.AlgorithmSettings` and says which
   per-row fields to fetch (:attr:`AdvantageStep.needs`);
2. the caller builds the :class:`~verl_focal.estimators.context.AdvantageContext` with those
   fields (:func:`~verl_focal.estimators.rows.context_from_rows`, from TransferQueue or a
   DataProto, or from its own tensors);
3. :meth:`AdvantageStep.prefetch` (optional, as early as the rows exist: before the
   old-log-prob pass) starts slow group-level work such as the judge's requests;
4. :meth:`AdvantageStep.run` runs the estimator's ``prepare`` step and then the caller's
   advantage call (verl's own ``compute_advantage`` / ``_compute_advantage``) inside
   :func:`~verl_focal.estimators.context.use_context`, timing both.

The settings travel in the context, so neither ``prepare`` nor the estimator parses the config
again.  No verl import.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from verl_focal.config.schema import AlgorithmSettings, parse_settings
from verl_focal.estimators.context import AdvantageContext, use_context
from verl_focal.estimators.rows import OLD_LOG_PROB_SUM, OLD_LOG_PROBS
from verl_focal.estimators.spec import EstimatorSpec

__all__ = ["AdvantageStep", "input_metrics"]

T = TypeVar("T")


class AdvantageStep:
    """The advantage work of one step for estimator ``spec`` (see the module docstring).

    Args:
        spec: the estimator's :class:`~verl_focal.estimators.spec.EstimatorSpec`.
        algorithm_config: verl's ``algorithm`` config (OmegaConf node, dict or ``AlgoConfig``), or
            already parsed :class:`~verl_focal.config.schema.AlgorithmSettings`.
    """

    def __init__(self, spec: EstimatorSpec, algorithm_config: Any) -> None:
        self.spec = spec
        self.settings: AlgorithmSettings = parse_settings(algorithm_config)
        #: the per-row fields the context must carry for this config
        self.needs: frozenset[str] = spec.needs_for(self.settings)

    def attach(self, ctx: AdvantageContext) -> AdvantageContext:
        """Hand the parsed settings to ``ctx`` (for ``prepare`` and the estimator)."""
        ctx.settings = self.settings
        return ctx

    def prefetch(self, ctx: AdvantageContext) -> None:
        """Start the estimator's slow group-level work early (no-op without a ``prefetch``)."""
        self.attach(ctx)
        if self.spec.prefetch is not None:
            self.spec.prefetch(ctx, self.settings)

    def run(self, ctx: AdvantageContext, advantage_call: Callable[[], T]) -> T:
        """``prepare`` (timed as ``verl_focal/prepare_s``), then ``advantage_call()`` inside
        ``use_context(ctx)`` (timed as ``verl_focal/advantage_s``); returns its result.
        :func:`input_metrics` then records which per-row inputs arrived (the hook around verl's
        ``compute_advantage`` adds the old log-probs inside the call)."""
        self.attach(ctx)
        if self.spec.prepare is not None:
            t0 = time.perf_counter()
            self.spec.prepare(ctx, self.settings)
            ctx.metrics["verl_focal/prepare_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        with use_context(ctx):
            out = advantage_call()
        ctx.metrics["verl_focal/advantage_s"] = time.perf_counter() - t0
        ctx.metrics.update(input_metrics(ctx, self.needs))  # after the call: the old log-probs join it there
        return out


def input_metrics(ctx: AdvantageContext, needs: frozenset[str]) -> dict[str, float]:
    """Which per-row inputs reached the step, as fractions of the batch's rows.

    ``verl_focal/acc_rows_frac``: rows with a finite ``acc`` from the reward extras (the rest
    fall back to the reward threshold, or leave their group, as each estimator documents);
    ``verl_focal/old_log_prob_rows_frac`` (only when the estimator needs old log-probs): rows
    with a finite sequence log-prob.  Both are 1.0 when every input arrived.
    """
    n = max(1, len(ctx.uids))
    acc = ctx.acc
    out = {"verl_focal/acc_rows_frac": 0.0 if acc is None else float(np.isfinite(acc).sum()) / n}
    if OLD_LOG_PROBS in needs:
        col = ctx.extras.get(OLD_LOG_PROB_SUM)
        ok = 0 if col is None else int(np.isfinite(np.asarray(col, dtype=np.float64)).sum())
        out["verl_focal/old_log_prob_rows_frac"] = ok / n
    return out
