"""The demo report: mean ± sample std over seeds, skipped arms listed, every file written (no verl, no model)."""

import json
import statistics

from verl_focal.demo.report import REPORT_FILES, summarise, write_report


def _eval(p1, p256, mul):
    return {"pass_at_k": {1: p1, 16: (p1 + p256) / 2, 256: p256}, "auc_at_k": p256 - 0.1, "train_p_correct": 0.5,
            "rare_retained": 0.4, "delta_nll_rare": 0.2, "strategy_mass": {"add": 0.1, "sub": 0.1, "mul": mul},
            "entropy_final": 0.3, "zero_adv_group_frac": 0.25}


def _results():
    runs = []
    for seed, (p1, p256) in enumerate([(0.2, 0.8), (0.3, 0.9), (0.25, 0.7)]):
        hist = [{"step": 0, "train_acc": 0.5, "loss": 0.0, "grad_norm": 1.0, "entropy": 0.3, "zero_adv_group_frac": 0.2,
                 "focal/weight_mean_active": 0.6}]
        runs.append({"arm": "F-GRPO", "seed": seed, "eval": _eval(p1, p256, 0.01), "history": hist})
    runs.append({"arm": "GRPO", "seed": 0, "eval": _eval(0.1, 0.5, 0.02), "history": hist})
    cfg = {"mode": "test", "device": "cpu", "prior": {"add": 0.7, "sub": 0.22, "mul": 0.08}, "rl_steps": 1,
           "prompts_per_step": 8, "lr": 1e-3, "seeds": [0, 1, 2], "eval_samples": 256, "rare_top_frac": 0.01}
    return {"config": cfg, "problems": {"train": 10, "held_out": 3},
            "base": {"eval": _eval(0.2, 0.95, 0.03), "rare_set_size": 5, "rare_set_sampled_correct": 500},
            "runs": runs, "skipped_arms": [{"arm": "Cue-GRPO", "reason": "estimator 'cue_grpo' is not registered"}],
            "seconds": {"total": 1.0, "sft_and_base_eval": 0.5, "cpu": 0.7}}


def test_summary_is_mean_and_sample_std_over_seeds():
    s = summarise(_results())
    m, sd = s["F-GRPO"]["columns"]["pass@256"]
    assert abs(m - statistics.mean([0.8, 0.9, 0.7])) < 1e-12
    assert abs(sd - statistics.stdev([0.8, 0.9, 0.7])) < 1e-12  # ddof = 1
    assert s["GRPO"]["columns"]["pass@1"] == (0.1, 0.0)  # one seed: std reported as 0
    assert s["F-GRPO"]["ks"] == [1, 16, 256]


def test_write_report_files_table_and_skips(tmp_path):
    paths = write_report(_results(), str(tmp_path))
    assert set(paths) == set(REPORT_FILES)
    for p in paths.values():
        assert (tmp_path / p.split("/")[-1]).stat().st_size > 0
    md = (tmp_path / "report.md").read_text()
    assert "| F-GRPO | 0.250 ± 0.050 |" in md
    assert "| Cue-GRPO | skipped: estimator 'cue_grpo' is not registered |" in md
    assert "focal/weight_mean_active = 0.600" in md
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["summary"]["F-GRPO"]["pass@256"]["std"] > 0
