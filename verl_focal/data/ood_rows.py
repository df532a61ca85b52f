"""Rows of the OOD sets IFEval and SynLogic from local copies of their public releases.

Field aliases (first present wins) are :data:`~verl_focal.data.evalsets.IFEVAL_FIELDS` and
:data:`~verl_focal.data.evalsets.SYNLOGIC_FIELDS`:

* IFEval (``google/IFEval``, 541 rows): ``prompt``, ``instruction_id_list``, ``kwargs``
  (one object per instruction; null entries are dropped), optional ``key``.
* SynLogic (``MiniMaxAI/SynLogic``): the task name (``data_source``/``task``), and either a
  ``game_data_str`` JSON (top level or in ``extra_info``) holding SynLogic's
  ``{question, answer, metadata}`` record, or those fields directly.  A ``prompt`` chat list is
  read as its last user turn.

Malformed rows are dropped and counted by reason (``stats["malformed_dropped"]``); a row whose
instruction or task we cannot score is an error, never a silent zero.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import numpy as np

from verl_focal.data.evalsets import IFEVAL_FIELDS, SYNLOGIC_FIELDS
from verl_focal.data.records import DataPrepError, cell, resolve_column
from verl_focal.data.schema import chat_prompt, make_row


def plain(obj: Any) -> Any:
    """numpy arrays/scalars (from parquet) as lists/Python numbers, recursively."""
    if isinstance(obj, np.ndarray):
        return [plain(x) for x in obj.tolist()]
    if isinstance(obj, (list, tuple)):
        return [plain(x) for x in obj]
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def _first(record: dict, names: tuple[str, ...]) -> Any:
    for n in names:
        v = cell(record, n)
        if v is not None:
            return v
    return None


def _user_text(value: Any) -> str | None:
    """A string, or the last user turn of a chat list."""
    value = plain(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        for m in reversed(value):
            if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str):
                return m["content"]
    return None


def ifeval_rows(
    records: list[dict], *, source: str, system_prompt: str, prompt_style: str
) -> tuple[list[dict], Counter]:
    """verl rows (data_source ``verl_focal/ifeval``) and the dropped-row counts."""
    from verl_focal.ood.ifeval import IFEvalGroundTruthError, parse_ground_truth

    pcol = resolve_column(records, IFEVAL_FIELDS["prompt"], source=source, role="prompt")
    icol = resolve_column(records, IFEVAL_FIELDS["instruction_id_list"], source=source, role="instruction_id_list")
    kcol = resolve_column(records, IFEVAL_FIELDS["kwargs"], source=source, role="kwargs")
    rows, dropped = [], Counter()
    for i, rec in enumerate(records):
        prompt = cell(rec, pcol)
        if not isinstance(prompt, str) or not prompt.strip():
            dropped["prompt_missing"] += 1
            continue
        ids, kwargs = plain(cell(rec, icol)), plain(cell(rec, kcol))
        if not isinstance(ids, list) or not ids or not isinstance(kwargs, list) or len(kwargs) != len(ids):
            dropped["instructions_malformed"] += 1
            continue
        gt = {"instruction_id_list": ids, "kwargs": [{k: v for k, v in (kw or {}).items() if v is not None}
                                                      for kw in kwargs], "prompt": prompt}
        try:
            parse_ground_truth(gt)
        except IFEvalGroundTruthError as e:
            if "unknown IFEval instruction" in str(e):
                raise DataPrepError(f"{source}: row {i}: {e}") from None
            dropped["instructions_malformed"] += 1
            continue
        gt_json = json.dumps(gt, sort_keys=True)
        rows.append(make_row(name="ifeval", split="test", index=len(rows), source_index=i, problem=prompt,
                             answer=gt_json, prompt=chat_prompt(prompt, system_prompt, prompt_style),
                             ability="instruction_following", answer_type="ifeval"))
    return rows, dropped


def _synlogic_fields(rec: dict) -> tuple[Any, Any, Any, Any]:
    """(task, question, answer, metadata) of one SynLogic record."""
    extra = plain(cell(rec, "extra_info"))
    if isinstance(extra, str):
        try:
            extra = json.loads(extra)
        except json.JSONDecodeError:
            extra = None
    game = _first(rec, SYNLOGIC_FIELDS["game_data"])
    if game is None and isinstance(extra, dict):
        game = next((extra[n] for n in SYNLOGIC_FIELDS["game_data"] if extra.get(n) is not None), None)
    task = _first(rec, SYNLOGIC_FIELDS["task"])
    question = _user_text(_first(rec, SYNLOGIC_FIELDS["question"]))
    answer = _first(rec, SYNLOGIC_FIELDS["answer"])
    rm = plain(cell(rec, "reward_model"))
    if answer is None and isinstance(rm, dict):
        answer = rm.get("ground_truth")
    meta = _first(rec, SYNLOGIC_FIELDS["metadata"])
    if game is not None:
        if isinstance(game, str):
            try:
                game = json.loads(game)
            except json.JSONDecodeError:
                game = None
        if isinstance(game, dict):
            question = game.get("question") if isinstance(game.get("question"), str) else question
            answer = game.get("answer", answer)
            meta = game.get("metadata", meta)
    if isinstance(meta, str):
        try:
            meta = json.loads(meta)
        except json.JSONDecodeError:
            meta = None
    return task, question, plain(answer), plain(meta) if meta is not None else {}


def synlogic_rows(records: list[dict], *, source: str, system_prompt: str, prompt_style: str,
                  skip_unverified: bool = False) -> tuple[list[dict], Counter]:
    """verl rows (data_source ``verl_focal/synlogic``; the task is in the ground truth).

    Tasks without a verifier raise :class:`DataPrepError` listing them and their row counts,
    unless ``skip_unverified``, which drops and counts them (``unverified_task:<name>``).
    """
    from verl_focal.ood.synlogic import (
        TASK_MODULES,
        TASKS_WITHOUT_VERIFIER,
        SynLogicGroundTruthError,
        check_gold,
        normalize_task,
        verifier_module,
    )

    resolve_column(records, SYNLOGIC_FIELDS["task"], source=source, role="task")
    parsed = [_synlogic_fields(r) for r in records]
    tasks = Counter(normalize_task(t) for t, *_ in parsed if isinstance(t, str) and t.strip())
    unknown = {t: n for t, n in tasks.items() if t not in TASK_MODULES and t not in TASKS_WITHOUT_VERIFIER}
    if unknown:
        raise DataPrepError(f"{source}: unknown SynLogic task(s) {dict(sorted(unknown.items()))}; known: "
                            f"{', '.join(sorted(set(TASK_MODULES) | set(TASKS_WITHOUT_VERIFIER)))}")
    unverified = {t: n for t, n in tasks.items() if t in TASKS_WITHOUT_VERIFIER}
    if unverified and not skip_unverified:
        raise DataPrepError(
            f"{source}: {sum(unverified.values())} rows of SynLogic tasks without a verifier "
            f"{dict(sorted(unverified.items()))}; they would all score 0. Pass --synlogic-skip-unverified to drop "
            "them (counted in the stats), or remove them from the file")
    rows, dropped = [], Counter()
    for i, (task, question, answer, meta) in enumerate(parsed):
        if not isinstance(task, str) or not task.strip():
            dropped["task_missing"] += 1
            continue
        t = normalize_task(task)
        if t in unverified:
            dropped[f"unverified_task:{t}"] += 1
            continue
        if not isinstance(question, str) or not question.strip():
            dropped["question_missing"] += 1
            continue
        if not isinstance(meta, dict):
            dropped["metadata_malformed"] += 1
            continue
        gold = {"task": t, "answer": answer, "metadata": meta}
        if getattr(verifier_module(t), "NEEDS_QUESTION", False):
            gold["question"] = question
        try:
            check_gold(t, answer, {**meta, **({"question": question} if "question" in gold else {})})
        except SynLogicGroundTruthError:
            dropped[f"gold_incomplete:{t}"] += 1
            continue
        gt_json = json.dumps(gold, sort_keys=True, default=str)
        rows.append(make_row(name="synlogic", split="test", index=len(rows), source_index=i, problem=question,
                             answer=gt_json, prompt=chat_prompt(question, system_prompt, prompt_style),
                             ability="logic", answer_type="synlogic"))
    return rows, dropped
