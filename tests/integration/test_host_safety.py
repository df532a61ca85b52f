"""The plugin never breaks its host (tests/integration/host_safety.py): with any verl name of our contract
renamed in a copy of the installed verl, verl imports and trains as without us, we say so in one WARNING,
and only the configs that need the name are refused, at start-up, in one line naming it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import host_safety
import pytest

from verl_focal.integration import compat
from verl_focal.integration.compat import CONTRACT, FEATURES

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def results():
    """host_safety.py in a process of its own: its children must import verl afresh, and this one has."""
    proc = subprocess.run([sys.executable, str(HERE / "host_safety.py")], capture_output=True, text=True,
                          timeout=1800, env={**os.environ, "PYTHONPATH": str(HERE.parents[1])})
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith("{")]
    return {r["name"]: r for r in rows}


@pytest.mark.slow  # one process per rename (about a minute on 2 idle cores): make test-fast skips it
@pytest.mark.parametrize("touch", [t for t in CONTRACT if not t.field], ids=lambda t: t.name)
def test_a_renamed_verl_name_disables_only_our_feature(results, touch):
    r = results[touch.name]
    assert "crash" not in r, r
    assert r["import_errors"] == {}, "verl's own imports broke"
    assert r["grpo"] is None, "verl's stock grpo broke"
    # the renamed identifier: this name and any other contract name it is a part of
    renamed = [t.name for t in CONTRACT if host_safety.leaf(touch.name) in t.name.replace(":", ".").split(".")]
    refusal = r["refusal"]
    assert refusal is not None, "a config that needs the name passed the pre-flight"
    assert "\n" not in refusal and any(n in refusal for n in renamed), refusal
    assert f"pip install '{compat.pinned_verl_spec()}'" in refusal
    if host_safety.cases(touch)[1] is not None:
        assert r["other"] is None, f"a config that does not need it was refused: {r['other']}"
    for line in r["warnings"]:  # one line per feature the rename took away, naming the name
        assert "\n" not in line and any(n in line for n in renamed), line
    if touch.feature in ("estimators", "advantage", "v1", "separated"):  # installed by the plugin at import
        assert len([w for w in r["warnings"] if w.startswith(f"verl-focal: {FEATURES[touch.feature]}")]) == 1


@pytest.mark.slow
def test_every_contract_name_that_is_not_a_field_was_renamed_in_its_own_process(results):
    assert sorted(results) == sorted(t.name for t in CONTRACT if not t.field)
    assert all("crash" not in r for r in results.values())


@pytest.mark.slow
@pytest.mark.parametrize("trainer,needs", [("one_step_off", True), ("ppo", False)])
def test_verl_focal_check_exits_2_in_one_line_naming_the_renamed_name(tmp_path, trainer, needs):
    """The real command, its fresh-process probe included, on a verl whose ``_fit_compute_log_prob`` was
    renamed: the separated trainers' config is refused in one line without a traceback; the v1 one passes."""
    name = "verl.experimental.separation.ray_trainer:SeparateRayPPOTrainer._fit_compute_log_prob"
    host_safety.renamed_copy("_fit_compute_log_prob", tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(HERE.parents[1])])}
    proc = subprocess.run([sys.executable, "-m", "verl_focal.cli", "check", "--trainer", trainer,
                           "algorithm.adv_estimator=f_grpo", *host_safety.MICRO],
                          capture_output=True, text=True, env=env, timeout=600)
    if needs:
        assert proc.returncode == 2, proc.stderr
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and name in lines[0] and lines[0].startswith("verl-focal check FAILED: config: ")
        assert "Traceback" not in proc.stderr + proc.stdout
    else:
        assert proc.returncode == 0, proc.stderr
        assert "verl-focal check: OK" in proc.stdout
        assert "NOT installed: the hook of verl's one-step-off" in proc.stdout  # said, not hidden
