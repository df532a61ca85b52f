"""The GPU smoke (``gpu/smoke.py``) runs on the CPU, under the Ray stand-in the H200 run uses, and passes
(gpu-readiness §7): so the one device call runs code that has run here, and only the device differs.

Also: the stand-in refuses what would start a cluster, and the carried wheels are pinned to this environment's
versions (what the suite tested is what travels).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
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


def _pins(name: str) -> list[str]:
    return [ln.strip() for ln in (GPU / name).read_text().splitlines()
            if ln.strip() and ln[0] not in "#-"]


@pytest.mark.parametrize("listing", ["wheels.txt", "ray.txt", "image.txt"])
def test_every_listing_pins_exact_versions(listing):
    pins = _pins(listing)
    assert pins and all(re.fullmatch(r"[A-Za-z0-9_.\-]+==[^=\s]+", p) for p in pins), pins


@pytest.mark.parametrize("listing", ["wheels.txt", "ray.txt"])
def test_the_carried_wheels_are_this_environments_versions(listing):
    """`make install` takes them as constraints, so a fresh .venv has them whatever PyPI released since."""
    for pin in _pins(listing):
        name, version = pin.split("==")
        assert importlib.metadata.version(name) == version, f"gpu/{listing} pins {pin}, this .venv has " \
                                                            f"{importlib.metadata.version(name)}"


def test_the_ray_trim_names_folders_that_exist_and_none_that_verl_imports():
    import ray

    root = Path(ray.__file__).parents[1]
    removed = [ln[1:].strip() for ln in (GPU / "ray.txt").read_text().splitlines() if ln.startswith("-")]
    assert removed and all((root / d).is_dir() for d in removed), removed
    modules = {d.replace("/", ".") for d in removed}
    verl = Path(importlib.util.find_spec("verl").origin).parent
    imports = re.compile(r"^\s*(?:from|import)\s+(" + "|".join(re.escape(m) for m in sorted(modules)) + r")\b",
                         re.MULTILINE)
    hits = [f"{p.relative_to(verl)}: {m.group(1)}" for p in verl.rglob("*.py")
            for m in imports.finditer(p.read_text(errors="replace"))]
    assert hits == [], hits


def _names(listing: str) -> set[str]:
    return {p.split("==")[0].lower().replace("_", "-") for p in _pins(listing)}


def test_no_image_stand_in_package_is_also_carried():
    assert _names("image.txt") & (_names("wheels.txt") | _names("ray.txt")) == set()


def test_run_sh_runs_every_part_with_its_own_limit():
    text = (GPU / "run.sh").read_text()
    caps = dict(c.split(":") for c in re.search(r"for part in ([0-9: ]+); do", text).group(1).split())
    assert list(caps) == list("012345") and re.search(r'PARTS=\$\{PARTS:-0 1 2 3 4 5\}', text)
    assert sum(int(caps[p]) for p in "01234") <= 7 * 60  # the smoke: the first issue's bound for the device run
    assert int(caps["5"]) <= 8 * 60  # the trainer runs: install plus both runs within 8 minutes
    assert 'SITE=${SITE:-/tmp/site}' in text and '--target "$SITE"' in text and 'gpu/stub' in text
    assert 'gpu/trainer.py --device "$DEVICE"' in text


def test_run_sh_leaves_no_earlier_result_standing_for_a_part_that_writes_none(tmp_path):
    """A reused OUT: run.sh removes the parts' results before it starts, so a part that dies before writing its
    JSON (here: every part, as the install fails on a GPU_DIR with no wheels) shows no earlier run's PASS."""
    out = tmp_path / "out"
    (out / "trainer").mkdir(parents=True)
    for name in ("part0.json", "part5.json", "trainer/part5.json"):
        (out / name).write_text('{"checks": [{"ok": true}]}')
    (out / "notes.txt").write_text("the user's")
    (tmp_path / "empty" / "wheels").mkdir(parents=True)
    env = {**os.environ, "OUT": str(out), "GPU_DIR": str(tmp_path / "empty"), "SITE": str(tmp_path / "site"),
           "PYTHON": sys.executable, "DEVICE": "cpu"}
    proc = subprocess.run(["bash", str(GPU / "run.sh")], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stderr
    assert "installing the carried wheels failed" in proc.stderr
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == ["notes.txt"]
