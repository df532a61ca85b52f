"""Files of an App. J run: every record as CSV, configuration and summary as JSON, and back."""

from __future__ import annotations

import csv
import json
import os
from dataclasses import asdict

import torch

from .config import SimConfig
from .result import SimResult, summarise

__all__ = ["write_csv", "write_json", "read_results", "RECORD_FIELDS"]

#: Columns of the CSV, in order, with the type each is read back as.
RECORD_FIELDS = ["n", "gamma", "seed", "step", "m_ret", "correct_mass", "anchor_mass", "active_fraction"]
_FIELD_TYPES = {"n": int, "seed": int, "step": int}


def write_json(result: SimResult, path: str | os.PathLike, wall_seconds: float | None = None) -> None:
    """Write the run's configuration, per-N wall times and the summary table as JSON."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    meta = {
        "config": asdict(result.config),
        "seconds_per_n": {str(k): v for k, v in result.seconds.items()},
        "wall_seconds": wall_seconds,
        "torch_threads": torch.get_num_threads(),
        "summary": summarise(result),
    }
    meta["config"]["group_sizes"] = list(result.config.group_sizes)
    with open(path, "w") as f:
        json.dump(meta, f, indent=1)


def read_results(csv_path: str | os.PathLike, json_path: str | os.PathLike) -> SimResult:
    """Rebuild a :class:`SimResult` from the CSV and JSON a run wrote (e.g. to re-plot)."""
    with open(json_path) as f:
        meta = json.load(f)
    c = meta["config"]
    for key in ("group_sizes", "gammas", "seeds"):
        c[key] = tuple(c[key])
    res = SimResult(config=SimConfig(**c).validate())
    with open(csv_path, newline="") as f:
        for r in csv.DictReader(f):
            res.records.append({k: _FIELD_TYPES.get(k, float)(r[k]) for k in RECORD_FIELDS})
    res.seconds = {int(k): float(v) for k, v in meta.get("seconds_per_n", {}).items()}
    return res


def write_csv(result: SimResult, path: str | os.PathLike) -> None:
    """Write every record (N, gamma, seed, step, M_ret, ...) to a CSV file."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=RECORD_FIELDS)
        w.writeheader()
        for r in result.records:
            w.writerow({k: r[k] for k in RECORD_FIELDS})
