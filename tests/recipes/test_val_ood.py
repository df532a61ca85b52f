"""VAL_OOD=1 adds F-GRPO's OOD sets to the recipes' validation files; off by default."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "recipes" / "deepscaler" / "grpo.sh"


def _run(**env: str) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k not in ("VAL_FILES", "VAL_OOD", "DATA_DIR", "VERL_FOCAL_DATA")}
    e.update(HOME="/home/u", PYTHON=sys.executable, PYTHONPATH=str(ROOT), DATA_DIR="/d", **env)
    return subprocess.run(["bash", str(SCRIPT), "--print-overrides"], env=e, capture_output=True, text=True, timeout=60)


def _val_files(out: subprocess.CompletedProcess) -> list[str]:
    assert out.returncode == 0, out.stderr
    line = next(l for l in out.stdout.splitlines() if l.startswith("data.val_files="))
    return line[len("data.val_files=["):-1].split(",")


def test_default_validates_on_math_only():
    files = _val_files(_run())
    assert len(files) == 6 and not any(s in f for f in files for s in ("gpqa", "ifeval", "synlogic"))


def test_val_ood_adds_the_three_ood_sets():
    files = _val_files(_run(VAL_OOD="1"))
    assert files[6:] == ["/d/eval/gpqa_diamond.parquet", "/d/eval/ifeval.parquet", "/d/eval/synlogic.parquet"]


def test_val_ood_bad_value_is_an_error():
    out = _run(VAL_OOD="yes")
    assert out.returncode == 2 and "VAL_OOD=yes: must be 0 or 1" in out.stderr
