"""`verl-focal eval frontier --demo DIR` reproduces a demo controls run exactly: the families' points, D, the
intervals and the verdicts, to 1e-9, on a small real run of 4 seeds (GRPO N=8, the lower-lr family, F-Cue-GRPO).
The demo computes pass@k exactly from the policy's probabilities; eval frontier reads them from results.json and
goes through its own path (families document, per-seed pairing, points, claims)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from verl_focal.cli import main as cli_main


@pytest.mark.slow
def test_eval_frontier_reproduces_the_demos_points_d_and_verdicts(tmp_path):
    from verl_focal.lab.demo.arms import CONTROL_FAMILIES, arms_by_name
    from verl_focal.lab.demo.experiment import preset, run_experiment
    from verl_focal.lab.demo.report import write_report

    arms = ["GRPO N=8"] + [a.name for a in CONTROL_FAMILIES[0].arms] + ["F-Cue-GRPO N=8"]
    cfg = dataclasses.replace(preset("quick"), seeds=(0, 1, 2, 3), sft_steps=20, rl_steps=2, rare_rollouts=16,
                              arms=arms_by_name(arms))
    write_report(run_experiment(cfg, log=lambda line: None), str(tmp_path / "demo"))
    demo = json.loads((tmp_path / "demo" / "results.json").read_text())["frontier"]
    assert len(demo["seeds"]) == 4 and [f["name"] for f in demo["families"]] == ["lower lr", "F-Cue-GRPO"]

    assert cli_main(["eval", "frontier", "--demo", str(tmp_path / "demo"), "--out-dir", str(tmp_path / "ev")]) == 0
    ev = json.loads((tmp_path / "ev" / "frontier.json").read_text())
    assert ev["resampled"] == "seeds" and ev["n_boot"] == demo["n_boot"] == 4000
    dp = {(p["family"], p["arm"]): p for p in demo["points"]}
    ep = {(p["family"], p["policy"]): p for p in ev["points"]}
    assert list(dp) == list(ep) and len(dp) == 6  # 4 lr points, the SFT policy (lr = 0), F-Cue-GRPO
    for k in dp:
        for m in ("pass@1", "pass@256"):
            for f in ("mean", "ci_low", "ci_high"):
                assert ep[k][m][f] == pytest.approx(dp[k][m][f], abs=1e-9), (k, m, f)
    dc = {(c["method"], c["family"]): c for c in demo["claims"]}
    ec = {(c["method"], c["family"]): c for c in ev["claims"]}
    assert list(dc) == list(ec) == [("F-Cue-GRPO N=8", "lower lr")]
    for k in dc:
        assert ec[k]["verdict"] == dc[k]["verdict"]
        for f in ("x", "y", "estimate", "ci_low", "ci_high", "outside_share"):
            if dc[k][f] is None:
                assert ec[k][f] is None
            else:
                assert ec[k][f] == pytest.approx(dc[k][f], abs=1e-9), (k, f)
    # the families document it read is written next to the table, in the families-file format
    fams = (tmp_path / "ev" / "families.yaml").read_text()
    assert "reference:" in fams and "GRPO N=8 lr=3.4e-4 | seed 0" in fams


@pytest.mark.slow
def test_eval_frontier_reads_every_family_of_a_controls_run_with_both_references(tmp_path, capsys):
    """A small controls run (3 seeds, 20 SFT steps, 2 RL steps) with the output mixture and the weight interpolation:
    `eval frontier --demo` exits 0 and reproduces all of the demo's claims (methods and reference points against the
    controls, methods against each reference family, each reference family against the other) to 1e-9; a
    results.json whose frontier names a point it holds no run of is refused in one line, not a traceback."""
    from verl_focal.lab.demo.arms import CONTROL_FAMILIES, REFERENCE_FAMILIES, arms_by_name
    from verl_focal.lab.demo.experiment import preset, run_experiment
    from verl_focal.lab.demo.report import write_report

    arms = (["GRPO N=8"] + [a.name for a in CONTROL_FAMILIES[0].arms] + ["F-Cue-GRPO N=8"]
            + [a.name for f in REFERENCE_FAMILIES for a in f.arms])
    cfg = dataclasses.replace(preset("quick"), seeds=(0, 1, 2), sft_steps=20, rl_steps=2, rare_rollouts=16,
                              arms=arms_by_name(arms))
    write_report(run_experiment(cfg, log=lambda line: None), str(tmp_path / "demo"))
    demo = json.loads((tmp_path / "demo" / "results.json").read_text())["frontier"]
    assert [f["name"] for f in demo["families"]] == ["lower lr", "F-Cue-GRPO", "output mixture",
                                                     "weight interpolation"]
    assert cli_main(["eval", "frontier", "--demo", str(tmp_path / "demo"), "--out-dir", str(tmp_path / "ev")]) == 0
    ev = json.loads((tmp_path / "ev" / "frontier.json").read_text())
    dc = {(c["method"], c["family"]): c for c in demo["claims"]}
    ec = {(c["method"], c["family"]): c for c in ev["claims"]}
    # 1 method + 24 reference points vs lower lr, the method vs 2 references, 12 + 12 reference points vs the other
    assert list(dc) == list(ec) and len(dc) == 25 + 2 + 24
    assert ("weight interpolation λ=0.5", "output mixture") in dc and ("output mixture λ=0.5",
                                                                      "weight interpolation") in dc
    for k in dc:
        assert ec[k]["verdict"] == dc[k]["verdict"], k
        for f in ("x", "y", "estimate", "ci_low", "ci_high", "outside_share"):
            assert (ec[k][f] is None) == (dc[k][f] is None), (k, f)
            if dc[k][f] is not None:
                assert ec[k][f] == pytest.approx(dc[k][f], abs=1e-9), (k, f)
    fams = yaml_load((tmp_path / "ev" / "families.yaml").read_text())
    assert [f["family"] for f in fams["references"]] == ["output mixture", "weight interpolation"]
    res = json.loads((tmp_path / "demo" / "results.json").read_text())
    res["references"] = [r for r in res["references"] if r["arm"] != "weight interpolation λ=0.5"]
    (tmp_path / "cut.json").write_text(json.dumps(res))
    capsys.readouterr()
    assert cli_main(["eval", "frontier", "--demo", str(tmp_path / "cut.json"), "--out-dir", str(tmp_path / "e2")]) == 2
    err = capsys.readouterr().err
    assert "the frontier names 'weight interpolation λ=0.5', which has no run or reference" in err
    assert "Traceback" not in err


def yaml_load(text: str):
    import yaml

    return yaml.safe_load(text)
