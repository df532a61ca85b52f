"""Turning verl's per-row containers into an :class:`AdvantageContext`: the step's row builders.

The v1 trainer keeps reward extras in TransferQueue's ``extra_fields`` column
(``extra_fields[i]["reward_extra_info"][key]``); a colocated reward model writes
them as top-level columns instead; the DataProto trainers keep them in
``DataProto.non_tensor_batch``.  :class:`RowSource` is what a hook reads them into, and
:func:`context_from_rows` the one builder of a step's context from it (:func:`dataproto_rows` reads a
DataProto; :func:`~verl_focal.step.tq_rows.tq_rows` the v1 trainer's TransferQueue; the columns are unwrapped by
:mod:`verl_focal.step.columns`).  No verl import: everything here is unit-testable on plain Python data.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from verl_focal.estimators.context import AdvantageContext, LazyTexts
from verl_focal.estimators.old_log_probs import OLD_LOG_PROBS, log_prob_columns_of
from verl_focal.partition.signatures import SIG_KEY
from verl_focal.step.columns import last_user_text
from verl_focal.step.decode import host_rows

__all__ = [
    "RowSource",
    "attach_old_log_probs",
    "build_context",
    "context_from_rows",
    "dataproto_rows",
    "extras_column",
    "text_rows",
    "TEXT_NEEDS",
]

#: needs that are not reward extras
TEXT_NEEDS = frozenset({"responses", "problems"})


def _to_float(x: Any) -> float:
    if x is None:
        return math.nan
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def extras_column(infos: Sequence[dict], key: str) -> np.ndarray | None:
    """Column ``key`` of a list of reward-extra dicts; None when no row has it."""
    if not any(key in info for info in infos):
        return None
    col = np.empty(len(infos), dtype=object)
    col[:] = [info.get(key) for info in infos]
    return col


def build_context(
    uids: Iterable[Any],
    needs: frozenset[str],
    extra_infos: Sequence[dict] | None = None,
    problems: list[str] | None = None,
    acc_key: str = "acc",
    source: str = "manual",
) -> AdvantageContext:
    """Assemble the context for the fields an estimator declared in ``needs``.

    ``acc`` is always collected when present (it is cheap and every estimator of
    ours uses correctness); missing values become NaN, so the estimator can fall
    back per row and count it.  The other reward extras in ``needs`` become ``extras``;
    texts and old log-probs are added by :func:`context_from_rows` and
    :func:`attach_old_log_probs`.
    """
    uids = np.asarray(list(uids), dtype=object)
    infos = list(extra_infos) if extra_infos is not None else [{} for _ in range(len(uids))]
    acc_col = extras_column(infos, acc_key)
    acc = None if acc_col is None else np.array([_to_float(v) for v in acc_col], dtype=np.float64)
    extras = {}
    for name in sorted(needs - TEXT_NEEDS - {"acc", acc_key, OLD_LOG_PROBS}):
        col = extras_column(infos, name)
        if col is not None:
            extras[name] = col
    return AdvantageContext(
        uids=uids, acc=acc, problems=problems if "problems" in needs else None, extras=extras, source=source,
    )


@dataclass
class RowSource:
    """Where one step's per-row fields come from: verl's TransferQueue (the v1 trainer) or a DataProto.

    Attributes:
        name: the context's ``source``.
        uids: the group uid of every row, in verl's batch order.
        extras: every row's reward extras (``acc``, ``cue_sig``, ...), a dict per row.
        problems: returns the problem text of every row (called only when the estimator needs it).
        response_ids: returns the response token ids of the given rows (an int array), one array each.
        decode: token ids -> texts (a :class:`~verl_focal.step.decode.BatchDecoder`), or None where
            no tokenizer is at hand.
    """

    name: str
    uids: list
    extras: list[dict]
    problems: Callable[[], list[str]] | None = None
    response_ids: Callable[[np.ndarray], list] | None = None
    decode: Callable[[list], list[str]] | None = None


def context_from_rows(rows: RowSource, needs: frozenset[str], acc_key: str = "acc") -> AdvantageContext:
    """The step's context from ``rows``: the one builder for every trainer (docs/architecture.md).

    Response texts are a :class:`~verl_focal.estimators.context.LazyTexts`: the rows an estimator is
    expected to read (:func:`text_rows`) are fetched and decoded at once, in one batch, any other on demand.
    """
    problems = rows.problems() if "problems" in needs and rows.problems is not None else None
    ctx = build_context(rows.uids, needs, rows.extras, problems=problems, acc_key=acc_key, source=rows.name)
    if "responses" in needs:
        if rows.decode is None or rows.response_ids is None:
            from verl_focal.config.errors import ConfigError

            raise ConfigError(
                f"the estimator partitions response texts but the {rows.name} rows come without a tokenizer: launch "
                "with `python -m verl_focal.main_ppo` (its TaskRunners hand the hook the tokenizer), or cluster "
                "reward-side signatures (algorithm.cue.source=signature with reward_kwargs.cue_set)")
        sigs = ctx.extras.get(SIG_KEY) if SIG_KEY in needs else None
        ctx.responses = LazyTexts(len(ctx), rows.response_ids, rows.decode, preload=text_rows(ctx.uids, ctx.acc, sigs))
    return ctx


def dataproto_rows(tensors: Any, non_tensor: dict, decode: Callable[[list], list[str]] | None,
                   name: str = "dataproto") -> RowSource:
    """The :class:`RowSource` of a DataProto's ``batch`` (``tensors``) and ``non_tensor_batch``, whose
    columns other than ``uid`` are the reward extras; problems from ``raw_prompt`` (else the decoded
    ``prompts`` of each uid's first row), response ids from ``responses`` under ``response_mask``.  The tensors
    may lie on a GPU (a caller's): each read takes what it needs to the host once, with ``.cpu()``."""
    uids = list(non_tensor["uid"])
    n = len(uids)
    infos: list[dict] = [{} for _ in range(n)]
    for key, col in non_tensor.items():
        if key != "uid" and len(col) == n:
            for i, v in enumerate(col):
                infos[i][key] = v

    def problems() -> list[str]:
        if "raw_prompt" in non_tensor:
            return [last_user_text(p) for p in non_tensor["raw_prompt"]]
        if decode is None:
            return [""] * n
        # one prompt per uid (verl gives a prompt's rollouts its uid): decode each group's first row, copied to the
        # host in one go (the prompts may lie on a GPU)
        from verl_focal.core.groups import group_ids

        gid = group_ids(uids)[0].numpy()
        _, first = np.unique(gid, return_index=True)
        prompts = tensors["prompts"]
        texts = decode(host_rows(prompts.index_select(0, torch.as_tensor(first, device=prompts.device))))
        return [texts[g] for g in gid.tolist()]

    def response_ids(rows: np.ndarray) -> list:
        """The ids of ``rows`` under their response mask, as host arrays: one copy of those rows to the host."""
        resp = tensors["responses"]
        pick = torch.as_tensor(rows, dtype=torch.long, device=resp.device)
        ids = resp.index_select(0, pick).detach().cpu().numpy()
        if "response_mask" not in tensors.keys():
            return list(ids)
        mask = tensors["response_mask"].index_select(0, pick).detach().cpu().numpy().astype(bool)
        return [r[m] for r, m in zip(ids, mask)]

    return RowSource(name, uids, infos, problems, response_ids, decode)


def attach_old_log_probs(ctx: AdvantageContext, tensors: Any) -> None:
    """Add the sequence log-prob columns of ``tensors`` (a DataProto's ``batch``, the rows of ``ctx``) to
    ``ctx.extras`` (:data:`OLD_LOG_PROB_SUM`, :data:`OLD_LOG_PROB_TOKENS`); nothing when absent."""
    cols = log_prob_columns_of(tensors)
    if cols is not None:
        ctx.extras.update(cols)


def text_rows(uids: Sequence[Any], acc: np.ndarray | None, signatures: Sequence[Any] | None = None) -> np.ndarray:
    """Boolean per row: the rows whose response text a rarity-aware estimator is expected to read.

    Credit redistribution (docs/methods.md §5) only partitions the correct rollouts of groups
    with at least two correct and at least one other rollout: elsewhere the multiplier is 1 or
    the advantage 0.  So the expected rows are the correct rows (``acc > 0.5``) of such groups,
    plus every row of a group where some ``acc`` is missing (the estimator then decides
    correctness itself).  With ``signatures`` (the ``cue_sig`` column), groups whose expected rows
    all carry a signature string are left out: they are clustered from the signatures.

    This is a prediction used to decode in one batch before the estimator runs; a
    :class:`~verl_focal.estimators.context.LazyTexts` decodes any other row on demand.
    """
    from verl_focal.core.groups import group_ids

    n = len(uids)
    if acc is None:
        return np.ones(n, dtype=bool)
    gid_t, n_groups = group_ids(uids)
    gid = gid_t.numpy()
    acc = np.asarray(acc, dtype=np.float64)
    have = np.isfinite(acc)
    correct = have & (acc > 0.5)
    n_pos = np.bincount(gid, weights=correct, minlength=n_groups)
    n_all = np.bincount(gid, minlength=n_groups)
    unknown = np.bincount(gid, weights=~have, minlength=n_groups) > 0
    mixed = (n_pos >= 2) & (n_pos < n_all)
    rows = (correct & mixed[gid]) | unknown[gid]
    if signatures is not None:
        signed = np.fromiter((isinstance(s, str) and ":" in s for s in signatures), dtype=bool, count=n)
        needs_text = np.bincount(gid, weights=rows & ~signed, minlength=n_groups) > 0
        rows &= needs_text[gid]
    return rows
