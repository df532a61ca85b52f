"""The controls' report section and figure (verl_focal.lab.demo.frontier_report) on a synthetic run."""

import json
import os

import numpy as np
import pytest

from verl_focal.lab.demo.arms import CONTROL_FAMILIES, CONTROLS_SET, METHOD_FAMILIES, MIXTURE_FAMILY, REFERENCE_ARM
from verl_focal.lab.stats.frontier import OUTSIDE


def _synthetic_results(seeds):
    """A run of the controls set whose per-seed metrics follow simple curves: controls lose pass@256 gains along
    y = -0.4 x, the methods sit on y = -0.8 x (above every control), the SFT policy at (-0.1, +0.06), the output
    mixture's points (references) on y = -0.6 x."""
    rng = np.random.default_rng(0)
    knob_x = {}
    for fam in CONTROL_FAMILIES + METHOD_FAMILIES:
        for i, a in enumerate(fam.arms):
            knob_x[a.name] = (-0.02 * (i + 1), -0.4 if fam.control else -0.8)
    runs, refs, base = [], [], {}
    for s in seeds:
        g1, g256 = 0.47 + rng.normal(0, 0.02), 0.87 + rng.normal(0, 0.02)
        base[str(s)] = {"pass_at_k": {"1": g1 - 0.1, "256": g256 + 0.06}}
        for a in MIXTURE_FAMILY.arms:
            dx = -0.1 * (1 - a.mixture)
            refs.append({"arm": a.name, "seed": s, "lambda": a.mixture, "eval": {
                "pass_at_k": {"1": g1 + dx, "16": 0.7, "256": g256 - 0.6 * dx}, "auc_at_k": 0.8, "delta_nll_rare": 0.1,
                "unfamiliar_pass_at_k": {"1": 0.1, "256": 0.7}, "rare_retained": 0.5,
                "strategy_mass": {"add": 0.2, "sub": 0.1, "mul": 0.01}, "groups_n8": {"multi_given_ge2": 0.7}}})
        for a in (a for a in CONTROLS_SET if a.trained):
            x, slope = knob_x.get(a.name, (0.0, 0.0))
            dx = x + rng.normal(0, 0.003) if a.name != REFERENCE_ARM else 0.0
            runs.append({"arm": a.name, "seed": s, "eval": {"pass_at_k": {"1": g1 + dx, "256": g256 + slope * dx}},
                         "history": [{"adv_abs_mean": 0.4 if a.estimator == "grpo" else 0.2}]})
    return {"runs": runs, "references": refs, "base": {"per_seed": base},
            "config": {"arms": [a.as_json() for a in CONTROLS_SET]}}


def test_controls_section_and_figure_on_a_synthetic_run(tmp_path):
    from verl_focal.lab.demo.frontier_report import (
        FRONTIER_PLOT,
        controls_markdown,
        frontier_plot,
        frontier_replication_markdown,
        frontier_results,
    )

    res = _synthetic_results(range(6))
    fr = frontier_results(json.loads(json.dumps(res)), n_boot=500)  # as read back from results.json
    assert fr["seeds"] == list(range(6)) and [f["name"] for f in fr["families"]][:3] == [
        "lower lr", "KL to SFT", "focal shuffled"]
    # 18 methods x 3 control families, the mixture's 12 points x 3 control families, 18 methods x the mixture; a
    # method above every control frontier is better against each, and above the mixture (y = -0.6 x) too
    assert len(fr["claims"]) == 54 + 36 + 18
    assert fr["references"] == [a.name for a in MIXTURE_FAMILY.arms]
    assert [f["name"] for f in fr["families"] if f.get("reference")] == ["output mixture"]
    by = {(c["method"], c["family"]): c for c in fr["claims"]}
    assert by[("F-GRPO N=8 γ=1", "lower lr")]["verdict"] == "better"
    assert by[("F-GRPO N=8 γ=1", "output mixture")]["verdict"] == "better"
    assert by[("output mixture λ=0.8", "lower lr")]["verdict"] == "better"  # -0.6 x above -0.4 x
    # the deepest method points (x = -0.06) are outside the entropy and KL grids (deepest -0.08) only if beyond;
    # every method point lies within the lower-lr family, which reaches the SFT policy at x = -0.1
    assert all(c["verdict"] != OUTSIDE for c in fr["claims"] if c["family"] == "lower lr")
    sft = [p for p in fr["points"] if p["arm"] == "base (SFT)"]  # the far end of the lower lr and of the mixture
    assert [p["family"] for p in sft] == ["lower lr", "output mixture"]
    assert sft[0]["pass@1"]["mean"] == pytest.approx(-0.1) and sft[1] == {**sft[0], "family": "output mixture",
                                                                             "knob": "λ", "control": False,
                                                                             "reference": True}
    res["frontier"] = fr
    md = "\n".join(controls_markdown(res))
    assert "## Equal pass@1: the methods against the controls' frontiers (6 seeds)" in md
    row = next(line for line in md.splitlines() if line.startswith("| F-GRPO N=8 γ=1 | -0.0"))
    assert row.count("**better**") == 4  # above the three control families and the mixture
    assert "Mean |Â| per update" in md and "GRPO N=8 0.400" in md
    assert "| vs focal shuffled | vs output mixture (reference) |" in md
    assert "| output mixture (reference) | λ = 0.8 | output mixture λ=0.8 |" in md
    assert "| reference point | Δ pass@1 | Δ pass@256 | vs lower lr |" in md
    assert "| reference point | pass@1 | pass@16 | pass@256 | AUC@256 |" in md  # the mixture's own metrics
    # the power statement and the "better" line count the methods only; the mixture has its own line
    assert "- The output mixture (a reference, not a method) better than a control family in this run: " in md
    path = os.path.join(tmp_path, FRONTIER_PLOT)
    frontier_plot(res, path)
    assert os.path.getsize(path) > 10_000
    rep = frontier_replication_markdown(res, res)
    assert rep[0] == ("| method (or reference point) | vs lower lr | vs KL to SFT | "
                      "vs focal shuffled | vs output mixture (reference) |") and len(rep) == 2 + 18 + 12
    assert "holds" not in rep[2] and "**better**" in rep[2]


def test_no_controls_section_without_a_complete_control_family():
    from verl_focal.lab.demo.frontier_report import frontier_results

    res = _synthetic_results(range(3))
    dropped = CONTROL_FAMILIES[0].arms[1].name
    for fam in CONTROL_FAMILIES[1:]:
        dropped_names = {a.name for a in fam.arms}
        res["runs"] = [r for r in res["runs"] if r["arm"] not in dropped_names]
    res["runs"] = [r for r in res["runs"] if r["arm"] != dropped]
    assert frontier_results(res) is None
    assert frontier_results({"runs": [r for r in _synthetic_results(range(3))["runs"] if r["arm"] != REFERENCE_ARM],
                             "base": {"per_seed": {}}}) is None


def test_power_lines_give_the_minimum_detectable_d_of_every_claim_inside_the_grid():
    """(t_{n−1,0.975} + t_{n−1,0.80}) · se at n seeds, se · √(n/n') with n' − 1 df projected; median and range over
    the method × control family claims that have an interval; the 'better in every run' line names the pairs."""
    from scipy import stats

    from verl_focal.lab.demo.frontier_report import frontier_results, power_markdown

    fr = frontier_results(json.loads(json.dumps(_synthetic_results(range(6)))), n_boot=300)
    controls = {f.name for f in CONTROL_FAMILIES}  # the methods against the control families; not the mixture's
    ses = [c["se"] for c in fr["claims"]
           if c["se"] is not None and c["family"] in controls and c["method"] not in fr["references"]]
    assert 0 < len(ses) < len(fr["claims"]) or len(ses) == len(fr["claims"])

    def mde(se, n, m):
        return (stats.t.ppf(0.975, m - 1) + stats.t.ppf(0.8, m - 1)) * se * (n / m) ** 0.5

    at6, at12 = [mde(se, 6, 6) for se in ses], [mde(se, 6, 12) for se in ses]
    lines = power_markdown([fr])
    assert lines[0] == (f"- Power ({len(ses)} comparisons inside the grid): the smallest D detected with 80% power at "
                        f"the 5% level is {np.median(at6):.3f} [{min(at6):.3f}, {max(at6):.3f}] (median [range]) at 6 "
                        f"seeds, and {np.median(at12):.3f} [{min(at12):.3f}, {max(at12):.3f}] projected to 12 seeds.")
    better = sorted((c["method"], c["family"]) for c in fr["claims"]
                    if c["verdict"] == "better" and c["family"] in controls and c["method"] not in fr["references"])
    assert better and lines[1] == "- Better than a control family at equal pass@1 in this run: " + "; ".join(
        f"{m} vs {f}" for m, f in better) + "."
    mixture_better = sorted((c["method"], c["family"]) for c in fr["claims"]
                            if c["verdict"] == "better" and c["family"] in controls and c["method"] in fr["references"])
    assert lines[2] == ("- The output mixture (a reference, not a method) better than a control family in this run: "
                        + "; ".join(f"{m} vs {f}" for m, f in mixture_better) + ".")
    # two runs: one line per run, projected to the seeds of both; a pair better in one run only is not named
    other = json.loads(json.dumps(fr))
    for c in other["claims"]:
        if (c["method"], c["family"]) == better[0]:
            c["verdict"] = "not detected"
    two = power_markdown([fr, other])
    assert two[0].startswith(f"- Power (run 1: {len(ses)} comparisons") and "projected to 12 seeds" in two[1]
    assert two[2] == "- Better than a control family at equal pass@1 in every run: " + "; ".join(
        f"{m} vs {f}" for m, f in better[1:]) + "."
