"""The GPU smoke (``gpu/smoke.py``) runs on the CPU, under the Ray stand-in the H200 run uses, and passes
(gpu-readiness §7): so the one device call runs code that has run here, and only the device differs.

Also: the stand-in refuses what would start a cluster, and the carried wheels are pinned to this environment's
versions (what the suite tested is what travels).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GPU = ROOT / "gpu"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{GPU / 'stub'}{os.pathsep}{ROOT}", "PYTHONUNBUFFERED": "1"}


@pytest.mark.timeout(600)
def test_every_part_passes_on_cpu_under_the_ray_stand_in(tmp_path):
    out = tmp_path / "smoke.json"
    r = subprocess.run([sys.executable, str(GPU / "smoke.py"), "--device", "cpu", "--small", "--out", str(out)],
                       env=_env(), capture_output=True, text=True, timeout=550)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    checks = json.loads(out.read_text())["checks"]
    assert all(c["ok"] for c in checks)
    by_part = {p: [c["check"] for c in checks if c["part"] == p] for p in "01234"}
    assert by_part["0"] == ["entry-point"]  # registered through verl's entry point, with the stub as Ray
    from verl_focal.estimators import all_specs

    names = [s.name for s in all_specs()]
    cases = [c for c in by_part["1"] if not c.startswith("time.")]
    assert len(cases) == 4 * len(names) and {c.split("[")[0] for c in cases} == set(names)
    assert sorted(c[5:] for c in by_part["1"] if c.startswith("time.")) == sorted(names)
    assert by_part["2"] == ["demo.quick"] and by_part["3"] == ["decoder.oov", "log-prob columns"]
    assert by_part["4"] == ["decode.cpu"]
    oov = next(c for c in checks if c["check"] == "decoder.oov")
    assert oov["out_of_vocab"] > 0  # the padded vocabulary was sampled: the check saw ids beyond the tokenizer
    assert "ray.init" not in r.stderr


def test_the_stand_in_refuses_a_cluster_and_is_permissive_otherwise():
    code = ("import ray\n"
            "@ray.remote(num_cpus=1)\nclass A: pass\n"
            "assert A.__name__ == 'A' and not ray.is_initialized()\n"
            "from ray.util.placement_group import PlacementGroup\n"
            "class B(PlacementGroup): pass\n"
            "assert not isinstance(object(), ray.ObjectRef)\n"
            "try:\n    ray.init()\nexcept RuntimeError as e:\n    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ray.init: this is verl-focal's Ray stand-in (gpu/stub); no cluster can start here"


def test_the_carried_wheels_are_this_environments_versions():
    pins = [ln.strip() for ln in (GPU / "wheels.txt").read_text().splitlines() if ln.strip() and ln[0] != "#"]
    assert pins and all(re.fullmatch(r"[A-Za-z0-9_.\-]+==[^=\s]+", p) for p in pins), pins
    for pin in pins:
        name, version = pin.split("==")
        assert importlib.metadata.version(name) == version, f"gpu/wheels.txt pins {pin}, this .venv has " \
                                                            f"{importlib.metadata.version(name)}"


def test_run_sh_runs_every_part_with_its_own_limit():
    text = (GPU / "run.sh").read_text()
    caps = re.search(r"for part in ([0-9: ]+); do", text).group(1).split()
    assert [c.split(":")[0] for c in caps] == list("01234")
    assert sum(int(c.split(":")[1]) for c in caps) <= 7 * 60  # the bound for the device run
    assert '--target /tmp/site' in text and 'gpu/stub' in text
