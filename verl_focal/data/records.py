"""Reading source records: a local JSON / JSONL / parquet file or a Hugging Face dataset name."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

LOCAL_SUFFIXES = (".json", ".jsonl", ".parquet")


class DataPrepError(ValueError):
    """A problem with the input data or options; the message names the fix."""


def is_local(source: str) -> bool:
    """True when ``source`` names a local file (by suffix or because it exists)."""
    return source.endswith(LOCAL_SUFFIXES) or os.path.exists(source)


def _read_json(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    stripped = text.lstrip()
    if stripped.startswith("["):
        data = json.loads(text)
        if not all(isinstance(r, dict) for r in data):
            raise DataPrepError(f"{path}: a JSON array must hold objects (one per problem)")
        return data
    if stripped.startswith("{") and not path.endswith(".jsonl"):
        # one object: either a record, or {"data"/"train": [...]}
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            for key in ("data", "train", "test", "rows"):
                if isinstance(obj.get(key), list):
                    return obj[key]
            return [obj]
    rows = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise DataPrepError(f"{path}:{lineno}: not valid JSON ({e.msg}); fix or remove the line") from e
    return rows


def load_records(source: str, *, split: str = "train", config: str | None = None) -> list[dict]:
    """All records of ``source`` as a list of dicts.

    ``source`` is a local ``.json`` (array or JSON lines), ``.jsonl`` or ``.parquet`` file, or a
    Hugging Face dataset name (loaded with ``datasets.load_dataset(source, config, split=split)``).
    """
    if is_local(source):
        if not os.path.exists(source):
            raise DataPrepError(f"input file {source!r} does not exist")
        if source.endswith(".parquet"):
            import pandas as pd

            return pd.read_parquet(source).to_dict(orient="records")
        return _read_json(source)
    try:
        import datasets
    except ImportError as e:  # pragma: no cover - datasets is a dependency
        raise DataPrepError("loading a Hugging Face dataset needs `pip install datasets`") from e
    try:
        ds = datasets.load_dataset(source, config, split=split)
    except Exception as e:  # offline, gated, misspelt ...
        raise DataPrepError(
            f"could not load the Hugging Face dataset {source!r} (config={config!r}, split={split!r}): "
            f"{type(e).__name__}: {e}. Without network access, download it elsewhere and pass the local "
            "JSON/JSONL/parquet file instead."
        ) from e
    return [dict(r) for r in ds]


def resolve_column(records: Sequence[dict], wanted: str | Sequence[str], *, source: str, role: str) -> str:
    """The first name in ``wanted`` that is a column of ``records`` (the union of their keys).

    Raises :class:`DataPrepError` naming the role, the candidates and the columns present.
    """
    candidates = [wanted] if isinstance(wanted, str) else list(wanted)
    present: dict[str, None] = {}
    for r in records[:1000]:
        for k in r:
            present.setdefault(k, None)
    for name in candidates:
        if name in present:
            return name
    raise DataPrepError(
        f"{source}: no {role} column; looked for {candidates}, found {list(present)}. "
        f"Pass the right name with --{role}-field."
    )


def cell(record: dict, key: str) -> Any:
    """``record[key]`` with NaN/None read as missing (None)."""
    v = record.get(key)
    if v is None:
        return None
    try:
        if v != v:  # NaN from pandas
            return None
    except Exception:  # arrays etc.
        pass
    return v
