"""Turning verl's per-row containers into an :class:`AdvantageContext`.

The v1 trainer keeps reward extras in TransferQueue's ``extra_fields`` column
(``extra_fields[i]["reward_extra_info"][key]``); a colocated reward model writes
them as top-level columns instead; the legacy trainer keeps them in
``DataProto.non_tensor_batch``.  These helpers normalise all three, without
importing verl, so they are unit-testable on plain Python data.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from verl_focal.integration.context import AdvantageContext

__all__ = [
    "as_list",
    "reward_extra_info_of",
    "last_user_text",
    "extras_column",
    "build_context",
    "text_rows",
    "nested_rows",
    "TEXT_NEEDS",
    "SIGNATURE_EXTRA",
    "sequence_log_prob_columns",
    "OLD_LOG_PROBS",
    "OLD_LOG_PROB_SUM",
    "OLD_LOG_PROB_TOKENS",
]

#: needs that are not reward extras
TEXT_NEEDS = frozenset({"responses", "problems"})
#: reward extra holding a response's cue signature ("<catalogue version>:<codes>", made by
#: verl_focal.reward.compute_score with reward kwarg cue_set)
SIGNATURE_EXTRA = "cue_sig"
#: the need for the rollout policy's per-token log-probs (verl's ``old_log_probs``), reduced per row
OLD_LOG_PROBS = "old_log_probs"
#: ``AdvantageContext.extras`` keys the hook fills for :data:`OLD_LOG_PROBS`: the summed log-prob of the
#: response tokens (response_mask = 1) and their number, one float per row
OLD_LOG_PROB_SUM = "old_log_probs:sum"
OLD_LOG_PROB_TOKENS = "old_log_probs:tokens"


def sequence_log_prob_columns(log_probs: Any, masks: Any) -> dict[str, np.ndarray]:
    """Per-row Σ log π_old over response tokens and the token count, from padded or per-row tensors.

    ``log_probs`` / ``masks``: a (bs, L) tensor each, or sequences of 1-D per-row tensors (TransferQueue's
    jagged layout).  Returns ``{OLD_LOG_PROB_SUM: (bs,), OLD_LOG_PROB_TOKENS: (bs,)}`` float64 arrays.
    """
    import torch

    if isinstance(log_probs, torch.Tensor) and not log_probs.is_nested:
        lp = log_probs.detach().to(torch.float64)
        m = torch.as_tensor(masks).detach().to(torch.float64)
        sums, counts = (lp * m).sum(-1), m.sum(-1)
    elif getattr(log_probs, "is_nested", False) and getattr(masks, "is_nested", False) and bool(
        torch.equal(log_probs.offsets(), masks.offsets())
    ):  # jagged rows of equal lengths (verl's v1 layout): segment sums over the flat values, in float64
        offsets = log_probs.offsets().cpu().numpy()
        lengths = np.diff(offsets)
        mask = masks.values().detach().cpu()
        # a 0/1 mask: the product is exact in the log-probs' own dtype; the sums accumulate in float64
        values = log_probs.values().detach().cpu()
        if values.dtype not in (torch.float32, torch.float64):  # bfloat16 has no numpy dtype
            values = values.float()
        flat = (values * mask).numpy()
        starts = offsets[:-1][lengths > 0]  # reduceat would take an empty row's start as one element
        sums = np.zeros(len(lengths), dtype=np.float64)
        counts = np.zeros(len(lengths), dtype=np.float64)
        if starts.size:
            sums[lengths > 0] = np.add.reduceat(flat, starts, dtype=np.float64)
            counts[lengths > 0] = np.add.reduceat(mask.numpy(), starts, dtype=np.float64)
        return {OLD_LOG_PROB_SUM: sums, OLD_LOG_PROB_TOKENS: counts}
    else:
        lp_rows = log_probs.unbind() if hasattr(log_probs, "unbind") else list(log_probs)
        m_rows = masks.unbind() if hasattr(masks, "unbind") else list(masks)
        if len(lp_rows) != len(m_rows):
            raise ValueError(f"old_log_probs has {len(lp_rows)} rows but response_mask has {len(m_rows)}")
        sums_l, counts_l = [], []
        for lp_i, m_i in zip(lp_rows, m_rows):
            lp_i = torch.as_tensor(lp_i).detach().to(torch.float64).flatten()
            m_i = torch.as_tensor(m_i).detach().to(torch.float64).flatten()[: lp_i.numel()]
            sums_l.append(float((lp_i[: m_i.numel()] * m_i).sum()))
            counts_l.append(float(m_i.sum()))
        sums, counts = torch.tensor(sums_l, dtype=torch.float64), torch.tensor(counts_l, dtype=torch.float64)
    return {OLD_LOG_PROB_SUM: sums.cpu().numpy(), OLD_LOG_PROB_TOKENS: counts.cpu().numpy()}


def as_list(column: Any) -> list:
    """A TransferQueue / tensordict / numpy column as a plain list (NonTensorData unwrapped)."""
    if column is None:
        return []
    if hasattr(column, "tolist") and not isinstance(column, list):
        items = column.tolist()
    else:
        items = list(column)
    return [getattr(x, "data", x) for x in items]


def nested_rows(column: Any) -> list:
    """A (jagged nested / padded / list) column of token ids as one numpy array per row.

    For a jagged nested tensor the rows are views of its flat values (no per-token Python
    objects); a plain tensor gives its rows; anything else goes through :func:`as_list`.
    """
    if getattr(column, "is_nested", False):
        try:  # jagged layout (TransferQueue's): one flat buffer and row offsets
            values = column.values().cpu().numpy()
            offsets = column.offsets().cpu().numpy()
        except (RuntimeError, AttributeError, ValueError):  # strided nested layout
            return [t.cpu().numpy() for t in column.unbind()]
        return [values[a:b] for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]
    if hasattr(column, "numpy") and getattr(column, "ndim", 0) == 2:
        return list(column.cpu().numpy())
    return [np.asarray(x) for x in as_list(column)]


def reward_extra_info_of(extra_fields: Any) -> dict:
    """``extra_fields[i]`` -> its ``reward_extra_info`` dict ({} when absent)."""
    extra_fields = getattr(extra_fields, "data", extra_fields)
    if isinstance(extra_fields, dict):
        info = extra_fields.get("reward_extra_info", {})
        return info if isinstance(info, dict) else {}
    return {}


def last_user_text(raw_prompt: Any) -> str:
    """The problem statement: content of the last ``user`` message of a chat prompt (or the string itself)."""
    raw_prompt = getattr(raw_prompt, "data", raw_prompt)
    if isinstance(raw_prompt, str):
        return raw_prompt
    if isinstance(raw_prompt, np.ndarray):
        raw_prompt = raw_prompt.tolist()
    if isinstance(raw_prompt, (list, tuple)):
        for msg in reversed(raw_prompt):
            if isinstance(msg, dict) and msg.get("role") == "user":
                content = msg.get("content", "")
                if isinstance(content, list):  # multimodal content parts
                    return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
                return str(content)
    return "" if raw_prompt is None else str(raw_prompt)


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
    responses: list[str] | None = None,
    problems: list[str] | None = None,
    acc_key: str = "acc",
    source: str = "manual",
    old_log_probs: dict[str, np.ndarray] | None = None,
) -> AdvantageContext:
    """Assemble the context for the fields an estimator declared in ``needs``.

    ``acc`` is always collected when present (it is cheap and every estimator of
    ours uses correctness); missing values become NaN, so the estimator can fall
    back per row and count it.  ``old_log_probs`` (from :func:`sequence_log_prob_columns`) is
    attached as the extras :data:`OLD_LOG_PROB_SUM` / :data:`OLD_LOG_PROB_TOKENS` when
    :data:`OLD_LOG_PROBS` is needed.
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
    if OLD_LOG_PROBS in needs and old_log_probs is not None:
        extras.update(old_log_probs)
    return AdvantageContext(
        uids=uids,
        acc=acc,
        responses=responses if "responses" in needs else None,
        problems=problems if "problems" in needs else None,
        extras=extras,
        source=source,
    )


def text_rows(uids: Sequence[Any], acc: np.ndarray | None, signatures: Sequence[Any] | None = None) -> np.ndarray:
    """Boolean per row: the rows whose response text a rarity-aware estimator is expected to read.

    Credit redistribution (docs/methods.md §5) only partitions the correct rollouts of groups
    with at least two correct and at least one other rollout: elsewhere the multiplier is 1 or
    the advantage 0.  So the expected rows are the correct rows (``acc > 0.5``) of such groups,
    plus every row of a group where some ``acc`` is missing (the estimator then decides
    correctness itself).  With ``signatures`` (the ``cue_sig`` column), groups whose expected rows
    all carry a signature string are left out: they are clustered from the signatures.

    This is a prediction used to decode in one batch before the estimator runs; a
    :class:`~verl_focal.integration.context.LazyTexts` decodes any other row on demand.
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
