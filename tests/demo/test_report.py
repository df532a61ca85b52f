"""The demo report: mean ± sample std over seeds, claims tables, skipped arms, smoke banner (no verl, no model)."""

import json
import statistics

from verl_focal.demo.report import REPORT_FILES, replication_markdown, summarise, write_report
from verl_focal.demo.stats import build_claims


def _eval(p1, p256, mul):
    return {"pass_at_k": {1: p1, 16: (p1 + p256) / 2, 256: p256}, "auc_at_k": p256 - 0.1, "train_p_correct": 0.5,
            "rare_retained": 0.4, "delta_nll_rare": 0.2, "strategy_mass": {"add": 0.1, "sub": 0.1, "mul": mul},
            "entropy_final": 0.3, "zero_adv_group_frac": 0.25, "multi_strategy_share": 0.5}


def _results(mode="test", seeds=(0, 1, 2)):
    runs = []
    vals = [(0.2, 0.8), (0.3, 0.9), (0.25, 0.7)]
    hist = [{"step": 0, "train_acc": 0.5, "loss": 0.0, "grad_norm": 1.0, "entropy": 0.3, "zero_adv_group_frac": 0.2,
             "focal/weight_mean_active": 0.6}]
    for seed in seeds:
        p1, p256 = vals[seed]
        runs.append({"arm": "GRPO N=8", "seed": seed, "eval": _eval(p1 - 0.05, p256 - 0.1, 0.02), "history": hist})
        runs.append({"arm": "F-GRPO", "seed": seed, "eval": _eval(p1, p256, 0.01), "history": hist})
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
    base = _eval(0.2, 0.95, 0.03)
    per = {}
    for r in runs:
        e = r["eval"]
        m = {"pass@1": e["pass_at_k"][1], "pass@16": e["pass_at_k"][16], "pass@256": e["pass_at_k"][256],
             "AUC@256": e["auc_at_k"], "ΔNLL_rare": e["delta_nll_rare"]}
        for k, v in m.items():
            per.setdefault(r["arm"], {}).setdefault(k, {})[r["seed"]] = v
    base_m = {"pass@1": 0.2, "pass@16": 0.575, "pass@256": 0.95, "AUC@256": 0.85, "ΔNLL_rare": 0.0}
    claims = [c.as_json() for c in build_claims(per, base_m, reference="GRPO N=8")]
    return {"config": cfg, "problems": {"train": 10, "held_out": 3}, "seeds_completed": list(seeds),
            "base": {"eval": base, "rare_set_size": 5, "rare_set_sampled_correct": 500},
            "runs": runs, "claims": claims,
            "skipped_arms": [{"arm": "Cue-GRPO", "reason": "estimator 'cue_grpo' is not registered"}],
            "seconds": {"total": 1.0, "sft_and_base_eval": 0.5, "cpu": 0.7, "rl_cpu": 0.3}}


def test_summary_is_mean_and_sample_std_over_seeds():
    s = summarise(_results())
    m, sd = s["F-GRPO"]["columns"]["pass@256"]
    assert abs(m - statistics.mean([0.8, 0.9, 0.7])) < 1e-12
    assert abs(sd - statistics.stdev([0.8, 0.9, 0.7])) < 1e-12  # ddof = 1
    assert s["F-GRPO"]["ks"] == [1, 16, 256]


def test_write_report_files_table_claims_and_skips(tmp_path):
    paths = write_report(_results(), str(tmp_path))
    assert set(paths) == set(REPORT_FILES)
    for p in paths.values():
        assert (tmp_path / p.split("/")[-1]).stat().st_size > 0
    md = (tmp_path / "report.md").read_text()
    assert "| F-GRPO | 0.250 ± 0.050 |" in md
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
