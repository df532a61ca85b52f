"""``verl-focal eval generate``: draw n samples per problem of an evaluation parquet.

Input: a parquet in verl's RL schema (``data_source``, ``prompt`` as a chat list,
``reward_model.ground_truth``, optional ``extra_info``), as written by
``verl-focal prep-data``.  Output: our JSONL records (:mod:`verl_focal.lab.eval.records`),
appended problem by problem and flushed after each call, so a killed run resumes
where it stopped: existing ``(uid, sample)`` lines are kept, a cut last line is
removed, and only the missing samples are drawn.  A ``<out>.meta.json`` sidecar
records the settings; resuming with different settings is refused.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verl_focal.config.errors import InputError
from verl_focal.lab.eval.backends import BACKENDS, SamplingConfig, request_seed
from verl_focal.lab.eval.records import existing_counts, repair_tail, write_jsonl_line

REQUIRED_COLUMNS = ("data_source", "prompt", "reward_model")


def _plain(x: Any) -> Any:
    """pyarrow/numpy containers -> plain Python (lists, dicts, scalars)."""
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if hasattr(x, "tolist") and not isinstance(x, (str, bytes)):
        return _plain(x.tolist())
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def load_problems(path: str, limit: int | None = None) -> list[dict]:
    """Rows of an evaluation parquet as dicts with uid, data_source, messages, ground_truth, extra_info.

    The problem uid is ``"<data_source>#<row>"`` (row number in the file), so two runs
    sampled from the same parquet are paired problem by problem.  A file that is not a
    parquet, lacks a column or has no usable row is refused (:class:`InputError`); rows
    without a chat-list ``prompt`` or a ``reward_model.ground_truth`` are left out, and
    their count and the first one are printed on stderr.
    """
    import pandas as pd

    fix = "give an evaluation parquet written by `verl-focal prep-data eval`"
    p = Path(path)
    if not p.is_file():
        raise InputError(f"--data {path}: {'is a folder' if p.is_dir() else 'no such file'}; {fix}")
    with open(p, "rb") as fh:
        head = fh.read(4)
    if head != b"PAR1":
        kind = "a JSONL/JSON file" if head[:1] in (b"{", b"[") else "not a parquet file"
        raise InputError(f"--data {path}: is {kind}, not a parquet file; {fix}")
    try:
        df = pd.read_parquet(p)
    except Exception as e:  # pyarrow's errors for a damaged file
        raise InputError(f"--data {path}: cannot read it as parquet ({type(e).__name__}: {e}); {fix}") from None
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(
            f"--data {path}: missing column(s) {missing} (it has {list(df.columns)}); `eval generate` needs "
            f"verl's RL schema (data_source, prompt as a chat list, reward_model.ground_truth); {fix}"
        )
    rows = []
    bad: list[tuple[int, str]] = []
    for i, row in enumerate(df.itertuples(index=False)):
        if limit is not None and i >= limit:
            break
        messages = _plain(row.prompt)
        if not (
            isinstance(messages, list)
            and messages
            and all(isinstance(m, dict) and "role" in m and "content" in m for m in messages)
        ):
            bad.append((i, f"'prompt' is not a chat list of {{role, content}} dicts: {str(messages)[:80]}"))
            continue
        rm = _plain(row.reward_model)
        if not isinstance(rm, dict) or rm.get("ground_truth") is None:
            bad.append((i, f"'reward_model' has no 'ground_truth': {str(rm)[:80]}"))
            continue
        extra = _plain(getattr(row, "extra_info", None)) if "extra_info" in df.columns else None
        rows.append({
            "row": i,
            "uid": f"{row.data_source}#{i}",
            "data_source": str(row.data_source),
            "messages": messages,
            "ground_truth": rm["ground_truth"],
            "extra_info": extra,
        })
    if bad and not rows:
        raise InputError(f"--data {path}: no usable row (row {bad[0][0]}: {bad[0][1]}); {fix}")
    if not rows:
        raise InputError(f"--data {path}: the parquet has no rows; {fix}")
    if bad:
        print(f"--data {path}: left out {len(bad)} of {len(bad) + len(rows)} row(s); first: row {bad[0][0]}: "
              f"{bad[0][1]}", file=sys.stderr)
    return rows


def chat_texts(tokenizer, problems: Sequence[dict], template_kwargs: dict | None = None) -> list[str]:
    """Apply the tokenizer's chat template with a generation prompt (what verl's RL dataset does)."""
    if getattr(tokenizer, "chat_template", None) is None:
        raise InputError("the model's tokenizer has no chat_template; the evaluation prompts are chat lists: "
                         "give --model a chat (instruct) model, or add a chat_template to its tokenizer_config.json")
    kw = dict(template_kwargs or {})
    return [
        tokenizer.apply_chat_template(p["messages"], add_generation_prompt=True, tokenize=False, **kw) for p in problems
    ]


def _check_meta(out: Path, meta: dict, resume: bool) -> None:
    side = out.with_name(out.name + ".meta.json")
    if side.exists() and resume:
        old = json.loads(side.read_text())
        diff = {k: (old.get(k), v) for k, v in meta.items() if old.get(k) != v}
        if diff:
            raise InputError(
                f"{out} was started with other settings {diff} (old, new); resume with the same "
                f"settings, or pass --overwrite to start again"
            )
    side.write_text(json.dumps(meta, indent=1, sort_keys=True))


DEFAULT_SAMPLING = SamplingConfig()  # frozen, so one shared default instance is safe


def run_generate(
    data: str,
    model: str,
    out: str,
    n: int,
    backend: str = "transformers",
    sampling: SamplingConfig = DEFAULT_SAMPLING,
    problems_per_call: int = 1,
    limit: int | None = None,
    overwrite: bool = False,
    progress: bool = True,
    backend_kwargs: dict | None = None,
    chat_template_kwargs: dict | None = None,
    backend_obj=None,
    tokenizer=None,
) -> dict:
    """Sample ``n`` responses per problem into ``out`` (JSONL), resuming a partial file.

    Returns a summary dict (problems, samples written now, samples kept from before,
    bytes cut from a partial last line).  ``backend_obj``/``tokenizer`` let callers
    (tests, rare-set) pass ready objects.
    """
    if n < 1:
        raise InputError(f"--n must be >= 1 samples per problem, got {n}")
    if backend not in BACKENDS:
        raise InputError(f"--backend {backend!r}: choose one of {sorted(BACKENDS)}")
    sampling.validate()
    problems = load_problems(data, limit)  # before touching the output: a bad --data leaves it as it was
    out_p = Path(out)
    out_p.parent.mkdir(parents=True, exist_ok=True)
    if overwrite and out_p.exists():
        out_p.unlink()
    meta = {"data": str(Path(data).resolve()), "model": str(model), "n": int(n), "temperature": sampling.temperature,
            "top_p": sampling.top_p, "max_tokens": sampling.max_tokens, "seed": sampling.seed,
            "chat_template_kwargs": chat_template_kwargs or {}}
    _check_meta(out_p, meta, resume=not overwrite)

    cut = repair_tail(out_p)
    done, _, stats = existing_counts(out_p)
    if stats.malformed:
        raise InputError(f"{out_p} has {stats.malformed} malformed line(s) (lines {stats.malformed_lines[:5]}); "
                         f"it is not a generate output, or pass --overwrite")
    todo = [p for p in problems if done.get(p["uid"], 0) < n]
    kept = sum(min(done.get(p["uid"], 0), n) for p in problems)
    total = n * len(problems)
    summary = {"problems": len(problems), "kept": kept, "written": 0, "cut_bytes": cut, "out": str(out_p)}
    if not todo:
        return summary

    if tokenizer is None:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(model)
    if backend_obj is None:
        kw = dict(backend_kwargs or {})
        if backend == "transformers":
            kw.setdefault("tokenizer", tokenizer)
        backend_obj = BACKENDS[backend](model, sampling, **kw)

    from tqdm import tqdm

    bar = tqdm(total=total, initial=kept, unit="sample", desc=f"generate {out_p.name}", disable=not progress,
               file=sys.stderr, dynamic_ncols=True)
    with open(out_p, "a", encoding="utf-8") as fh:
        for s in range(0, len(todo), max(1, problems_per_call)):
            chunk = todo[s : s + max(1, problems_per_call)]
            texts = chat_texts(tokenizer, chunk, chat_template_kwargs)
            starts = [done.get(p["uid"], 0) for p in chunk]
            counts = [n - st for st in starts]
            seeds = [request_seed(sampling.seed, p["row"], st) for p, st in zip(chunk, starts)]
            responses = backend_obj.generate(texts, counts, seeds)
            for p, text, st, resp in zip(chunk, texts, starts, responses):
                if len(resp) != n - st:
                    raise RuntimeError(f"backend returned {len(resp)} responses for {p['uid']}, asked for {n - st}")
                for j, r in enumerate(resp):
                    write_jsonl_line(fh, {
                        "uid": p["uid"], "sample": st + j, "data_source": p["data_source"], "prompt_text": text,
                        "response": r, "ground_truth": p["ground_truth"], "extra_info": p["extra_info"],
                    })
            fh.flush()
            os.fsync(fh.fileno())
            written = sum(counts)
            summary["written"] += written
            bar.update(written)
    bar.close()
    return summary
