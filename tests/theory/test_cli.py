"""``verl-focal tail-miss`` and ``verl-focal sim`` through the real CLI dispatcher."""

from __future__ import annotations

import csv
import json
import os

import pytest

from verl_focal.cli import main


def test_tail_miss_table_and_peak(capsys):
    assert main(["tail-miss", "--mu", "0.64", "--tau", "6.3e-5", "--n", "8", "32"]) == 0
    out = capsys.readouterr().out
    assert "peak: N = 20" in out
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines() if line.strip()[:1].isdigit()}
    assert rows["8"] == "0.9711" and rows["32"] == "0.998"


def test_tail_miss_spec_table(capsys):
    assert main(["tail-miss", "--spec-table"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert [(r[0], r[1], r[3], r[4]) for r in rows] == [
        ("0.5", "0.05", "6", "6"), ("0.8", "0.05", "8", "8"), ("0.8", "0.01", "15", "15"), ("0.2", "0.01", "21", "21")]


def test_tail_miss_rho_and_errors(capsys):
    assert main(["tail-miss", "--mu", "0.8", "--rho", "0.01"]) == 0
    assert "peak: N = 15" in capsys.readouterr().out
    assert main(["tail-miss", "--mu", "0.5", "--tau", "0.7"]) == 2
    assert "--tau 0.7 must lie strictly between 0 and --mu 0.5" in capsys.readouterr().err
    assert main(["tail-miss", "--tau", "0.1"]) == 2
    assert "give --mu" in capsys.readouterr().err


def test_sim_small_run_writes_csv_png_and_json(tmp_path, capsys):
    out_dir = tmp_path / "theory"
    rc = main(["sim", "--n-actions", "400", "--n-correct", "40", "--n-grid", "2..8", "--steps", "6",
               "--record-every", "3", "--seeds", "0", "1", "--out-dir", str(out_dir), "--name", "t", "--no-progress"])
    assert rc == 0
    with open(out_dir / "t.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 3 * 2 * 2 * 2  # N x gamma x seed x recorded steps
    assert {r["n"] for r in rows} == {"2", "4", "8"}
    assert os.path.getsize(out_dir / "t.png") > 10_000
    meta = json.loads((out_dir / "t.json").read_text())
    assert meta["config"]["steps"] == 6 and meta["config"]["group_sizes"] == [2, 4, 8]
    assert "largest loss of correct mass" in capsys.readouterr().out


def test_sim_user_mu_tau_and_bad_input(tmp_path, capsys):
    rc = main(["sim", "--mu", "0.3", "--tau", "1e-3", "--n-actions", "500", "--n-correct", "50", "--n-grid", "4",
               "--steps", "3", "--seeds", "0", "--out-dir", str(tmp_path), "--no-plot", "--no-progress"])
    assert rc == 0
    assert "initial correct mass 0.3000" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["sim", "--objective", "adam"])  # argparse choices
    assert "--objective" in capsys.readouterr().err
    assert main(["sim", "--n-actions", "10", "--n-correct", "20", "--no-progress"]) == 2
    assert "n_correct" in capsys.readouterr().err
