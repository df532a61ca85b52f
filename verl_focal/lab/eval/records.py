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
    """What :func:`read_jsonl` saw: good records, malformed lines (with line numbers),
    whether the file ended in a cut line (a killed writer), and the line number of the
    record last yielded (``line``)."""

    records: int = 0
    malformed: int = 0
    malformed_lines: list[int] = field(default_factory=list)
    truncated_tail: bool = False
    line: int = 0


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
        stats.line = i + 1
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

    Raises ``KeyError`` naming the missing field when a line has no ``uid``.
    """
    if is_verl_dump(rec):
        return from_verl_dump(rec, default_data_source)
    if "uid" not in rec:
        raise KeyError(
            f"record lacks 'uid': expected a `verl-focal eval generate` line "
            f"(uid, sample, data_source, response, ground_truth) or a verl validation dump "
            f"(input, output, gts, score); got keys {sorted(rec)}"
        )
    if "data_source" not in rec or rec["data_source"] in (None, ""):
        rec = dict(rec, data_source=default_data_source)
    return rec


#: what each reading command needs on a line; ``a|b`` = either field (not null)
NEEDS: dict[str, tuple[str, ...]] = {
    "score": ("uid", "response", "ground_truth"),
    "report": ("uid", "acc|score"),
    "rare-set": ("uid", "response", "prompt_text", "acc|score|ground_truth"),
    "rare-nll": ("prompt_text", "response", "base_nll"),
}

#: the fix to print with each command's refusal: what file to pass instead
FIX: dict[str, str] = {
    "score": "pass a JSONL written by `verl-focal eval generate`, or a verl trainer.validation_data_dir dump",
    "report": "score the run first with `verl-focal eval score` (it writes <out-dir>/scored/<run>.jsonl)",
    "rare-set": "pass --generations files written by `verl-focal eval generate`",
    "rare-nll": "pass a rare set written by `verl-focal eval rare-set`",
}


def missing_field(rec: dict, need: Iterable[str]) -> str | None:
    """The first requirement of ``need`` that ``rec`` fails (``'a'`` or ``'a'/'b'``), or ``None``.

    A field whose value is null counts as missing.

    >>> missing_field({"uid": "u", "acc": None, "score": 1}, ["uid", "acc|score"]) is None
    True
    >>> missing_field({"uid": "u", "response": "r"}, ["uid", "response", "ground_truth"])
    "'ground_truth'"
    """
    for req in need:
        alts = req.split("|")
        if not any(rec.get(a) is not None for a in alts):
            return "/".join(repr(a) for a in alts)
    return None


@dataclass
class LeftOut:
    """Lines of a run that were not used: counts by reason and the first one (``file:line: why``)."""

    lines: int = 0
    not_json: int = 0
    missing: int = 0
    first: str = ""
    #: data source -> lines that name it but carry no ground_truth (``eval score``): a source whose every line is
    #: here would vanish from the run without a word (:func:`empty_truth_problem`)
    truthless: Counter = field(default_factory=Counter)

    @property
    def count(self) -> int:
        return self.not_json + self.missing

    def note(self, where: str) -> None:
        if not self.first:
            self.first = where

    def add(self, other: LeftOut) -> None:
        self.lines += other.lines
        self.not_json += other.not_json
        self.missing += other.missing
        self.truthless.update(other.truthless)
        self.note(other.first)

    def summary(self) -> str:
        """``"left out 3 of 40 line(s) (1 not a JSON object, 2 without a needed field); first: f.jsonl:7: ..."``."""
        return (f"left out {self.count} of {self.lines} line(s) ({self.not_json} not a JSON object, "
                f"{self.missing} without a needed field); first: {self.first}")


PARQUET_MAGIC = b"PAR1"


def _file_kind(path: Path) -> str:
    """``'parquet'``, ``'empty'``, ``'binary'`` or ``'text'`` from the first bytes of ``path``."""
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if head.startswith(PARQUET_MAGIC):
        return "parquet"
    if not head.strip():
        return "empty"
    if b"\x00" in head:
        return "binary"
    return "text"


def sample_key(rec: dict) -> tuple[str, str] | None:
    """The ``(problem, sample)`` key of a normalised record, or ``None`` when the line carries no sample id.

    Our lines: ``(uid, sample)``; a v1 verl dump: ``(uid, verl_uid)`` (verl's uid is per sample).  A legacy
    verl dump has no per-sample id, so two equal lines there may be two equal samples and are not keyed.

    >>> sample_key({"uid": "p1", "sample": 3}), sample_key({"uid": "prompt:x", "verl_uid": "u_0_2"})
    (('p1', '3'), ('prompt:x', 'u_0_2'))
    """
    for field_name in ("sample", "verl_uid"):
        if rec.get(field_name) is not None:
            return str(rec.get("uid")), str(rec[field_name])
    return None


class Duplicates:
    """The lines of one run that repeat a ``(problem, sample)`` key, found while reading its files.

    Pass one instance to every :func:`read_records` call of a run (duplicates across its files count too),
    then :meth:`refuse`.
    """

    def __init__(self) -> None:
        self.first: dict[tuple[str, str], tuple[str, int]] = {}  # key -> (file, line) where it first appeared
        self.repeats: list[tuple[tuple[str, int], tuple[str, int], tuple[str, str]]] = []  # (where, first, key)

    def see(self, key: tuple[str, str] | None, file: str, line: int) -> None:
        if key is None:
            return
        if key in self.first:
            self.repeats.append(((file, line), self.first[key], key))
        else:
            self.first[key] = (file, line)

    def refuse(self, label: str = "") -> None:
        """Raise :class:`~verl_focal.config.errors.InputError` naming the repeated lines, if there are any."""
        from verl_focal.config.errors import InputError

        if not self.repeats:
            return
        shown = "; ".join(f"{where[0]} line {where[1]} repeats "
                          f"{'' if first[0] == where[0] else first[0] + ' '}line {first[1]} "
                          f"(problem {key[0]!r}, sample {key[1]})" for where, first, key in self.repeats[:3])
        more = f"; and {len(self.repeats) - 3} more" if len(self.repeats) > 3 else ""
        raise InputError(f"{label}{len(self.repeats)} line(s) repeat a (problem, sample) pair, which would count "
                         f"those samples twice: {shown}{more}; keep one line per (uid, sample) and score again")


#: the commands that read the answer text (its field must hold a string)
TEXT_COMMANDS = ("score", "rare-set", "rare-nll")


def read_records(
    path: str | os.PathLike,
    command: str,
    default_data_source: str = "unknown",
    label: str = "",
    duplicates: Duplicates | None = None,
) -> tuple[list[dict], LeftOut]:
    """The usable records of one JSONL file for ``command`` (a key of :data:`NEEDS`) and what was left out.

    Refuses (:class:`~verl_focal.config.errors.InputError`, naming the file, the field and the fix) a
    file that is a parquet or binary file, is empty, or has no line with the fields ``command`` needs.
    ``label`` prefixes the message (e.g. ``"run grpo: "``).  With ``duplicates``, each usable line's
    :func:`sample_key` is recorded there (the caller refuses repeats once all files of a run are read).
    """
    from verl_focal.config.errors import InputError

    p = Path(path)
    need, fix = NEEDS[command], FIX[command]
    if p.is_dir():
        raise InputError(f"{label}{p}: is a folder, not a JSONL file; {fix}")
    if not p.exists():
        raise InputError(f"{label}{p}: no such file; {fix}")
    kind = _file_kind(p)
    if kind == "parquet":
        hint = ("; to sample responses from an evaluation parquet, run `verl-focal eval generate --data "
                f"{p} --model MODEL --out OUT.jsonl` first" if command in ("score", "rare-set") else "")
        raise InputError(f"{label}{p}: is a parquet file, not JSONL; {fix}{hint}")
    if kind == "empty":
        raise InputError(f"{label}{p}: the file is empty; {fix}")
    if kind == "binary":
        raise InputError(f"{label}{p}: is a binary file, not JSONL; {fix}")
    stats = ReadStats()
    left = LeftOut()
    out: list[dict] = []
    first: tuple[int, str] | None = None  # (line, why) of the first line without a needed field
    for rec in read_jsonl(p, stats):
        keys = ", ".join(sorted(rec)) or "no keys"
        text_field = "output" if is_verl_dump(rec) else "response"  # the user's name for the answer text
        try:
            rec = normalise(rec, default_data_source) if command != "rare-nll" else rec
        except KeyError:
            why = "'uid'"
        else:
            why = missing_field(rec, need)
        if why is None and command in TEXT_COMMANDS and not isinstance(rec.get("response"), str):
            got = rec.get("response")
            raise InputError(f"{label}{p} line {stats.line}: {text_field!r} is a {type(got).__name__}"
                             f"{f' of {len(got)} items' if isinstance(got, (list, dict)) else ''}, not a string; "
                             "give one line per sampled response, its text as a string (several responses per "
                             "problem are several lines with the same uid and their own 'sample')")
        if why is None:
            out.append(rec)
            if duplicates is not None:
                duplicates.see(sample_key(rec), p.name, stats.line)
            continue
        left.missing += 1
        if why == "'ground_truth'" and rec.get("data_source") not in (None, "", default_data_source):
            left.truthless[str(rec["data_source"])] += 1
        if first is None:
            first = (stats.line, f"lacks {why} (it has {keys})")
    left.not_json = stats.malformed
    left.lines = stats.records + stats.malformed
    if stats.malformed_lines and (first is None or stats.malformed_lines[0] < first[0]):
        first = (stats.malformed_lines[0], "not a JSON object")
    if first is not None:
        left.first = f"{p.name} line {first[0]}: {first[1]}"
    if not out:
        if left.missing:
            raise InputError(f"{label}{p}: no line has the fields `verl-focal eval {command}` needs "
                             f"({', '.join(r.replace('|', ' or ') for r in need)}; line {first[0]} {first[1]}); {fix}")
        raise InputError(f"{label}{p}: not JSONL (no line is a JSON object, e.g. line {first[0]}); {fix}")
    return out, left


def is_empty_truth(truth: Any) -> bool:
    """A ground truth that no answer can match: an empty or blank string, or an empty list / dict.

    >>> [is_empty_truth(t) for t in ("", "  ", [], {}, "0", 0, ["A"])]
    [True, True, True, True, False, False, False]
    """
    if isinstance(truth, str):
        return not truth.strip()
    return isinstance(truth, (list, tuple, dict)) and not truth


def empty_truth_problem(recs: Iterable[dict], left: LeftOut, label: str = "") -> str | None:
    """The refusal for a run whose ground truths are empty (any line of a data source), or missing on every line of
    a data source (which would leave it out of the run silently), naming the data source(s); ``None`` if neither."""
    empty: Counter = Counter()
    total: Counter = Counter()
    for r in recs:
        src = str(r.get("data_source"))
        total[src] += 1
        if is_empty_truth(r.get("ground_truth")):
            empty[src] += 1
    fix = ("rebuild the set with `verl-focal prep-data eval` (its reward_model.ground_truth), then sample again with "
           "`verl-focal eval generate --data <that parquet>`")
    if empty:
        shown = ", ".join(f"{src} ({n} of {total[src]} answers)" for src, n in sorted(empty.items()))
        return (f"{label}empty ground truth(s) in data source {shown}: no answer can match an empty ground_truth, "
                f"so those would score 0; {fix}")
    gone = {src: n for src, n in left.truthless.items() if src not in total}
    if gone:
        shown = ", ".join(f"{src} (all {n} lines)" for src, n in sorted(gone.items()))
        return (f"{label}no ground_truth in data source {shown}: the source would be left out of the run; {fix}")
    return None


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
