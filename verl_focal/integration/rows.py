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
]

#: needs that are not reward extras
TEXT_NEEDS = frozenset({"responses", "problems"})
#: reward extra holding a response's cue signature ("<catalogue version>:<codes>", made by
#: verl_focal.reward.compute_score with reward kwarg cue_set)
SIGNATURE_EXTRA = "cue_sig"


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
) -> AdvantageContext:
    """Assemble the context for the fields an estimator declared in ``needs``.

    ``acc`` is always collected when present (it is cheap and every estimator of
    ours uses correctness); missing values become NaN, so the estimator can fall
    back per row and count it.
    """
    uids = np.asarray(list(uids), dtype=object)
    infos = list(extra_infos) if extra_infos is not None else [{} for _ in range(len(uids))]
    acc_col = extras_column(infos, acc_key)
    acc = None if acc_col is None else np.array([_to_float(v) for v in acc_col], dtype=np.float64)
    extras = {}
    for name in sorted(needs - TEXT_NEEDS - {"acc", acc_key}):
        col = extras_column(infos, name)
        if col is not None:
            extras[name] = col
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
