"""Whether a run reads a key: the one predicate behind the unread-key check and the did-you-mean.

Our sections (``algorithm.focal.*``, ...) are read when the run's estimator reads them
(:meth:`~verl_focal.estimators.spec.EstimatorSpec.reads`); verl's keys by the liveness table
(:mod:`.liveness`).  Its own module so that :mod:`.compose` (the hint) and :mod:`.unread` (the
check) share it without importing each other.  No verl import.
"""

from __future__ import annotations

from typing import Any

from verl_focal.config.key_names import config_get
from verl_focal.integration.startup.liveness import is_live

__all__ = ["reads_here", "run_estimator"]


def run_estimator(tree: Any) -> tuple[Any, Any]:
    """The run's ``algorithm.adv_estimator`` as set, and our :class:`~verl_focal.estimators.spec.EstimatorSpec` of
    that name (``verl_focal.``-prefixed or not), None for verl's estimators."""
    from verl_focal.estimators import all_specs

    est = config_get(tree, "algorithm.adv_estimator")
    name = str(getattr(est, "value", est)).removeprefix("verl_focal.")
    return est, next((s for s in all_specs() if s.name == name), None)


def reads_here(path: str, tree: Any) -> bool:
    """Whether the run configured by ``tree`` reads ``path``: a key of our sections when the estimator reads it
    (:meth:`~verl_focal.estimators.spec.EstimatorSpec.reads`; verl's estimators read none), verl's keys by the
    liveness table.  The did-you-mean's predicate: a hint never names a key the same check calls unread."""
    from verl_focal.config.schema import SECTIONS

    parts = path.split(".")
    if len(parts) >= 3 and parts[0] == "algorithm" and parts[1] in SECTIONS:
        spec = run_estimator(tree)[1]
        return spec is not None and spec.reads(parts[1], parts[2])
    return is_live(path, tree)
