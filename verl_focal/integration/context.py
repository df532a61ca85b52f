"""The one explicit channel from the trainer hook to our estimators.

verl calls a registered estimator with only ``token_level_rewards``,
``response_mask``, ``config`` and ``index`` (``compute_advantage`` in
verl/trainer/ppo/ray_trainer.py and the v1 trainer's ``_compute_advantage``).  Everything else an
estimator needs per row -- correctness ``acc`` from the reward extras, the
decoded response text, the problem, precomputed cluster labels -- travels in an
:class:`AdvantageContext` that the hook installs with :func:`use_context`
around verl's own advantage computation.  The estimator reads it with
:func:`current_context` and checks, row by row, that it describes the batch it
was given (:meth:`AdvantageContext.check_alignment`).

No verl import here.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["AdvantageContext", "ContextAlignmentError", "use_context", "current_context"]


class ContextAlignmentError(RuntimeError):
    """The hook's per-row data does not line up with the rows verl handed the estimator."""


@dataclass
class AdvantageContext:
    """Per-row data for one advantage computation, aligned with verl's ``index``.

    Attributes
    ----------
    uids:            group uid of every row, exactly as verl passes ``index``.
    acc:             float array, 1.0 correct / 0.0 wrong, NaN where the row had no ``acc`` extra; or None.
    responses:       decoded response text per row, or None.
    problems:        the prompt's (last user message) text per row, or None.
    extras:          other reward extras by name (e.g. ``cue_sig``), each an array of len(uids).
    cluster_labels:  int array, the strategy cluster of each row (-1: not partitioned), or None.
    metrics:         diagnostics the estimator and ``prepare`` steps add; the hook logs them.
    source:          where the rows came from ("v1-transferqueue", "legacy-dataproto", "manual", ...).
    """

    uids: np.ndarray
    acc: np.ndarray | None = None
    responses: list[str] | None = None
    problems: list[str] | None = None
    extras: dict[str, np.ndarray] = field(default_factory=dict)
    cluster_labels: np.ndarray | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    source: str = "manual"

    def __post_init__(self) -> None:
        self.uids = np.asarray(self.uids, dtype=object)
        n = len(self.uids)
        for name in ("acc", "responses", "problems", "cluster_labels"):
            value = getattr(self, name)
            if value is not None and len(value) != n:
                raise ContextAlignmentError(f"AdvantageContext.{name} has {len(value)} rows but uids has {n}")
        for name, value in self.extras.items():
            if len(value) != n:
                raise ContextAlignmentError(f"AdvantageContext.extras[{name!r}] has {len(value)} rows but uids has {n}")
        if self.acc is not None:
            self.acc = np.asarray(self.acc, dtype=np.float64)

    def __len__(self) -> int:
        return len(self.uids)

    def check_alignment(self, index: Any) -> None:
        """Raise :class:`ContextAlignmentError` unless ``index`` equals ``uids`` row by row."""
        if index is None:
            raise ContextAlignmentError("verl passed no `index` (uid) to the estimator; the batch needs a `uid` column")
        idx = np.asarray(index, dtype=object)
        if idx.shape != self.uids.shape:
            raise ContextAlignmentError(
                f"the hook fetched {len(self.uids)} rows but verl's batch has {len(idx)}: "
                "the context belongs to another batch"
            )
        mismatch = np.flatnonzero(idx != self.uids)
        if mismatch.size:
            i = int(mismatch[0])
            raise ContextAlignmentError(
                f"row {i} of verl's batch has uid {idx[i]!r} but the hook's row {i} has uid {self.uids[i]!r} "
                f"({mismatch.size} rows differ); per-row extras would be attached to the wrong rollouts"
            )


_CURRENT: contextvars.ContextVar[AdvantageContext | None] = contextvars.ContextVar("verl_focal_adv_ctx", default=None)


@contextlib.contextmanager
def use_context(ctx: AdvantageContext) -> Iterator[AdvantageContext]:
    """Install ``ctx`` for estimators called inside the ``with`` block."""
    token = _CURRENT.set(ctx)
    try:
        yield ctx
    finally:
        _CURRENT.reset(token)


def current_context() -> AdvantageContext | None:
    """The context installed by the enclosing :func:`use_context`, or None."""
    return _CURRENT.get()
