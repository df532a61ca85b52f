"""The demo report: mean ± sample std over seeds, the per-seed SFT policies as the base row, claims tables, skipped
arms, smoke banner, the group-size table and figure, plot axes (no verl, no model)."""

import json
import math
import statistics

import pytest
from scipy import stats as st

from verl_focal.lab.demo.report import (
    GROUP_SIZE_PLOT,
    REPORT_FILES,
    _ylim,
    group_size_rows,
    replication_markdown,
    summarise,
    write_report,
)
from verl_focal.lab.demo.stats import build_claims


def _eval(p1, p256, mul, retained=0.4):
    return {"pass_at_k": {1: p1, 16: (p1 + p256) / 2, 256: p256}, "auc_at_k": p256 - 0.1,
            "unfamiliar_pass_at_k": {1: p1 / 2, 256: p256 - 0.2},
            "rare_retained": retained, "delta_nll_rare": 0.2, "strategy_mass": {"add": 0.1, "sub": 0.1, "mul": mul},
            "entropy_final": 0.3, "zero_adv_group_frac": 0.25, "multi_strategy_share": 0.5,
            "groups_n8": {"ge2_correct": 0.9, "multi_given_ge2": 0.7}}


def _results(mode="test", seeds=(0, 1, 2)):
    runs = []
    vals = [(0.2, 0.8), (0.3, 0.9), (0.25, 0.7)]
    hist = [{"step": 0, "train_acc": 0.5, "loss": 0.0, "grad_norm": 1.0, "entropy": 0.3, "zero_adv_group_frac": 0.2,
             "focal/weight_mean_active": 0.6}]
    for seed in seeds:
        p1, p256 = vals[seed]
        runs.append({"arm": "GRPO N=8", "n": 8, "estimator": "grpo", "seed": seed,
                     "eval": _eval(p1 - 0.05, p256 - 0.1, 0.02), "history": hist})
        runs.append({"arm": "F-GRPO", "n": 8, "estimator": "f_grpo", "seed": seed, "eval": _eval(p1, p256, 0.01),
                     "history": hist})
    cfg = {
        "mode": mode,
        "device": "cpu",
        "prior": {"add": 0.55, "sub": 0.3, "mul": 0.15},
        "rl_steps": 1,
        "sft_steps": 5,
        "prompts_per_step": 8,
        "lr": 1e-3,
        "seeds": list(seeds),
        "rare_top_frac": 0.01,
        "arms": [{"name": "GRPO N=8"}, {"name": "F-GRPO"}, {"name": "Cue-GRPO"}],
    }
    # each seed's own SFT policy: pass@1 0.2 + 0.01·seed
    bases = {seed: _eval(0.2 + 0.01 * seed, 0.95, 0.03, retained=1.0) for seed in seeds}
    per = {}
    for r in runs:
        e = r["eval"]
        m = {"pass@1": e["pass_at_k"][1], "pass@16": e["pass_at_k"][16], "pass@256": e["pass_at_k"][256],
             "AUC@256": e["auc_at_k"], "ΔNLL_rare": e["delta_nll_rare"]}
        for k, v in m.items():
            per.setdefault(r["arm"], {}).setdefault(k, {})[r["seed"]] = v
    base_m = {m: {seed: v for seed in seeds} for m, v in
              {"pass@16": 0.575, "pass@256": 0.95, "AUC@256": 0.85, "ΔNLL_rare": 0.0}.items()}
    base_m["pass@1"] = {seed: bases[seed]["pass_at_k"][1] for seed in seeds}
    claims = [c.as_json() for c in build_claims(per, base_m, reference="GRPO N=8")]
    mean_base = dict(bases[seeds[0]], rare_set_size=5)
    return {"config": cfg, "problems": {"rl": 10, "familiar": 5, "unfamiliar": 5}, "seeds_completed": list(seeds),
            "base": {"eval": mean_base, "per_seed": bases},
            "runs": runs, "claims": claims,
            "skipped_arms": [{"arm": "Cue-GRPO", "reason": "estimator 'cue_grpo' is not registered"}],
            "seconds": {"total": 1.0, "cpu": 0.7, "sft_cpu": 0.4, "rl_cpu": 0.3}}


def test_summary_is_mean_and_sample_std_over_seeds():
    s = summarise(_results())
    m, sd = s["F-GRPO"]["columns"]["pass@256"]
    assert abs(m - statistics.mean([0.8, 0.9, 0.7])) < 1e-12
    assert abs(sd - statistics.stdev([0.8, 0.9, 0.7])) < 1e-12  # ddof = 1
    assert s["F-GRPO"]["ks"] == [1, 16, 256]
    # the base row: every seed's own SFT policy, first; its multi-strategy share is the exact N=8 one
    assert list(s)[0] == "base (SFT)" and s["base (SFT)"]["n_seeds"] == 3
    assert s["base (SFT)"]["columns"]["pass@1"][0] == pytest.approx(0.21)
    assert s["base (SFT)"]["columns"]["multi-strategy groups"][0] == pytest.approx(0.7)


def test_write_report_files_table_claims_and_skips(tmp_path):
    paths = write_report(_results(), str(tmp_path))
    assert set(paths) == set(REPORT_FILES)
    for p in paths.values():
        assert (tmp_path / p.split("/")[-1]).stat().st_size > 0
    md = (tmp_path / "report.md").read_text()
    assert "| F-GRPO | 0.250 ± 0.050 |" in md
    assert "| base (SFT) | 0.210 ± 0.010 |" in md
    # against each seed's own SFT policy: GRPO N=8 pass@1 − base = (0.15, 0.25, 0.2) − (0.2, 0.21, 0.22)
    d = [0.15 - 0.2, 0.25 - 0.21, 0.2 - 0.22]
    half = st.t.ppf(0.975, 2) * statistics.stdev(d) / math.sqrt(3)
    m = statistics.mean(d)
    assert f"| GRPO N=8 | 3 | {m:+.3f} [{m - half:+.3f}, {m + half:+.3f}] **not detected** |" in md
    assert "| Cue-GRPO | skipped: estimator 'cue_grpo' is not registered |" in md
    assert "focal/weight_mean_active = 0.600" in md
    # F-GRPO minus GRPO N=8 is exactly +0.100 on pass@256 in every seed: zero-width interval, "better"
    assert "| F-GRPO | 3 | +0.050 [+0.050, +0.050] **better** | " in md
    assert "+0.100 [+0.100, +0.100] **better**" in md
    assert "target ≤ 0.02: met" in md
    assert "smoke run" not in md
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["summary"]["F-GRPO"]["pass@256"]["std"] > 0
    c = next(
        c for c in saved["claims"] if c["arm"] == "F-GRPO" and c["baseline"] == "GRPO N=8" and c["metric"] == "pass@256"
    )
    assert set(c) == {"arm", "baseline", "metric", "estimate", "ci_low", "ci_high", "n_seeds", "verdict"}
    assert c["n_seeds"] == 3 and abs(c["estimate"] - 0.1) < 1e-12 and c["verdict"] == "better"


def test_single_seed_quick_report_is_a_smoke_run(tmp_path):
    write_report(_results(mode="quick", seeds=(0,)), str(tmp_path))
    md = (tmp_path / "report.md").read_text()
    assert "smoke run: checks the pipeline, not the methods" in md
    assert "±" not in md and "No claims: one seed" in md and "**better**" not in md


def test_replication_table():
    a = _results()["claims"]
    b = json.loads(json.dumps(a))
    for c in b:
        if c["metric"] == "pass@1" and c["arm"] == "F-GRPO" and c["baseline"] == "GRPO N=8":
            c["verdict"] = "not detected"
    md = "\n".join(replication_markdown(a, b))
    assert "| F-GRPO | GRPO N=8 | pass@1 | +0.050 better | +0.050 not detected | not established |" in md
    assert "| F-GRPO | GRPO N=8 | pass@256 | +0.100 better | +0.100 better | holds |" in md


def test_group_size_table_and_figure(tmp_path):
    """Three or more GRPO group sizes: pass_at_k_vs_N.png and a table of means with t intervals over seeds."""
    res = _results()
    for r in list(res["runs"]):
        if r["arm"] == "GRPO N=8":
            for n, shift in ((2, 0.05), (32, -0.05)):
                e = json.loads(json.dumps(r["eval"]))
                e["pass_at_k"] = {int(k): v + shift for k, v in e["pass_at_k"].items()}
                res["runs"].append(dict(r, arm=f"GRPO N={n}", n=n, eval=e))
    res["group_size"] = {"trough": "GRPO N=32"}
    paths = write_report(res, str(tmp_path))
    assert GROUP_SIZE_PLOT in paths and (tmp_path / GROUP_SIZE_PLOT).stat().st_size > 0
    rows = {r["arm"]: r for r in group_size_rows(res)}
    v = [0.7 - 0.1 - 0.05, 0.8 - 0.1 - 0.05, 0.9 - 0.1 - 0.05]  # GRPO N=32's pass@256 per seed (in seed order)
    half = st.t.ppf(0.975, 2) * statistics.stdev(v) / math.sqrt(3)
    got = rows["GRPO N=32"]["pass@256"]
    assert got["mean"] == pytest.approx(statistics.mean(v))
    assert got["ci_high"] - got["mean"] == pytest.approx(half)
    assert rows["GRPO N=32"]["rollouts_per_step"] == 32 * 8
    md = (tmp_path / "report.md").read_text()
    assert "## Group size" in md and "| GRPO N=2 | 2 | 16 |" in md and "**GRPO N=32**" in md
    assert "| F-GRPO | 8 | 64 |" in md  # the focal arm at N=8 sits in the same table
    # fewer than three group sizes: no group-size figure
    assert GROUP_SIZE_PLOT not in write_report(_results(), str(tmp_path / "b"))


def test_axes_start_where_the_data_do():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    _ylim(ax, [0.0, 0.0, 0.0])  # a flat zero curve: [0, a small span], never below 0
    lo, hi = ax.get_ylim()
    assert lo == 0.0 and 0.0 < hi < 0.1
    _ylim(ax, [0.82, 0.9, 0.95])
    lo, hi = ax.get_ylim()
    assert 0.7 < lo < 0.82 and 0.95 < hi <= 1.0
    plt.close(fig)


def test_headline_joins_two_runs(tmp_path):
    """Ranges of the two runs' means; GRPO N=8 against its seed's SFT policy, other arms against GRPO N=8, with the
    verdict only where both runs agree."""
    from verl_focal.lab.demo.report import headline_markdown

    a, b = _results(), _results()
    write_report(a, str(tmp_path / "a"))
    write_report(b, str(tmp_path / "b"))
    ra = json.loads((tmp_path / "a" / "results.json").read_text())
    rb = json.loads((tmp_path / "b" / "results.json").read_text())
    for c in rb["claims"]:  # run 2 disagrees on F-GRPO's pass@1
        if (c["arm"], c["baseline"], c["metric"]) == ("F-GRPO", "GRPO N=8", "pass@1"):
            c["verdict"], c["estimate"] = "not detected", 0.01
    md = "\n".join(headline_markdown(ra, rb))
    assert "| base (SFT) | 0.210 | 0.950 | — | — | — |" in md
    assert "| F-GRPO | 0.250 | 0.800 | GRPO N=8 | +0.010 to +0.050 not established | +0.100 better |" in md
    assert "| GRPO N=8 | 0.200 | 0.700 | base (SFT) |" in md


def test_estimator_effect_against_grpo_and_not_exercised():
    """advantage_effect against independently computed row means; an arm that never changed a row is reported as
    not exercised (and so is a GRPO arm whose advantages were all zero)."""
    import torch

    from verl_focal.lab.demo.effect import advantage_effect, effect_markdown, not_exercised

    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    ref = torch.tensor([[0.5, 0.5, 9.0], [-1.0, 7.0, 7.0], [0.0, 0.0, 0.0]])
    adv = torch.tensor([[0.25, 0.25, -3.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])  # row 0 halved; padding ignored
    e = advantage_effect(adv, ref, mask)
    assert e["effect/adv_diff_vs_grpo"] == pytest.approx((0.25 + 0 + 0) / 3)
    assert e["effect/rows_changed_frac"] == pytest.approx(1 / 3)
    assert e["effect/rows_nonzero_frac"] == pytest.approx(2 / 3)
    assert advantage_effect(ref, ref, mask)["effect/rows_changed_frac"] == 0

    def run(arm, est, hist):
        return {"arm": arm, "estimator": est, "history": hist}

    zero = {"effect/adv_diff_vs_grpo": 0.0, "effect/rows_changed_frac": 0.0, "effect/rows_nonzero_frac": 0.0}
    live = {"effect/adv_diff_vs_grpo": 0.0, "effect/rows_changed_frac": 0.0, "effect/rows_nonzero_frac": 0.5}
    runs = [run("GRPO N=8", "grpo", [live, zero]), run("F-GRPO", "f_grpo", [dict(live, **{
        "effect/adv_diff_vs_grpo": 0.2, "effect/rows_changed_frac": 0.5}), live]), run("Cue-GRPO", "cue_grpo", [live])]
    lines = effect_markdown(runs)
    assert lines[3] == "- GRPO N=8: reference (Â_GRPO itself); 25.0% of rows have Â ≠ 0 (groups with both right and " \
                       "wrong rollouts)"
    assert lines[4] == "- F-GRPO: mean |Â − Â_GRPO| = 0.100; 25.0% of rows changed (50.0% have Â ≠ 0)"
    assert lines[5].startswith("- Cue-GRPO: not exercised: Â = Â_GRPO on every row")
    assert not_exercised(runs) == ["Cue-GRPO"]
    assert not_exercised([run("GRPO N=8", "grpo", [zero])]) == ["GRPO N=8"]
    assert effect_markdown([run("old", "f_grpo", [{"loss": 0.0}])]) == []  # a run from before the metric: no section


def test_passk_differences_are_paired_by_seed_with_t_intervals(tmp_path):
    """The pass@k figure's right panel: each policy's pass@k minus GRPO N=8's, seed by seed, mean and Student-t
    interval (the claims' formula); the base row is each seed's SFT policy.  Without GRPO N=8 there is no panel."""
    import matplotlib.image as mpimg

    from verl_focal.lab.demo.report import passk_differences

    res = _results()
    diffs = passk_differences(res)
    assert list(diffs) == ["base (SFT)", "F-GRPO"]
    f = diffs["F-GRPO"]
    assert f["ks"] == [1, 16, 256] and f["n_seeds"] == 3
    assert f["mean"] == pytest.approx([0.05, 0.075, 0.1]) and f["ci_low"] == pytest.approx([0.05, 0.075, 0.1])
    d = [0.2 - 0.15, 0.21 - 0.25, 0.22 - 0.2]  # each seed's SFT pass@1 minus GRPO N=8's
    half = st.t.ppf(0.975, 2) * statistics.stdev(d) / math.sqrt(3)
    b = diffs["base (SFT)"]
    assert b["mean"][0] == pytest.approx(statistics.mean(d))
    assert (b["ci_low"][0], b["ci_high"][0]) == pytest.approx((statistics.mean(d) - half, statistics.mean(d) + half))
    one = passk_differences(_results(seeds=(1,)))
    assert one["F-GRPO"]["n_seeds"] == 1 and math.isnan(one["F-GRPO"]["ci_low"][0])
    write_report(res, str(tmp_path / "two"))
    without = _results()
    without["runs"] = [r for r in without["runs"] if r["arm"] != "GRPO N=8"]
    assert passk_differences(without) == {}
    write_report(without, str(tmp_path / "one"))
    two_w = mpimg.imread(tmp_path / "two" / "pass_at_k.png").shape[1]
    one_w = mpimg.imread(tmp_path / "one" / "pass_at_k.png").shape[1]
    assert two_w > 1.7 * one_w  # the second panel
