"""The v1 trainer's rows: one TransferQueue read of a batch as a :class:`~verl_focal.step.rows.RowSource`.

The one module of :mod:`verl_focal.step` that imports ``transfer_queue`` (which imports no verl: importing this
module leaves verl's v1 trainer alone); the hook of the v1 trainer (:mod:`verl_focal.integration.hooks.trainer`)
is its caller.
"""

from __future__ import annotations

from typing import Any

import transfer_queue as tq

from verl_focal.step.columns import as_list, last_user_text, nested_rows, reward_extra_info_of
from verl_focal.step.decode import decoder_for
from verl_focal.step.rows import RowSource

__all__ = ["tq_rows"]


def tq_rows(batch: Any, needs: frozenset[str], acc_key: str, tokenizer: Any) -> RowSource:
    """The :class:`~verl_focal.step.rows.RowSource` of a v1 batch (``batch.keys`` in
    ``batch.partition_id``): one TransferQueue read of ``uid``, ``extra_fields`` (the reward extras) and,
    when the problems are needed, ``raw_prompt``; response ids are read for the rows asked, when asked."""
    keys, partition_id = list(batch.keys), batch.partition_id
    fields = ["uid", "extra_fields"] + (["raw_prompt"] if "problems" in needs else [])
    data = tq.kv_batch_get(keys=keys, partition_id=partition_id, select_fields=fields)
    infos = [reward_extra_info_of(x) for x in as_list(data["extra_fields"])]
    if not any(acc_key in info for info in infos):  # a colocated reward model writes its extras as columns
        try:
            col = as_list(tq.kv_batch_get(keys=keys, partition_id=partition_id, select_fields=[acc_key])[acc_key])
            infos = [{**info, acc_key: v} for info, v in zip(infos, col)]
        except Exception:  # noqa: BLE001 - the column simply is not there
            pass
    problems = [last_user_text(p) for p in as_list(data["raw_prompt"])] if "problems" in needs else None

    def response_ids(rows):
        got = tq.kv_batch_get(keys=[keys[i] for i in rows.tolist()], partition_id=partition_id,
                              select_fields=["responses"])
        return nested_rows(got["responses"])

    return RowSource("v1-transferqueue", as_list(data["uid"]), infos, lambda: problems, response_ids,
                     decoder_for(tokenizer) if tokenizer is not None else None)
