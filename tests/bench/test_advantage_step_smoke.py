"""Smoke test of bench/advantage_step.py at a tiny size: a real run (Ray, TransferQueue, verl's
old-log-prob pass with the faked worker group, the loopback judge); the numbers are not checked,
only that every arm ran, what the hook read, and what verl's pass wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _bench_module import load

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "advantage_step.py"


@pytest.mark.parametrize(
    "args,message",
    [
        (["--sizes", "2048x"], "--sizes: '2048x' is not ROWSxTOKENS[/GROUP]"),
        (["--sizes", "10x64/4"], "rows a multiple of the group"),
        (["--arms", "grpo,cue_sgi"], "unknown arm 'cue_sgi' (did you mean 'cue_sig'?)"),
        (["--arms", "unlikely_bypas"], "unknown arm 'unlikely_bypas' (did you mean 'unlikely_bypass'?)"),
        (["--repeats", "0"], "--repeats=0 must be >= 1"),
        (["--overlap-s", "-1"], "--overlap-s=-1.0 must be >= 0"),
        (["--baseline-steps", "4"], "--baseline-steps=4 must be 1, 2 or 3"),
    ],
)
def test_bad_options_exit_2_with_one_line(args, message, capsys):
    assert load().main(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


@pytest.mark.slow  # starts Ray, TransferQueue and the judge process (20 s on 2 idle cores); make test-fast skips it
def test_tiny_run_times_every_arm_and_writes_json(tmp_path):
    out = tmp_path / "step.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--sizes", "32x96/8", "--repeats", "1", "--overlap-s", "0",
         "--judge-latency", "0.05", "--ref-pass", "--vocab", "400", "--reward-samples", "4",
         "--no-cache", "--json", str(out)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "== 32x96 (4 prompts x 8) ==" in proc.stdout and "lp reduce" in proc.stdout
    report = json.loads(out.read_text())
    size = report["sizes"]["32x96"]
    arms = size["arms"]
    assert list(arms) == ["grpo", "grpo_bypass", "f_grpo", "cue_sig", "cue_text", "f_cue", "cue_judge", "passk",
                          "unlikely", "unlikely_bypass", "maxrl", "ds_grpo", "ds_grpo_bypass"]
    assert arms["unlikely_bypass"]["baseline"] == "grpo_bypass" and arms["unlikely"]["baseline"] == "grpo"
    assert arms["ds_grpo_bypass"]["baseline"] == "grpo_bypass" and arms["maxrl"]["baseline"] == "grpo"
    for name, r in arms.items():
        assert r["wall_s"] > 0 and r["cpu_s"] > 0 and r["peak_extra_rss_mib"] >= 0, name
        assert r["split"]["old_log_prob"] > 0 and r["split"]["advantage"] > 0, name
        assert r["split"]["ref_pass"] > 0, name  # verl's reference pass ran in every step (--ref-pass)
        # the hook's own time is a part of the step's (none for verl's stock arms)
        assert (r["split"]["ours"] == 0.0) if name in ("grpo", "grpo_bypass") else (
            0 < r["split"]["ours"] <= r["wall_s"] + r["split"]["estimator"]), name
        # the old log-probs' per-row reduction is timed (and counted in ours) in the arms that read them only
        assert (r["split"]["lp_reduce"] > 0) == name.startswith(("unlikely", "ds_grpo")), name
        assert r["split"]["ours"] >= r["split"]["estimator"] + r["split"]["lp_reduce"] - 1e-9 or name in (
            "grpo", "grpo_bypass"), name
        if name.endswith("_bypass"):  # the pass only copies the rollout's log-probs
            assert "actor/entropy" not in r["metrics"], name
        else:  # verl's own pass ran on what the faked worker group wrote
            assert 0 < r["metrics"]["actor/entropy"] < 10, name
    assert arms["cue_sig"]["metrics"]["verl_focal/decoded_rows"] == 0  # signatures: no text read
    assert arms["cue_sig"]["metrics"]["cue/groups_from_text"] == 0
    # from text: the prefetch decoded the rows to partition and extracted their cues during the pass
    assert arms["cue_text"]["metrics"]["cue/groups_from_text"] == size["mixed_groups"] > 0
    assert arms["cue_text"]["metrics"]["cue/groups_prefetched"] == size["mixed_groups"]
    assert 0 < arms["cue_text"]["metrics"]["verl_focal/decoded_rows"] <= size["correct_rows"]
    assert arms["cue_judge"]["metrics"]["judge/fallback_rate"] == 0.0
    # the prefetch sent every group's request during the pass; the step joined them or found them cached
    assert arms["cue_judge"]["metrics"]["verl_focal/prefetched"] == 1.0
    assert arms["cue_judge"]["metrics"]["judge/cache_hit_rate"] + arms["cue_judge"]["metrics"][
        "judge/inflight_joins"] / size["mixed_groups"] >= 1.0 - 1e-9
    # one step per arm: each baseline timed three times, every other arm compared with its baseline
    assert len(arms["grpo"]["wall_s_all"]) == 3 and len(arms["f_grpo"]["wall_s_all"]) == 1
    assert arms["f_grpo"]["vs_baseline"]["within_margin"] in ("yes", "no", "?")
    assert arms["passk"]["metrics"]["passk/groups"] == 32 // 8
    # unlikely_grpo ranked every correct row by every row's old log-prob, in bypass mode too
    for name in ("unlikely", "unlikely_bypass"):
        m = arms[name]["metrics"]
        assert m["unlikely/correct_rows"] == size["correct_rows"], name
        assert m["unlikely/nonfinite_logprob_rows"] == 0, name
        assert m["verl_focal/old_log_prob_rows_frac"] == 1.0, name
    for name in ("ds_grpo", "ds_grpo_bypass"):  # ds_grpo read every row's old log-prob, in bypass mode too
        m = arms[name]["metrics"]
        assert m["ds_grpo/nonfinite_logprob_rows"] == 0 and m["verl_focal/old_log_prob_rows_frac"] == 1.0, name
    assert arms["maxrl"]["metrics"]["maxrl/groups"] == 32 // 8
    rs = report["reward_side"]
    assert rs["responses"] == 4 and 0 < rs["correct"] < 4  # the scorer agreed with the generator on each
    assert rs["ours_ms"]["mean"] > 0 and rs["ours_cue_set_ms"]["mean"] > 0 and rs["verl_math_verify_ms"]["mean"] > 0
