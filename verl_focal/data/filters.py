"""Cleaning stages: malformed rows, problems repeated with conflicting answers, prompt length."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import regex

from verl_focal.data.records import DataPrepError, cell


@dataclass(frozen=True)
class Item:
    """A cleaned problem: its position in the source, text and reference answer."""

    source_index: int
    problem: str
    answer: str


def answer_to_text(value: Any) -> str | None:
    """A reference answer as one string; lists of one answer (OlympiadBench) are unwrapped and
    surrounding ``$`` removed.  None when missing or empty."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)) or (hasattr(value, "tolist") and not isinstance(value, str)):
        seq = list(value.tolist() if hasattr(value, "tolist") else value)
        if len(seq) == 0:
            return None
        value = ", ".join(str(v) for v in seq) if len(seq) > 1 else seq[0]
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        value = repr(value) if isinstance(value, float) and not value.is_integer() else str(int(value))
    if not isinstance(value, str):
        return None
    text = value.strip()
    if len(text) >= 2 and text.startswith("$") and text.endswith("$"):
        text = text.strip("$").strip()
    return text or None


def clean_records(records: Sequence[dict], problem_field: str, answer_field: str,
                  answer_of: Callable[[dict], Any] | None = None) -> tuple[list[Item], Counter]:
    """Items with a non-empty string problem and a usable answer; a Counter of why others were
    dropped (``problem_missing``, ``problem_not_text``, ``answer_missing``)."""
    items: list[Item] = []
    dropped: Counter = Counter()
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            dropped["not_an_object"] += 1
            continue
        problem = cell(rec, problem_field)
        if problem is None or (isinstance(problem, str) and not problem.strip()):
            dropped["problem_missing"] += 1
            continue
        if not isinstance(problem, str):
            dropped["problem_not_text"] += 1
            continue
        answer = answer_to_text(answer_of(rec) if answer_of else cell(rec, answer_field))
        if answer is None:
            dropped["answer_missing"] += 1
            continue
        items.append(Item(i, problem.strip(), answer))
    return items, dropped


_WS = regex.compile(r"\s+")
_ANS_STRIP = regex.compile(r"\\left|\\right|\\!|\\,|\\;|\\:|\s|\$")


def problem_key(problem: str) -> str:
    """Duplicate key of a problem: whitespace runs collapsed, ends stripped (text otherwise exact)."""
    return _WS.sub(" ", problem).strip()


def answer_key(answer: str) -> str:
    """Cheap canonical form of an answer: no spacing commands, ``\\left``/``\\right``, ``$``;
    ``\\dfrac``/``\\tfrac`` read as ``\\frac``; no trailing period."""
    a = _ANS_STRIP.sub("", answer).replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    return a.rstrip(".")


def math_equal(a: str, b: str) -> bool:
    """True when math-verify accepts either answer against the other (verl_focal.reward)."""
    from verl_focal.reward import compute_score

    ds = "verl_focal/dedup"
    return (compute_score(ds, "\\boxed{" + b + "}", a, require_boxed=True)["acc"] == 1.0
            or compute_score(ds, "\\boxed{" + a + "}", b, require_boxed=True)["acc"] == 1.0)


def drop_conflicting_duplicates(items: Iterable[Item], *, collapse: bool = False,
                                equal: Callable[[str, str], bool] = math_equal) -> tuple[list[Item], dict]:
    """Remove every copy of a problem that occurs more than once with answers that disagree.

    Copies agree when their :func:`answer_key` match or ``equal`` (math-verify) accepts them.
    Copies that agree are all kept, or only the first when ``collapse``.  Order is preserved.
    Returns (kept, stats) with ``duplicate_groups``, ``conflicting_groups``,
    ``conflicting_rows_dropped``, ``consistent_duplicate_rows`` (rows beyond the first in agreeing
    groups) and ``collapsed_rows_dropped``.
    """
    items = list(items)
    groups: dict[str, list[int]] = {}
    for pos, it in enumerate(items):
        groups.setdefault(problem_key(it.problem), []).append(pos)
    drop: set[int] = set()
    stats = dict(duplicate_groups=0, conflicting_groups=0, conflicting_rows_dropped=0,
                 consistent_duplicate_rows=0, collapsed_rows_dropped=0)
    for positions in groups.values():
        if len(positions) < 2:
            continue
        stats["duplicate_groups"] += 1
        keys = list(dict.fromkeys(answer_key(items[p].answer) for p in positions))
        first = items[positions[0]].answer
        conflict = len(keys) > 1 and not all(
            answer_key(items[p].answer) == keys[0] or equal(first, items[p].answer) for p in positions[1:]
        )
        if conflict:
            stats["conflicting_groups"] += 1
            stats["conflicting_rows_dropped"] += len(positions)
            drop.update(positions)
        else:
            stats["consistent_duplicate_rows"] += len(positions) - 1
            if collapse:
                stats["collapsed_rows_dropped"] += len(positions) - 1
                drop.update(positions[1:])
    return [it for pos, it in enumerate(items) if pos not in drop], stats


# ----------------------------------------------------------------------------------------------
# prompt length under the model's tokenizer and chat template
# ----------------------------------------------------------------------------------------------
def load_tokenizer(path: str):
    """``transformers.AutoTokenizer.from_pretrained(path)``, with offline-friendly errors.

    The tokenizer must carry a chat template: the length we filter on is the templated prompt.
    """
    try:
        from transformers import AutoTokenizer
    except ImportError as e:  # pragma: no cover
        raise DataPrepError("the length filter needs `pip install transformers`") from e
    try:
        tok = AutoTokenizer.from_pretrained(path, trust_remote_code=False)
    except Exception as e:
        hint = ("" if os.path.isdir(path) else
                " It is not a local directory, so it would have to come from the Hugging Face hub; without "
                "network access pass the local model directory (the one verl's actor_rollout_ref.model.path "
                "points to), or set HF_HUB_OFFLINE=1 with the model already in the HF cache.")
        raise DataPrepError(f"cannot load the tokenizer {path!r}: {type(e).__name__}: {e}.{hint}") from e
    if not getattr(tok, "chat_template", None):
        raise DataPrepError(
            f"tokenizer {path!r} has no chat template, so the templated prompt length cannot be counted; "
            "use the model's own tokenizer (instruct/base models of Qwen2.5, Qwen3 and Llama 3.2 ship one)."
        )
    return tok


def _flat_ids(out: Any) -> list[int]:
    ids = out
    if isinstance(out, dict) or hasattr(out, "keys"):
        ids = out["input_ids"]
    elif hasattr(out, "input_ids"):
        ids = out.input_ids
    if hasattr(ids, "tolist"):
        ids = ids.tolist()
    if isinstance(ids, list) and len(ids) == 1 and isinstance(ids[0], (list, tuple)):
        ids = list(ids[0])
    return list(ids)


def prompt_token_count(tokenizer, messages: list[dict], template_kwargs: dict | None = None) -> int:
    """Number of token ids of ``tokenizer.apply_chat_template(messages, add_generation_prompt=True,
    tokenize=True, **template_kwargs)``: system turn + user turn + every special/template token +
    the assistant header.  This is exactly what verl's ``RLHFDataset`` compares with
    ``data.max_prompt_length`` when ``data.filter_overlong_prompts=True``."""
    out = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                        **(template_kwargs or {}))
    return len(_flat_ids(out))
