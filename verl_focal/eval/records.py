"""Generation records: our JSONL format, resuming a partial file, and verl's validation dumps.

One JSON object per line, one line per sampled response::

    {"uid": "verl_focal/aime24-0003", "sample": 17, "data_source": "verl_focal/aime24",
     "prompt_text": "<chat-templated prompt>", "response": "...", "ground_truth": "204",
     "extra_info": {...}}

``(uid, sample)`` is unique in a file; that is what makes resuming safe.  A scored
file adds ``score``, ``acc``, ``pred`` and ``status`` (``ok`` | ``timeout`` | ``error``).

verl's own validation dumps (``trainer.validation_data_dir/<step>.jsonl``, written by
``_write_generations``) hold ``input``, ``output``, ``gts``, ``score``, ``step``, the
reward extras (``acc``, ``pred``, ...) and, in the v1 trainer, ``uid`` =
``"<prompt uid>_<session>_<index>"``.  :func:`from_verl_dump` maps them onto our
fields; the problem id is the prompt text (verl's uids are random per validation pass).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

VERL_DUMP_KEYS = frozenset({"input", "output", "gts", "score"})


@dataclass
class ReadStats:
    """What :func:`read_jsonl` saw: good records, malformed lines (with line numbers) and
    whether the file ended in a cut line (a killed writer)."""

    records: int = 0
    malformed: int = 0
    malformed_lines: list[int] = field(default_factory=list)
    truncated_tail: bool = False


def read_jsonl(path: str | os.PathLike, stats: ReadStats | None = None) -> Iterator[dict]:
    """Yield the JSON objects of a JSONL file, skipping and counting malformed lines.

    A line is malformed when it is not valid JSON or not a JSON object.  A last line
    without a newline that fails to parse is recorded as ``truncated_tail``.
    """
    stats = stats if stats is not None else ReadStats()
    with open(path, "rb") as fh:
        data = fh.read()
    lines = data.split(b"\n")
    last = len(lines) - 1
    for i, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            obj = None
        if not isinstance(obj, dict):
            if i == last:
                stats.truncated_tail = True
            stats.malformed += 1
            stats.malformed_lines.append(i + 1)
            continue
        stats.records += 1
        yield obj


def repair_tail(path: str | os.PathLike) -> int:
    """Cut a partial last line (left by a killed writer) from ``path``.

    Returns the number of bytes removed (0 when the file ends with a newline or is empty).
    """
    p = Path(path)
    if not p.exists():
        return 0
    size = p.stat().st_size
    if size == 0:
        return 0
    with open(p, "rb+") as fh:
        fh.seek(0)
        data = fh.read()
        if data.endswith(b"\n"):
            return 0
        keep = data.rfind(b"\n") + 1
        fh.truncate(keep)
        return size - keep


def is_verl_dump(rec: dict) -> bool:
    """True for a line written by verl's ``_write_generations`` (validation/rollout dump)."""
    return VERL_DUMP_KEYS.issubset(rec) and "response" not in rec


def from_verl_dump(rec: dict, default_data_source: str = "unknown") -> dict:
    """Map one verl validation-dump line onto our record fields.

    ``uid`` is ``"prompt:" + input`` -- verl's own uid is random per validation pass, so only
    the prompt text pairs a problem across steps and runs (kept as ``verl_uid``).  ``data_source`` comes
    from the line if a reward extra carries it, else ``default_data_source``.
    Correctness is ``acc`` when present, else ``score > 0`` (see :func:`is_correct`).
    """
    # verl draws a fresh uid per prompt in every validation pass, so the prompt text is the
    # key that pairs a problem across steps and runs; verl's own key is kept as verl_uid.
    uid = "prompt:" + str(rec.get("input", ""))
    out = {
        "uid": uid,
        "data_source": rec.get("data_source") or default_data_source,
        "prompt_text": rec.get("input"),
        "response": rec.get("output"),
        "ground_truth": rec.get("gts"),
        "score": rec.get("score"),
        "step": rec.get("step"),
        "verl_uid": rec.get("uid"),
    }
    if "acc" in rec:
        out["acc"] = rec["acc"]
    if "pred" in rec:
        out["pred"] = rec["pred"]
    return out


def normalise(rec: dict, default_data_source: str = "unknown") -> dict:
    """Our record (unchanged) or a verl dump line mapped by :func:`from_verl_dump`.

    Raises ``KeyError`` naming the missing field for anything else.
    """
    if is_verl_dump(rec):
        return from_verl_dump(rec, default_data_source)
    for key in ("uid", "response"):
        if key not in rec:
            raise KeyError(
                f"record lacks {key!r}: expected a `verl-focal eval generate` line "
                f"(uid, sample, data_source, response, ground_truth) or a verl validation dump "
                f"(input, output, gts, score); got keys {sorted(rec)}"
            )
    if "data_source" not in rec or rec["data_source"] in (None, ""):
        rec = dict(rec, data_source=default_data_source)
    return rec


def is_correct(rec: dict) -> bool:
    """Correctness of a scored record: ``acc`` if present (truthy / > 0), else ``score > 0``.

    Raises ``KeyError`` when neither is there (the record was never scored).
    """
    if rec.get("acc") is not None:
        return float(rec["acc"]) > 0
    if rec.get("score") is not None:
        return float(rec["score"]) > 0
    raise KeyError(f"record {rec.get('uid')!r} has neither 'acc' nor 'score': score it first (verl-focal eval score)")


def existing_counts(path: str | os.PathLike) -> tuple[Counter, set[tuple[str, int]], ReadStats]:
    """For resuming: samples already in ``path`` per uid, the set of (uid, sample) keys, and read stats."""
    counts: Counter = Counter()
    keys: set[tuple[str, int]] = set()
    stats = ReadStats()
    if Path(path).exists():
        for rec in read_jsonl(path, stats):
            key = (str(rec.get("uid")), int(rec.get("sample", -1)))
            if key in keys:
                continue
            keys.add(key)
            counts[key[0]] += 1
    return counts, keys, stats


def latest_dump(directory: str | os.PathLike) -> Path:
    """The ``<step>.jsonl`` with the highest step in a verl ``validation_data_dir``."""
    d = Path(directory)
    steps = [(int(p.stem), p) for p in d.glob("*.jsonl") if p.stem.isdigit()]
    if not steps:
        raise FileNotFoundError(f"no <step>.jsonl files in {d}: is it a verl trainer.validation_data_dir?")
    return max(steps)[1]


@dataclass
class ProblemCounts:
    """Per-problem sample and correct counts of one run, grouped by data source."""

    uids: list[str]
    data_sources: list[str]
    n: np.ndarray
    c: np.ndarray

    def by_source(self) -> dict[str, tuple[list[str], np.ndarray, np.ndarray]]:
        out: dict[str, tuple[list[str], np.ndarray, np.ndarray]] = {}
        ds = np.asarray(self.data_sources, dtype=object)
        for src in sorted(set(self.data_sources)):
            sel = np.flatnonzero(ds == src)
            out[src] = ([self.uids[i] for i in sel], self.n[sel], self.c[sel])
        return out


def count_correct(records: Iterable[dict]) -> ProblemCounts:
    """Group scored records by (data_source, uid) into per-problem ``n`` and ``c`` (sorted by uid)."""
    n: Counter = Counter()
    c: Counter = Counter()
    src: dict[str, str] = {}
    for rec in records:
        uid = str(rec["uid"])
        ds = str(rec.get("data_source", "unknown"))
        if src.setdefault(uid, ds) != ds:
            raise ValueError(
                f"problem uid {uid!r} appears with two data sources ({src[uid]!r}, {ds!r}); uids must be unique"
            )
        n[uid] += 1
        c[uid] += int(is_correct(rec))
    uids = sorted(n)
    return ProblemCounts(
        uids=uids,
        data_sources=[src[u] for u in uids],
        n=np.array([n[u] for u in uids], dtype=np.int64),
        c=np.array([c[u] for u in uids], dtype=np.int64),
    )


def write_jsonl_line(fh, rec: dict[str, Any]) -> None:
    fh.write(json.dumps(rec, ensure_ascii=False, default=_json_default) + "\n")


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if hasattr(obj, "tolist"):
        return obj.tolist()
    raise TypeError(f"object of type {type(obj).__name__} is not JSON serialisable")
