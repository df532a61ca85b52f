"""``verl-focal prep-data example``: small valid training and validation parquets, offline, for dry runs.

No network, no tokenizer: the problems are generated here (integer arithmetic with exact answers),
then go through the same pipelines as the real sets (:func:`~verl_focal.data.prepare.prepare_training_set`
and :func:`~verl_focal.data.prepare.prepare_eval_set`, length filter off), so every row has verl's RL
schema (:mod:`verl_focal.data.schema`) and our scorer grades it.  The files are laid out as the recipes'
``DATA_DIR`` expects (``recipes/lib/common.sh``)::

    DIR/deepscaler/<model tag>.parquet     training set of the F-GRPO recipes, one per model preset
    DIR/math_l3to5/<model tag>.parquet     training set of the Cue-GRPO recipes
    DIR/eval/<set>.parquet                 the six math validation sets and the three OOD sets (VAL_OOD=1)

``<model tag>`` is the model name's last path part in lower case, as the recipes derive it.  The data
teach nothing; they make ``DATA_DIR=DIR bash recipes/deepscaler/<recipe>.sh --dry-run`` pass before the
real data (``prep-data deepscaler``, ``math-subset``, ``eval``) are made.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

__all__ = ["RECIPE_MODELS", "TRAIN_ROWS", "VAL_ROWS", "EXAMPLE_MARK", "model_tag", "example_files", "write_example"]

#: the recipes' model presets (``_model_preset`` in recipes/lib/common.sh): a training file is written for each
RECIPE_MODELS = ("Qwen/Qwen2.5-7B", "Qwen/Qwen3-4B-Base", "meta-llama/Llama-3.2-3B-Instruct",
                 "meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-Math-7B")
#: rows per training file: two batches of the F-GRPO recipes' 256 prompts (a recipe needs one per epoch)
TRAIN_ROWS = 512
#: rows per validation file
VAL_ROWS = 16
#: ``source`` recorded in each file's ``.stats.json``; only files that carry it are ever overwritten
EXAMPLE_MARK = "verl-focal prep-data example"


def model_tag(model: str) -> str:
    """The recipes' model tag: the last path part of ``model``, lower case.

    >>> model_tag("Qwen/Qwen2.5-7B"), model_tag("/models/Llama-3.1-8B-Instruct/")
    ('qwen2.5-7b', 'llama-3.1-8b-instruct')
    """
    return os.path.basename(model.rstrip("/")).lower()


def example_files(out_dir: str, models: tuple[str, ...] = RECIPE_MODELS) -> list[str]:
    """Every file :func:`write_example` writes under ``out_dir`` (training files first)."""
    from verl_focal.data.evalsets import EVAL_SETS

    train = [os.path.join(out_dir, sub, f"{model_tag(m)}.parquet") for sub in ("deepscaler", "math_l3to5")
             for m in models]
    return train + [os.path.join(out_dir, "eval", f"{name}.parquet") for name in EVAL_SETS]


def _arithmetic(n: int, offset: int) -> list[dict[str, Any]]:
    """``n`` distinct problems ``What is a + b?`` / ``Compute a × b.`` with exact integer answers."""
    out = []
    for i in range(n):
        a, b = 2 + (i + offset) % 37, 3 + (i + offset) // 37
        if i % 2:
            out.append({"problem": f"Compute {a} \\times {b}.", "answer": str(a * b), "level": "Level 3"})
        else:
            out.append({"problem": f"What is {a} + {b}?", "answer": str(a + b), "level": "Level 4"})
    return out


def _eval_records(kind: str, n: int, offset: int) -> list[dict[str, Any]]:
    """Source records of one evaluation set, in the field layout its pipeline reads (evalsets.EVAL_SETS)."""
    if kind == "math":
        return _arithmetic(n, offset)
    if kind == "choice":
        return [{"Question": f"Which number is {a} + {a}?", "Correct Answer": str(2 * a),
                 "Incorrect Answer 1": str(2 * a + 1), "Incorrect Answer 2": str(2 * a - 1),
                 "Incorrect Answer 3": str(a)} for a in range(3, 3 + n)]
    if kind == "ifeval":
        return [{"key": i, "prompt": f"Describe the number {i} in one sentence without commas.",
                 "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]} for i in range(n)]
    if kind == "synlogic":
        return [{"task": "object_counting", "question": f"I have {i} apples and {i + 1} pears. How many fruits?",
                 "answer": str(2 * i + 1), "metadata": {}} for i in range(1, n + 1)]
    raise ValueError(f"no example records for evaluation sets of kind {kind!r}")


def _refuse_foreign(paths: list[str]) -> None:
    """Never overwrite a file that this command did not write (real data prepared earlier)."""
    from verl_focal.data.records import DataPrepError

    for p in paths:
        if not os.path.exists(p):
            continue
        try:
            with open(p + ".stats.json", encoding="utf-8") as fh:
                ours = json.load(fh).get("source") == EXAMPLE_MARK
        except (OSError, ValueError, AttributeError):
            ours = False
        if not ours:
            raise DataPrepError(f"--out-dir: {p} exists and was not written by `{EXAMPLE_MARK}` (real data?); "
                                f"give another --out-dir, e.g. an empty folder")


def _mark(path: str) -> None:
    stats_path = path + ".stats.json"
    with open(stats_path, encoding="utf-8") as fh:
        stats = json.load(fh)
    stats["generated_from"], stats["source"] = stats.get("source"), EXAMPLE_MARK
    with open(stats_path, "w", encoding="utf-8") as fh:
        json.dump(stats, fh, indent=2)


def write_example(out_dir: str, train_rows: int = TRAIN_ROWS, val_rows: int = VAL_ROWS,
                  models: tuple[str, ...] = RECIPE_MODELS) -> list[tuple[str, int]]:
    """Write the files of :func:`example_files`; return (path, rows) of each.

    Refuses (``DataPrepError``) a target file that exists and was not written by this command.
    """
    from verl_focal.data.evalsets import EVAL_SETS
    from verl_focal.data.prepare import prepare_eval_set, prepare_training_set
    from verl_focal.data.records import DataPrepError

    if train_rows < 1 or val_rows < 1:
        raise DataPrepError(f"--train-rows {train_rows} / --val-rows {val_rows}: both must be >= 1")
    paths = example_files(out_dir, models)
    _refuse_foreign(paths)
    written: list[tuple[str, int]] = []
    with tempfile.TemporaryDirectory() as tmp:
        def source(name: str, records: list[dict]) -> str:
            path = os.path.join(tmp, f"{name}.jsonl")
            with open(path, "w", encoding="utf-8") as fh:
                fh.writelines(json.dumps(r) + "\n" for r in records)
            return path

        train_src = source("train", _arithmetic(train_rows, 0))
        for out in paths[:2 * len(models)]:
            name = os.path.basename(os.path.dirname(out))  # deepscaler | math_l3to5: the data_source name
            levels = [3, 4, 5] if name == "math_l3to5" else None
            stats = prepare_training_set(source=train_src, out_path=out, name=name, tokenizer_path=None,
                                         max_prompt_tokens=0, levels=levels)
            _mark(out)
            written.append((out, stats["written"]))
        for k, spec in enumerate(EVAL_SETS.values()):
            out = os.path.join(out_dir, "eval", f"{spec.name}.parquet")
            src = source(spec.name, _eval_records(spec.kind, val_rows, offset=1000 + 100 * k))
            stats = prepare_eval_set(spec, out_path=out, source=src)
            _mark(out)
            written.append((out, stats["written"]))
    return written
