"""Content-addressed cache of judge partitions (in memory, optionally on disk).

The key is a SHA-256 over (problem, solutions, model, prompt version, solution
budget), so a resumed run or a repeated group costs no request.  Only answers
that came from the judge are stored, never fallbacks.  Disk entries are
written atomically (temp file + rename); an unreadable entry is ignored and
counted, never raised.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

__all__ = ["cache_key", "PartitionCache"]


def cache_key(
    problem: str | None, solutions: Sequence[str], model: str, prompt_version: str, max_chars_per_solution: int
) -> str:
    """SHA-256 hex digest of the canonical JSON of everything the judge's answer depends on."""
    payload = json.dumps(
        {
            "problem": problem,
            "solutions": list(solutions),
            "model": model,
            "prompt_version": prompt_version,
            "max_chars_per_solution": int(max_chars_per_solution),
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class PartitionCache:
    """LRU in memory (``max_entries``; 0 disables it) in front of an optional directory."""

    def __init__(self, max_entries: int = 100_000, directory: str | os.PathLike | None = None) -> None:
        self.max_entries = int(max_entries)
        self.directory = Path(directory) if directory else None
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)
        self._mem: OrderedDict[str, dict] = OrderedDict()
        self._lock = threading.Lock()
        self.disk_errors = 0

    def _path(self, key: str) -> Path:
        assert self.directory is not None
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str, n: int) -> dict | None:
        """The stored ``{"labels": [...], "names": [...]}`` for ``key`` if it fits ``n`` solutions."""
        with self._lock:
            hit = self._mem.get(key)
            if hit is not None:
                self._mem.move_to_end(key)
        if hit is None and self.directory is not None:
            path = self._path(key)
            if path.exists():
                try:
                    hit = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    self.disk_errors += 1
                    hit = None
                if hit is not None:
                    self._remember(key, hit)
        if hit is None or not isinstance(hit.get("labels"), list) or len(hit["labels"]) != n:
            return None
        return hit

    def put(self, key: str, labels: list[int], names: list[str]) -> None:
        entry = {"labels": list(labels), "names": list(names)}
        self._remember(key, entry)
        if self.directory is not None:
            path = self._path(key)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(entry, f, ensure_ascii=False)
                os.replace(tmp, path)
            except OSError:
                self.disk_errors += 1

    def _remember(self, key: str, entry: dict) -> None:
        if self.max_entries <= 0:
            return
        with self._lock:
            self._mem[key] = entry
            self._mem.move_to_end(key)
            while len(self._mem) > self.max_entries:
                self._mem.popitem(last=False)

    def __len__(self) -> int:
        return len(self._mem)
