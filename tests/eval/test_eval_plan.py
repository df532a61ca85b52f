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
    # 4 trained policy points (reference + 3) × 8 seeds, one evaluation each (no base model point in this pilot)
    assert (row["runs"], row["evaluations"], row["hours"]) == (32, 32, 32 * 100.0 + 32 * 10.0)
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


def _points(trained: int, once: list[str], per_seed: int) -> list[dict]:
    pts = [{"runs": {"1": f"t{i}-1", "2": f"t{i}-2"}, "trained": True} for i in range(trained)]
    pts += [{"runs": {"None": r}} for r in once]
    pts += [{"runs": {"1": f"w{i}-1", "2": f"w{i}-2"}, "trained": False} for i in range(per_seed)]
    return pts


def test_an_untrained_point_is_one_evaluation_and_no_training():
    """The issue's pilot: the reference, one control point and one method at S = 3 seeds: 9 trainings, 9 evaluations;
    the base model added as lr = 0: still 9 trainings, 10 evaluations; at S = 28: 3·28 = 84 trainings and 85
    evaluations, 84·850 + 85·75 H100-hours (the old count trained the base model: 28 · (850 + 75) = 25,900 more)."""
    fr = dict(_pilot([0.01]), points=_points(2, [], 0))
    (row,) = plan_rows(fr, [3], 850.0, 75.0)
    assert (row["runs"], row["evaluations"], row["hours"]) == (9, 9, 9 * 850 + 9 * 75)
    fr["points"] = _points(2, ["base"], 0)
    (row3, row28) = plan_rows(fr, [3, 28], 850.0, 75.0)
    assert (row3["runs"], row3["evaluations"]) == (9, 10)
    assert (row28["runs"], row28["evaluations"], row28["hours"]) == (84, 85, 84 * 850 + 85 * 75)
    # the base model ending two families is one run, one evaluation
    fr["points"] = _points(2, ["base", "base"], 0) + [{"runs": {"None": "base"}}]
    assert plan_rows(fr, [3], 850.0, 75.0)[0]["evaluations"] == 10
    # weight interpolation: 3 λ per seed, one evaluation each, no training
    fr["points"] = _points(2, ["base"], 3)
    (row,) = plan_rows(fr, [4], 850.0, 75.0)
    assert (row["runs"], row["evaluations"], row["hours"]) == (12, 12 + 1 + 12, 12 * 850 + 25 * 75)
    # given counts replace the pilot's
    (row,) = plan_rows(fr, [4], 850.0, 75.0, points=6, untrained=0, per_seed=0)
    assert (row["runs"], row["evaluations"]) == (24, 24)


def _example_pilot(tmp_path, with_base: bool):
    """The issue's pilot on the example runs: the reference, the lower-lr point 7e-7 (and the base model as lr = 0)
    and both methods, at seeds 1-3."""
    import yaml

    def seeds(p):
        return {"seeds": {s: f"{p}-s{s}" for s in (1, 2, 3)}}

    pts = [{"value": "7e-7", **seeds("grpo-lr7e-7")}] + ([{"value": "0 (base model)", "run": "base"}]
                                                          if with_base else [])
    doc = {"reference": {"name": "GRPO", **seeds("grpo")},
           "controls": [{"family": "lower lr", "knob": "lr", "points": pts}],
           "methods": [{"name": "F-GRPO γ=1", **seeds("fgrpo-g1")}, {"name": "Cue-GRPO α=0.8", **seeds("cue-a0.8")}]}
    path = tmp_path / f"pilot_{with_base}.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True))
    return path


def test_the_recommended_pilot_plans_every_example_method(tmp_path, capsys):
    """Without the base model both example methods fall outside the one-point lower-lr grid and `eval plan` refuses;
    with it (the pilot `eval plan --propose` recommends), every method has a plan."""
    assert cli_main(["eval", "example", "--out-dir", str(tmp_path)]) == 0
    out = {}
    for with_base in (False, True):
        assert cli_main(["eval", "frontier", "--families", str(_example_pilot(tmp_path, with_base)), "--runs",
                         str(tmp_path / "runs"), "--y", "pass@16", "--out-dir", str(tmp_path / f"fr{with_base}")]) == 0
    capsys.readouterr()
    assert cli_main(["eval", "plan", "--pilot", str(tmp_path / "frFalse")]) == 2
    assert "no comparison falls inside a control family's grid" in capsys.readouterr().err
    old = {c["method"]: c for c in json.loads((tmp_path / "frFalse" / "frontier.json").read_text())["claims"]}
    assert old["F-GRPO γ=1"]["outside_share"] == pytest.approx(0.358, abs=5e-4)
    assert all(c["verdict"] == "outside the grid" for c in old.values())
    assert cli_main(["eval", "plan", "--pilot", str(tmp_path / "frTrue"), "--seeds", "3", "28"]) == 0
    out = capsys.readouterr().out
    assert "| 3 | 0.091 [0.047, 0.135] | 12 | 13 | 11,175 |" in out
    assert "| 28 | 0.016 [0.008, 0.024] | 112 | 113 | 103,675 |" in out
    assert "To detect D = 0.02: 19 seeds per point for the median comparison, 40 for every comparison." in out
    assert "| F-GRPO γ=1 | lower lr | 40 |" in out and "| Cue-GRPO α=0.8 | lower lr | 7 |" in out
    fr = json.loads((tmp_path / "frTrue" / "frontier.json").read_text())
    assert {c["method"] for c in fr["claims"] if c["estimate"] is not None} == {"F-GRPO γ=1", "Cue-GRPO α=0.8"}
    from pathlib import Path  # docs/eval.md cites these numbers

    doc = (Path(__file__).resolve().parents[2] / "docs" / "eval.md").read_text()
    section = doc[doc.index("**The pilot that always plans.**"):doc.index("### Out-of-domain sets")]
    for line in ("| 3 | 0.091 [0.047, 0.135] | 12 | 13 | 11,175 |",
                 "| 28 | 0.016 [0.008, 0.024] | 112 | 113 | 103,675 |",
                 "To detect D = 0.02: 19 seeds per point for the median comparison, 40 for every comparison",
                 "F-GRPO in 35.8% of the", "Training runs: 12; evaluations: 13; H100-hours: 11,175"):
        assert line in section, line


def test_propose_prints_the_pilot_and_its_exact_cost(capsys):
    assert cli_main(["eval", "plan", "--propose", "--methods", "F-GRPO γ=1", "Cue-GRPO α=0.8"]) == 0
    out = capsys.readouterr().out
    assert "| base model | lower lr | untrained: one evaluation, no training |" in out
    # 4 trained points (reference, lr 6.8e-7, two methods) × 3 seeds, 12 + 1 evaluations
    assert "Training runs: 12; evaluations: 13; H100-hours: 11,175 (850 per training, 75 per evaluation)." in out
    assert cli_main(["eval", "plan", "--propose", "--methods", "F-GRPO", "--controls", "weight interpolation",
                     "KL to SFT", "--seeds", "4"]) == 0
    out = capsys.readouterr().out
    # trained: reference, lr, KL, F-GRPO = 4 × 4 = 16; evaluations 16 + base 1 + 3 λ × 4 seeds = 29
    assert "Training runs: 16; evaluations: 29; H100-hours: 15,775" in out
    assert out.count("eval interpolate of each seed's reference run") == 3


@pytest.mark.parametrize("argv, message", [
    (["--propose", "--methods", "F", "--controls", "KL"], "--controls 'KL': not a control family the pilot knows"),
    (["--propose"], "--methods: name at least one method"),
    (["--propose", "--methods", "F", "--seeds", "3", "4"], "--propose takes one number of seeds per point"),
    (["--pilot", "x", "--methods", "F"], "--methods / --controls describe a pilot to propose: add --propose"),
])
def test_propose_refusals(capsys, argv, message):
    assert cli_main(["eval", "plan", *argv]) == 2
    assert message in capsys.readouterr().err
