"""The three preparation pipelines.  Each returns ordered stage counts and writes one parquet file
(plus ``<file>.stats.json`` with the counts and the exact options used)."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from verl_focal.data.evalsets import EVAL_SETS, GPQA_WRONG_FIELDS, EvalSpec, format_choices
from verl_focal.data.filters import (
    Item,
    clean_records,
    drop_conflicting_duplicates,
    load_tokenizer,
    prompt_token_count,
)
from verl_focal.data.records import DataPrepError, cell, load_records, resolve_column
from verl_focal.data.schema import MATH_SYSTEM_PROMPT, MC_SYSTEM_PROMPT, OOD_SYSTEM_PROMPT, chat_prompt, make_row
from verl_focal.grading.extract import last_boxed

DEEPSCALER_HF = "agentica-org/DeepScaleR-Preview-Dataset"
MATH_HF = "DigitalLearningGmbH/MATH-lighteval"
PAPER_DEEPSCALER_COUNT = 39_202  # F-GRPO Sec. 4, after both filters


def _require(n: int, stage: str, source: str) -> None:
    if n == 0:
        raise DataPrepError(f"{source}: no rows left after stage {stage!r}; check the input file and the options")


def _write(rows: list[dict], out_path: str, stats: dict) -> None:
    import pandas as pd

    os.makedirs(os.path.dirname(os.path.abspath(out_path)) or ".", exist_ok=True)
    pd.DataFrame(rows).to_parquet(out_path, index=False)
    with open(out_path + ".stats.json", "w", encoding="utf-8") as f:
        json.dump(stats, f, indent=2, sort_keys=False)


def _length_filter(items: list[Item], prompts: list[list[dict]], tokenizer, max_tokens: int,
                   template_kwargs: dict | None, desc: str) -> tuple[list[int], int]:
    """Positions whose templated prompt has <= max_tokens tokens, and the longest length seen."""
    keep, longest = [], 0
    for pos, msgs in enumerate(tqdm(prompts, desc=desc, unit="prompt", mininterval=1.0)):
        n = prompt_token_count(tokenizer, msgs, template_kwargs)
        longest = max(longest, n)
        if n <= max_tokens:
            keep.append(pos)
    return keep, longest


def prepare_training_set(
    *,
    source: str,
    out_path: str,
    name: str,
    tokenizer_path: str | None,
    max_prompt_tokens: int = 1024,
    system_prompt: str = MATH_SYSTEM_PROMPT,
    prompt_style: str = "system",
    collapse_duplicates: bool = False,
    problem_field: Sequence[str] | str = ("problem",),
    answer_field: Sequence[str] | str = ("answer",),
    split: str = "train",
    hf_config: str | None = None,
    template_kwargs: dict | None = None,
    levels: Sequence[int] | None = None,
    level_field: str = "level",
    sample: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """DeepScaleR pipeline (F-GRPO Sec. 4); with ``levels``/``sample`` also the Cue-GRPO MATH subset.

    Stages, each counted: loaded -> well-formed (string problem, non-empty answer) -> [level in
    ``levels``] -> no conflicting duplicates (:func:`drop_conflicting_duplicates`) -> templated
    prompt <= ``max_prompt_tokens`` tokens (:func:`prompt_token_count`; 0 disables the filter)
    -> [seeded sample of ``sample`` rows] -> written.
    """
    if max_prompt_tokens < 0:
        raise DataPrepError(f"--max-prompt-tokens={max_prompt_tokens} must be >= 0 (0 disables the length filter)")
    if max_prompt_tokens > 0 and not tokenizer_path:
        raise DataPrepError(
            "the length filter needs the model's tokenizer: pass --tokenizer PATH (the directory of the model you "
            "will train), or --max-prompt-tokens 0 to skip the filter"
        )
    tokenizer = load_tokenizer(tokenizer_path) if max_prompt_tokens > 0 else None  # fail before the slow parts

    records = load_records(source, split=split, config=hf_config)
    stats: dict[str, Any] = {"source": source, "loaded": len(records)}
    _require(len(records), "loaded", source)
    pcol = resolve_column(records, problem_field, source=source, role="problem")
    if levels is not None:
        resolve_column(records, level_field, source=source, role="level")
    acol = None
    answer_of = None
    try:
        acol = resolve_column(records, answer_field, source=source, role="answer")
    except DataPrepError:
        if levels is None:  # only the MATH subset may take the answer from the solution
            raise
        resolve_column(records, "solution", source=source, role="answer")
        answer_of = lambda r: last_boxed(cell(r, "solution") or "")  # noqa: E731

    items, dropped = clean_records(records, pcol, acol or "", answer_of)
    stats["malformed_dropped"] = dict(sorted(dropped.items()))
    stats["well_formed"] = len(items)
    _require(len(items), "well_formed", source)

    if levels is not None:
        wanted = {int(x) for x in levels}
        items = [it for it in items if _level_of(records[it.source_index].get(level_field)) in wanted]
        stats["level_filter"] = len(items)
        _require(len(items), "level_filter", source)

    items, dup = drop_conflicting_duplicates(items, collapse=collapse_duplicates)
    stats["duplicates"] = dup
    stats["no_conflicting_duplicates"] = len(items)
    _require(len(items), "no_conflicting_duplicates", source)

    prompts = [chat_prompt(it.problem, system_prompt, prompt_style) for it in items]
    if tokenizer is not None:
        keep, longest = _length_filter(items, prompts, tokenizer, max_prompt_tokens, template_kwargs,
                                       desc=f"{name}: counting prompt tokens")
        stats["longest_prompt_tokens"] = longest
        items = [items[p] for p in keep]
        prompts = [prompts[p] for p in keep]
    stats[f"prompt_tokens_le_{max_prompt_tokens}" if tokenizer is not None else "length_filter_off"] = len(items)
    _require(len(items), "length_filter", source)

    if sample is not None:
        if sample > len(items):
            raise DataPrepError(f"--sample {sample} is larger than the {len(items)} rows left after filtering")
        pick = np.sort(np.random.default_rng(seed).choice(len(items), size=sample, replace=False))
        items = [items[p] for p in pick]
        prompts = [prompts[p] for p in pick]
        stats["sampled"] = len(items)

    rows = [make_row(name=name, split="train", index=i, source_index=it.source_index, problem=it.problem,
                     answer=it.answer, prompt=msgs) for i, (it, msgs) in enumerate(zip(items, prompts))]
    stats["written"] = len(rows)
    stats["options"] = dict(tokenizer=tokenizer_path, max_prompt_tokens=max_prompt_tokens, system_prompt=system_prompt,
                            prompt_style=prompt_style, collapse_duplicates=collapse_duplicates,
                            template_kwargs=template_kwargs or {}, levels=list(levels) if levels else None,
                            sample=sample, seed=seed, out=out_path)
    _write(rows, out_path, stats)
    return stats


def _level_of(value: Any) -> int | None:
    """MATH level as an int: 3, "3", "Level 3" -> 3; anything else (e.g. "Level ?") -> None."""
    if value is None:
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    digits = "".join(ch for ch in str(value) if ch.isdigit())
    return int(digits) if digits else None


def prepare_eval_set(
    spec: EvalSpec,
    *,
    out_path: str,
    source: str | None = None,
    tokenizer=None,
    max_prompt_tokens: int = 1024,
    prompt_style: str = "system",
    template_kwargs: dict | None = None,
    seed: int = 0,
    ood_system_prompt: str = OOD_SYSTEM_PROMPT,
    synlogic_skip_unverified: bool = False,
) -> dict[str, Any]:
    """One evaluation set in the training schema.  Nothing is dropped except malformed rows (the
    benchmarks are used whole; SynLogic rows of tasks without a verifier only with
    ``synlogic_skip_unverified``); with a tokenizer, prompts over ``max_prompt_tokens`` are
    counted and reported so that ``data.max_prompt_length`` can be raised.  IFEval and SynLogic
    use ``ood_system_prompt`` (F-GRPO Table 9: "You are a helpful assistant."; ``""`` for no
    system turn) and keep the question's own format instructions
    (:mod:`verl_focal.data.ood_rows`)."""
    src = source or spec.hf_name
    records = load_records(src, split=spec.hf_split, config=None if source else spec.hf_config)
    stats: dict[str, Any] = {"set": spec.name, "source": src, "loaded": len(records)}
    _require(len(records), "loaded", src)
    rows: list[dict] = []
    if spec.kind in ("ifeval", "synlogic"):
        from verl_focal.data.ood_rows import ifeval_rows, synlogic_rows

        if spec.kind == "ifeval":
            rows, dropped = ifeval_rows(records, source=src, system_prompt=ood_system_prompt,
                                        prompt_style=prompt_style)
        else:
            rows, dropped = synlogic_rows(records, source=src, system_prompt=ood_system_prompt,
                                          prompt_style=prompt_style, skip_unverified=synlogic_skip_unverified)
            stats["tasks"] = dict(sorted(Counter(json.loads(r["reward_model"]["ground_truth"])["task"]
                                                 for r in rows).items()))
        return _finish_eval_set(spec, rows, dropped, stats, src, out_path, tokenizer, max_prompt_tokens,
                                template_kwargs)
    pcol = resolve_column(records, spec.problem_fields, source=src, role="problem")
    if spec.multiple_choice:
        acol = resolve_column(records, spec.answer_fields, source=src, role="answer")
        for f in GPQA_WRONG_FIELDS:
            resolve_column(records, f, source=src, role="answer")
        dropped: Counter = Counter()
        for i, rec in enumerate(records):
            q, correct = cell(rec, pcol), cell(rec, acol)
            wrong = [cell(rec, f) for f in GPQA_WRONG_FIELDS]
            if not isinstance(q, str) or not q.strip():
                dropped["problem_missing"] += 1
                continue
            if not isinstance(correct, str) or any(not isinstance(w, str) for w in wrong):
                dropped["option_missing"] += 1
                continue
            text, gold = format_choices(q, correct, wrong, seed=seed, index=i)
            rows.append(make_row(name=spec.name, split="test", index=len(rows), source_index=i, problem=text,
                                 answer=gold, prompt=chat_prompt(text, MC_SYSTEM_PROMPT, prompt_style),
                                 ability="science_mc", answer_type="multiple_choice"))
    else:
        acol = resolve_column(records, spec.answer_fields, source=src, role="answer")
        items, dropped = clean_records(records, pcol, acol)
        for it in items:
            rows.append(make_row(name=spec.name, split="test", index=len(rows), source_index=it.source_index,
                                 problem=it.problem, answer=it.answer,
                                 prompt=chat_prompt(it.problem, MATH_SYSTEM_PROMPT, prompt_style)))
    return _finish_eval_set(spec, rows, dropped, stats, src, out_path, tokenizer, max_prompt_tokens, template_kwargs)


def _finish_eval_set(spec: EvalSpec, rows: list[dict], dropped: Counter, stats: dict, src: str, out_path: str,
                     tokenizer, max_prompt_tokens: int, template_kwargs: dict | None) -> dict[str, Any]:
    """Count drops and long prompts, write the parquet and its stats."""
    stats["malformed_dropped"] = dict(sorted(dropped.items()))
    _require(len(rows), "well_formed", src)
    if tokenizer is not None:
        lengths = [prompt_token_count(tokenizer, r["prompt"], template_kwargs)
                   for r in tqdm(rows, desc=f"{spec.name}: counting prompt tokens", mininterval=1.0)]
        stats["longest_prompt_tokens"] = max(lengths)
        stats[f"prompts_over_{max_prompt_tokens}_tokens"] = sum(n > max_prompt_tokens for n in lengths)
    stats["written"] = len(rows)
    _write(rows, out_path, stats)
    return stats


def eval_spec(name: str) -> EvalSpec:
    """The :class:`EvalSpec` called ``name`` (error lists the known names)."""
    try:
        return EVAL_SETS[name]
    except KeyError:
        raise DataPrepError(f"unknown evaluation set {name!r}; known: {', '.join(EVAL_SETS)}") from None
