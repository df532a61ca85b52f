"""`verl-focal eval plan`: a design's smallest detectable D and cost from a pilot, against hand computations."""

from __future__ import annotations

import json
import math
import re

import pytest

from verl_focal.cli import main as cli_main
from verl_focal.lab.eval.frontier_report import power_line
from verl_focal.lab.eval.plan import plan_rows, seeds_for

# t quantiles with 7 degrees of freedom (tables): 0.975 and 0.80
T7_975, T7_80 = 2.3646243, 0.8960296


def _pilot(ses, n=4, points=3):
    claims = [{"method": f"m{i}", "family": "lr", "estimate": 0.01, "se": se, "verdict": "not detected"}
              for i, se in enumerate(ses)]
    claims.append({"method": "out", "family": "lr", "estimate": None, "se": None, "verdict": "outside the grid"})
    return {"claims": claims, "resampled": "seeds", "seeds": list(range(n)), "level": 0.95, "x": "pass@1",
            "y": "pass@256", "benchmark": "in-domain", "points": [{}] * points}


def test_projection_and_cost_by_hand():
    fr = _pilot([0.01, 0.03])
    (row,) = plan_rows(fr, [8], train_hours=100.0, eval_hours=10.0)
    m = [(T7_975 + T7_80) * se * math.sqrt(4 / 8) for se in (0.01, 0.03)]
    assert row["low"] == pytest.approx(m[0], rel=1e-6) and row["high"] == pytest.approx(m[1], rel=1e-6)
    assert row["median"] == pytest.approx((m[0] + m[1]) / 2, rel=1e-6)  # the comparison outside the grid is left out
    # 4 policy points (reference + 3) × 8 seeds; one evaluation each and the base model's
    assert (row["runs"], row["evaluations"], row["hours"]) == (32, 33, 32 * 100.0 + 33 * 10.0)
    (row,) = plan_rows(fr, [8], 100.0, 10.0, points=2)
    assert row["runs"] == 16


def test_seeds_for_is_the_fewest_that_reach_the_target():
    fr = _pilot([0.01, 0.03])
    for which, key in (("median", "median"), ("high", "high")):
        s = seeds_for(fr, 0.02, which)
        above, at = plan_rows(fr, [s - 1, s], 0, 0)
        assert at[key] <= 0.02 < above[key], (which, s)
    assert seeds_for(fr, 1.0) == 2
    assert seeds_for(fr, 1e-9) is None


def test_plan_at_the_pilots_seeds_is_its_power_line(tmp_path, capsys):
    assert cli_main(["eval", "example", "--out-dir", str(tmp_path)]) == 0
    assert cli_main(["eval", "frontier", "--families", str(tmp_path / "families.yaml"), "--runs",
                     str(tmp_path / "runs"), "--y", "pass@16", "--out-dir", str(tmp_path / "fr")]) == 0
    fr = json.loads((tmp_path / "fr" / "frontier.json").read_text())
    capsys.readouterr()
    assert cli_main(["eval", "plan", "--pilot", str(tmp_path / "fr"), "--seeds", "4", "28"]) == 0
    out = capsys.readouterr().out
    row4 = re.search(r"^\| 4 \| (\S+ \[\S+, \S+\]) \|", out, re.M).group(1)
    assert f"is {row4} (median [range]" in power_line(fr)
    med = seeds_for(fr, 0.02)
    assert f"To detect D = 0.02: {med} seeds per point for the median comparison" in out


@pytest.mark.parametrize("argv, message", [
    (["--seeds", "1"], "--seeds 1: each must be >= 2"),
    (["--target", "0"], "--target 0: must be > 0"),
    (["--points", "1"], "--points 1: must be >= 2"),
])
def test_bad_numbers_exit_2(tmp_path, capsys, argv, message):
    (tmp_path / "frontier.json").write_text(json.dumps(_pilot([0.01])))
    assert cli_main(["eval", "plan", "--pilot", str(tmp_path), *argv]) == 2
    assert message in capsys.readouterr().err


def test_bad_pilots_exit_2(tmp_path, capsys):
    assert cli_main(["eval", "plan", "--pilot", str(tmp_path / "none")]) == 2
    assert "no frontier.json there" in capsys.readouterr().err
    one = dict(_pilot([0.01]), resampled="problems", seeds=[1])
    (tmp_path / "frontier.json").write_text(json.dumps(one))
    assert cli_main(["eval", "plan", "--pilot", str(tmp_path)]) == 2
    assert "measures no seed-to-seed spread; a pilot needs 2 or more training seeds" in capsys.readouterr().err
    (tmp_path / "frontier.json").write_text(json.dumps(_pilot([])))
    assert cli_main(["eval", "plan", "--pilot", str(tmp_path)]) == 2
    assert "no comparison falls inside a control family's grid" in capsys.readouterr().err


def test_docs_plan_table_is_the_commands_output(tmp_path, capsys):
    """docs/eval.md's `eval plan` table on the example runs is what the command it names prints."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "eval.md").read_text()
    section = doc[doc.index("The example runs as the pilot"):doc.index("The design we recommend")]
    documented = re.findall(r"^\| (\d+) \| (\S+ \[\S+, \S+\]) \| (\d+) \| ([\d,]+) \|$", section, re.M)
    assert len(documented) == 5
    assert cli_main(["eval", "example", "--out-dir", str(tmp_path)]) == 0
    assert cli_main(["eval", "frontier", "--families", str(tmp_path / "families.yaml"), "--runs",
                     str(tmp_path / "runs"), "--y", "pass@16", "--out-dir", str(tmp_path / "fr")]) == 0
    capsys.readouterr()
    assert cli_main(["eval", "plan", "--pilot", str(tmp_path / "fr"), "--points", "6", "--seeds",
                     *[row[0] for row in documented]]) == 0
    printed = re.findall(r"^\| (\d+) \| (\S+ \[\S+, \S+\]) \| (\d+) \| \d+ \| ([\d,]+) \|$", capsys.readouterr().out,
                         re.M)
    assert printed == documented
