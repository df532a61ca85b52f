"""`verl-focal demo` as a tool: bad --out-dir and --seeds refused before the run, --replicate of two designs refused,
and Ctrl-C (a real SIGINT to a real process) ends in one line with exit 130, keeping the finished seeds' results."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from verl_focal.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _err_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.strip() and "--debug" not in ln]


@pytest.mark.parametrize("seeds,bad", [(["-3-2"], "-3-2"), (["1", "-3"], "-3"), (["5-2"], "5-2"), (["x"], "x")])
def test_seeds_say_what_they_accept(seeds, bad, capsys):
    assert main(["demo", "--seeds", *seeds, "--no-progress"]) == 2
    lines = _err_lines(capsys.readouterr().err)
    assert lines == [f"verl-focal demo: --seeds: {bad!r} is not a seed; give integers >= 0 and/or inclusive ranges "
                     "LO-HI with LO <= HI, e.g. --seeds 0-23 or --seeds 0 5 7"]


def test_out_dir_is_checked_before_the_run(tmp_path, capsys, monkeypatch):
    import verl_focal.lab.demo.experiment as experiment

    def no_run(*a, **k):  # the check must come first: reaching the run is the failure
        raise AssertionError("the run started")

    monkeypatch.setattr(experiment, "run_experiment", no_run)
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert main(["demo", "--quick", "--no-progress", "--out-dir", str(afile)]) == 2
    assert _err_lines(capsys.readouterr().err) == [
        f"verl-focal demo: --out-dir {afile}: is a file; give a folder (it is created if missing)"]
    assert main(["demo", "--quick", "--no-progress", "--out-dir", str(afile / "sub")]) == 2
    lines = _err_lines(capsys.readouterr().err)
    assert lines == [f"verl-focal demo: --out-dir {afile / 'sub'}: cannot write there: Not a directory; give a "
                     "folder you can write (it is created if missing)"]
    if os.geteuid() != 0:  # root writes through permission bits
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        assert main(["demo", "--quick", "--no-progress", "--out-dir", str(locked)]) == 2
        assert "cannot write there" in capsys.readouterr().err and "Permission denied"


def _run_json(path: Path, config: dict, seeds: list[int]) -> Path:
    path.mkdir()
    (path / "results.json").write_text(json.dumps({"config": config, "claims": [], "seeds_completed": seeds}))
    return path


def _config(mode: str) -> dict:
    from verl_focal.lab.demo.experiment import preset

    cfg = preset(mode)
    out = dataclasses.asdict(cfg)
    out["arms"] = [a.as_json() for a in cfg.arms]
    return out


def test_replicate_refuses_two_designs_naming_the_settings(tmp_path, capsys):
    quick = _run_json(tmp_path / "q", _config("quick"), [0])
    default = _run_json(tmp_path / "d", _config("default"), list(range(1000, 1024)))
    assert main(["demo", "--replicate", str(quick), str(default)]) == 2
    out = capsys.readouterr()
    lines = _err_lines(out.err)
    assert len(lines) == 1 and out.out == ""
    assert lines[0].startswith("verl-focal demo: --replicate: the two runs have different designs (run 1 is a quick "
                               "run, run 2 a default run), so their verdicts do not replicate one another: ")
    q, d = _config("quick"), _config("default")
    assert "rl_steps: 8 vs 60" in lines[0] and f"sft_steps: {q['sft_steps']} vs {d['sft_steps']}" in lines[0]
    assert "on disjoint --seeds" in lines[0]
    # the same design on other seeds, and other worker counts, is a replication
    other = _config("default")
    other.update(jobs=1, threads=2, budget_s=600.0)
    again = _run_json(tmp_path / "d2", other, list(range(24)))
    assert main(["demo", "--replicate", str(again), str(default)]) == 0
    # an arm both runs hold must be the same arm; --steps changes the design
    changed = _config("default")
    changed["rl_steps"] = 30
    changed["arms"][1]["settings"] = {"focal.gamma": 2.0}
    bad = _run_json(tmp_path / "d3", changed, [7])
    assert main(["demo", "--replicate", str(bad), str(default)]) == 2
    msg = capsys.readouterr().err
    assert "rl_steps: 30 vs 60" in msg and "arm 'F-GRPO N=8 γ=0.5': " in msg and "'focal.gamma': 2.0" in msg
    assert "(run 1 is" not in msg  # both default mode: the settings say what differs


#: `verl-focal demo --quick` with a smaller SFT and one RL step, so that a seed takes a second or two
#: SIGINT gets Python's own handler back: a job started in the background by a non-interactive shell (CI's
#: runner, ``nohup ... &``) inherits SIGINT ignored, and the child would then never see the Ctrl-C it is sent
DRIVER = """
import signal
import sys
signal.signal(signal.SIGINT, signal.default_int_handler)
import verl_focal.lab.demo.experiment as experiment
quick = experiment.preset
experiment.preset = lambda mode: experiment.dataclasses.replace(quick(mode), sft_steps=20, rl_steps=1)
from verl_focal.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _interrupt_after_first_seed(out: Path, *extra: str) -> tuple[int, list[str], list[str]]:
    """Start a long demo (100 small seeds), wait until it reports its first finished seed, send SIGINT; return
    (exit code, stderr lines up to the gate, stderr lines after it)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("VERL_FOCAL_DEBUG", None)
    cmd = [sys.executable, "-c", DRIVER, "demo", "--quick", "--seeds", "0-99", "--arms", "GRPO N=8", "--no-progress",
           "--out-dir", str(out), *extra]
    with open(out.parent / "stdout.txt", "w") as stdout:
        p = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=subprocess.PIPE, text=True)
        before = []
        for line in p.stderr:  # gated on progress: the first finished seed
            before.append(line.rstrip("\n"))
            if " finished (1 of 100)" in line:
                break
        else:
            p.wait()
            raise AssertionError(f"no seed finished (rc {p.returncode}): {before[-5:]}")
        p.send_signal(signal.SIGINT)
        after = [ln.rstrip("\n") for ln in p.stderr]
        rc = p.wait()
    return rc, before, after


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_prints_one_line_exits_130_and_keeps_finished_seeds(tmp_path, jobs):
    out = tmp_path / "demo"
    rc, before, after = _interrupt_after_first_seed(out, "--jobs", jobs)
    assert rc == 130
    assert not any("Traceback" in ln or "KeyboardInterrupt" in ln for ln in before + after)
    after = [ln for ln in after if ln.strip()]
    # at most a seed that finished while the signal was on its way, then the one line
    assert all(" finished (" in ln for ln in after[:-1]), after
    assert after[-1].startswith("verl-focal demo: interrupted; kept the ") and str(out) in after[-1]
    res = json.loads((out / "results.json").read_text())
    assert res["interrupted"] is True and res["seeds_completed"] and res["seeds_completed"][0] in range(100)
    assert sorted(res["seeds_completed"] + res["seeds_not_finished"]) == list(range(100))
    assert {r["seed"] for r in res["runs"]} == set(res["seeds_completed"])
    assert f"kept the {len(res['seeds_completed'])} finished seed(s) {res['seeds_completed']}" in after[-1]
    md = (out / "report.md").read_text()
    assert "Interrupted (Ctrl-C): seeds [" in md and (out / "pass_at_k.png").stat().st_size > 0


def test_a_huge_seed_range_is_refused_with_its_estimate_and_budget_named(tmp_path, capsys, monkeypatch):
    """`--seeds 0-99999` (80 million steps): refused before anything runs, in one line with the time estimate and
    --budget; the estimate is seeds × (16 s SFT + 5 arms × 2.5 s) / 2 workers = 100,000 × 28.5 / 2 s = 16.5 days. With
    --budget the run starts (here: reaching the run is enough) after one line with the estimate and the budget."""
    import verl_focal.lab.demo.experiment as experiment

    def no_run(*a, **k):
        raise RuntimeError("the run started")

    monkeypatch.setattr(experiment, "run_experiment", no_run)
    assert main(["demo", "--seeds", "0-99999", "--no-progress", "--out-dir", str(tmp_path)]) == 2
    lines = _err_lines(capsys.readouterr().err)
    assert lines == ["verl-focal demo: --seeds 0-99999: 100,000 seeds × 5 trained arms: about 16.5 days on an idle "
                     "machine, up to twice that on a loaded one (docs/demo.md, 'Run time and power'); give --budget "
                     "SECONDS to run as many of these seeds as fit (in the given order), or fewer seeds"]
    assert experiment.estimate_seconds(dataclasses.replace(experiment.preset("default"), seeds=tuple(range(100_000)))
                                       ) == pytest.approx(100_000 * (16.0 + 5 * 2.5) / 2)
    with pytest.raises(RuntimeError, match="the run started"):
        main(["demo", "--seeds", "0-99999", "--budget", "1800", "--no-progress", "--out-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert "about 16.5 days on an idle machine" in err and "--budget 1800 s stops starting seeds" in err
    # the default run (24 seeds, about 6 min) says nothing extra
    with pytest.raises(RuntimeError, match="the run started"):
        main(["demo", "--no-progress", "--out-dir", str(tmp_path)])
    assert "idle machine" not in capsys.readouterr().err
