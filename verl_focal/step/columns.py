"""Unwrapping verl's per-row columns: TransferQueue, tensordict and numpy containers as plain Python rows.

A TransferQueue read gives ``NonTensorData``-wrapped items, jagged nested tensors of token ids and
``extra_fields`` dicts; a DataProto gives numpy object arrays.  These helpers turn each into plain lists and
arrays for the row builders (:mod:`verl_focal.step.rows`, :mod:`verl_focal.step.tq_rows`); a tensor column is
taken to the host once (``.cpu()``), wherever it lies.  No verl import.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

__all__ = ["as_list", "last_user_text", "nested_rows", "reward_extra_info_of"]


def as_list(column: Any) -> list:
    """A TransferQueue / tensordict / numpy column as a plain list (NonTensorData unwrapped)."""
    if column is None:
        return []
    if isinstance(column, torch.Tensor):  # wherever it lies: to the host once
        column = column.detach().cpu()
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
        return list(column.detach().cpu().numpy())
    return [x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x) for x in as_list(column)]


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
