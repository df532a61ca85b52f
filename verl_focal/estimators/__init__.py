"""Our advantage estimators in verl's calling convention, and their input type (:mod:`.context`).

Nothing here imports verl, nor :mod:`verl_focal.step` (which sits above): :mod:`verl_focal.integration.registration`
writes :func:`all_specs` into verl's registry, and the trainer hooks (:mod:`verl_focal.integration.hooks`) build each
step's :class:`~verl_focal.estimators.context.AdvantageContext` through :mod:`verl_focal.step` and run
:class:`~verl_focal.step.seam.AdvantageStep`.

* :mod:`.focal` -- ``f_grpo`` (F-GRPO; F-DAPO and F-CISPO with verl's settings);
* :mod:`.cue` -- ``cue_grpo``, ``f_cue_grpo`` (Cue-GRPO), with :mod:`.cue_step` (partition before the call);
* :mod:`.passk` -- ``passk_grpo`` (Pass@k Training);
* :mod:`.unlikely` -- ``unlikely_grpo`` (the unlikeliness reward);
* :mod:`.maxrl` -- ``maxrl`` (MaxRL);
* :mod:`.ds_grpo` -- ``ds_grpo`` (differential smoothing); with ``unlikely_grpo`` it reads the old
  log-probs through :mod:`.old_log_probs`.
"""

from __future__ import annotations

from verl_focal.estimators.spec import EstimatorSpec

__all__ = ["EstimatorSpec", "all_specs", "sections_by_estimator"]


def all_specs() -> list[EstimatorSpec]:
    """Every estimator of ours, in registration order."""
    from verl_focal.estimators import cue, ds_grpo, focal, maxrl, passk, unlikely

    return [focal.SPEC, *cue.SPECS, passk.SPEC, unlikely.SPEC, maxrl.SPEC, ds_grpo.SPEC]


def sections_by_estimator() -> dict[str, frozenset[str]]:
    """Each estimator of ours -> the ``algorithm.*`` sections it reads (``{"f_grpo": {"focal"}, ...}``)."""
    return {s.name: s.sections for s in all_specs()}
