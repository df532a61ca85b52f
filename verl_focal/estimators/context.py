"""The per-row data of one advantage step, and the one channel from the trainer hook to verl's dispatch.

verl calls a registered estimator with only ``token_level_rewards``,
``response_mask``, ``config`` and ``index`` (``compute_advantage`` in
verl/trainer/ppo/ray_trainer.py, which every verl trainer calls).  Everything else an
estimator needs per row -- correctness ``acc`` from the reward extras, the
decoded response text, the problem, precomputed cluster labels -- travels in an
:class:`AdvantageContext`, an argument of our estimators (``ctx=``).  The step seam
(:func:`~verl_focal.step.seam.finish`) installs it with :func:`use_context` around
verl's own advantage computation; the hook around verl's ``compute_advantage`` reads it once
with :func:`current_context` and hands it to the estimator, which checks, row by row, that it
describes the batch it was given (:meth:`AdvantageContext.check_alignment`).

No verl import here.
"""

from __future__ import annotations

import contextlib
import contextvars
import operator
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from verl_focal.config.schema import AlgorithmSettings

__all__ = ["AdvantageContext", "ContextAlignmentError", "LazyTexts", "use_context", "current_context", "text_metrics"]


class ContextAlignmentError(RuntimeError):
    """The hook's per-row data does not line up with the rows verl handed the estimator."""


@dataclass
class AdvantageContext:
    """Per-row data for one advantage computation, aligned with verl's ``index``.

    Attributes
    ----------
    uids:            group uid of every row, exactly as verl passes ``index``.
    acc:             float array, 1.0 correct / 0.0 wrong, NaN where the row had no ``acc`` extra; or None.
    responses:       decoded response text per row (a list, or a :class:`LazyTexts` that decodes on
                     first use), or None.
    problems:        the prompt's (last user message) text per row, or None.
    extras:          other reward extras by name (e.g. ``cue_sig``), each an array of len(uids).
    cluster_labels:  int array, the strategy cluster of each row (-1: not partitioned), or None.
    metrics:         diagnostics the estimator and ``prepare`` steps add; the hook logs them.
    source:          where the rows came from ("v1-transferqueue", "dataproto", "manual", ...).
    sessions:        ``(final_rows, owner)`` when the context holds only each agent session's final output
                     (v1 multi-output sessions, :func:`~verl_focal.step.sessions.session_finals`): the
                     rows of verl's batch it describes, and each batch row's position among them.
    prefetched:      group-level results an estimator's ``prefetch`` computed for exactly these rows, by name
                     (the cue partition's labels and metrics); :meth:`select` leaves them behind, so a
                     narrowed context has none and ``prepare`` does the work for its rows.
    settings:        the step's ``algorithm`` config, parsed once (:func:`~verl_focal.config.schema.parse_settings`)
                     by :class:`~verl_focal.step.seam.AdvantageStep`; the estimator reads it instead of
                     parsing verl's ``config`` again.  None: the estimator parses ``config`` itself.
    """

    uids: np.ndarray
    acc: np.ndarray | None = None
    responses: Sequence[str] | None = None
    problems: list[str] | None = None
    extras: dict[str, np.ndarray] = field(default_factory=dict)
    cluster_labels: np.ndarray | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    source: str = "manual"
    settings: AlgorithmSettings | None = None
    prefetched: dict[str, Any] = field(default_factory=dict)
    sessions: tuple[np.ndarray, np.ndarray] | None = None

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

    def select(self, rows: np.ndarray) -> AdvantageContext:
        """The context of ``rows`` only (an int array, in that order), e.g. the final output of each
        agent session.  Texts stay lazy; ``metrics`` is the same dict, so what the sub-context's
        steps record reaches the hook; ``prefetched`` (computed for other rows) is left behind."""
        rows = np.asarray(rows, dtype=np.int64)
        texts = self.responses
        if isinstance(texts, LazyTexts):
            texts = texts.select(rows)
        elif texts is not None:
            texts = [texts[i] for i in rows.tolist()]
        return AdvantageContext(
            uids=self.uids[rows],
            acc=None if self.acc is None else self.acc[rows],
            responses=texts,
            problems=None if self.problems is None else [self.problems[i] for i in rows.tolist()],
            extras={k: np.asarray(v)[rows] for k, v in self.extras.items()},
            cluster_labels=None if self.cluster_labels is None else np.asarray(self.cluster_labels)[rows],
            metrics=self.metrics,
            source=self.source,
            settings=self.settings,
        )

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


class LazyTexts(Sequence):
    """Per-row texts that are fetched and decoded only when an estimator reads them.

    Decoding every response of a step costs seconds at production sizes, and most rows'
    text is never read (wrong rollouts, groups clustered from reward-side signatures).
    ``preload`` (boolean per row) names the rows expected to be read: they are fetched and
    decoded at once, in one batch.  Reading any other row fetches and decodes *all* rows not
    yet loaded, again in one batch, so a wrong guess costs at most one more batch and never
    changes a text.

    ``fetch_ids(rows)`` returns the token ids of ``rows`` (an int array, in that order);
    ``decode(ids)`` the texts.  Time spent in each and the number of decoded rows are kept in
    :attr:`fetch_s`, :attr:`decode_s`, :attr:`decoded_rows` for the step metrics.
    """

    def __init__(
        self,
        n: int,
        fetch_ids: Callable[[np.ndarray], list],
        decode: Callable[[list], list[str]],
        preload: np.ndarray | None = None,
    ) -> None:
        self._texts: list[str | None] = [None] * n
        self._loaded = np.zeros(n, dtype=bool)
        self._fetch_ids, self._decode = fetch_ids, decode
        self.fetch_s = self.decode_s = 0.0
        self.decoded_rows = self.batches = 0
        if preload is not None:
            rows = np.flatnonzero(np.asarray(preload, dtype=bool))
            if rows.size:
                self._load(rows)

    def _load(self, rows: np.ndarray) -> None:
        t0 = time.perf_counter()
        ids = self._fetch_ids(rows)
        t1 = time.perf_counter()
        texts = self._decode(ids)
        self.decode_s += time.perf_counter() - t1
        self.fetch_s += t1 - t0
        if len(texts) != len(rows):
            raise RuntimeError(f"decoding {len(rows)} rows gave {len(texts)} texts")
        for i, text in zip(rows.tolist(), texts):
            self._texts[i] = text
        self._loaded[rows] = True
        self.decoded_rows += int(rows.size)
        self.batches += 1

    def _load_rest(self) -> None:
        rest = np.flatnonzero(~self._loaded)
        if rest.size:
            self._load(rest)

    @property
    def loaded(self) -> np.ndarray:
        """Boolean per row: already decoded."""
        return self._loaded.copy()

    def __len__(self) -> int:
        return len(self._texts)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = operator.index(i)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(f"row {i} out of range for {len(self)} rows")
        if not self._loaded[i]:
            self._load_rest()
        return self._texts[i]

    def __iter__(self) -> Iterator[str]:
        self._load_rest()
        return iter(list(self._texts))  # type: ignore[arg-type]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, LazyTexts)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LazyTexts({len(self)} rows, {int(self._loaded.sum())} decoded)"

    def select(self, rows: np.ndarray) -> LazyTexts:
        """The texts of ``rows`` (an int array, in that order), still lazy: what is decoded here is kept,
        the rest is fetched through this object's ``fetch_ids``; the timings carry on from here."""
        rows = np.asarray(rows, dtype=np.int64)
        sub = LazyTexts(len(rows), lambda r: self._fetch_ids(rows[r]), self._decode)
        sub._texts = [self._texts[i] for i in rows.tolist()]
        sub._loaded = self._loaded[rows].copy()
        sub.fetch_s, sub.decode_s, sub.decoded_rows, sub.batches = self.fetch_s, self.decode_s, self.decoded_rows, 0
        return sub


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


def text_metrics(ctx: AdvantageContext) -> dict[str, float]:
    """Step metrics of the response text the hook decoded (empty when no text was needed).

    ``verl_focal/decode_s`` is the detokenisation time, ``verl_focal/decoded_rows`` the rows
    decoded, and the time to read their ids is added to ``verl_focal/fetch_s``.
    """
    texts = ctx.responses
    if not isinstance(texts, LazyTexts):
        return {}
    return {
        "verl_focal/fetch_s": ctx.metrics.get("verl_focal/fetch_s", 0.0) + texts.fetch_s,
        "verl_focal/decode_s": texts.decode_s,
        "verl_focal/decoded_rows": float(texts.decoded_rows),
    }
