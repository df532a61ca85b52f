"""Several runs of one design pooled (`verl-focal demo --replicate RUN1 RUN2 [RUN3 ...]`): the pooled verdicts are those
of one analysis over the concatenated seeds, runs of different designs or with shared seeds are refused in one line,
the summary rule (both halves agree) is applied, and the pooled report is written (synthetic runs: no verl, no
model)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from verl_focal.lab.demo.arms import CONTROL_FAMILIES, METHOD_FAMILIES, MIXTURE_FAMILY, arms_by_name
from verl_focal.lab.demo.stats import run_claims

#: a small controls design: GRPO N=8, the lower lr (a control), F-GRPO (a method) and the output mixture
ARMS = arms_by_name(["GRPO N=8"]) + CONTROL_FAMILIES[0].arms + METHOD_FAMILIES[0].arms + MIXTURE_FAMILY.arms
KS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def _eval(p1, p256, seed_rng):
    curve = {k: p1 + (p256 - p1) * np.log2(k) / 8 for k in KS}
    return {"pass_at_k": curve, "auc_at_k": p256 - 0.05, "p_correct_mean": p1,
            "unfamiliar_pass_at_k": {1: p1 / 2, 256: p256 - 0.1}, "rare_retained": 0.4,
            "delta_nll_rare": float(seed_rng.normal(0.3, 0.05)), "unsolved_frac": 0.05,
            "strategy_mass": {"add": p1 * 0.6, "sub": p1 * 0.3, "mul": p1 * 0.1},
            "groups_n8": {"ge2_correct": 0.9, "multi_given_ge2": 0.7}}


def _results(seeds, mode="default", steps=60):
    """One run of the design on ``seeds``; every seed's values follow from the seed alone, so a run over more seeds
    holds the same per-seed numbers.  Controls lose pass@256 gains along y = -0.4 x, F-GRPO sits on y = -0.7 x, the
    SFT policy at (-0.1, +0.05), the mixture on its exact λ line for pass@1."""
    from verl_focal.lab.demo.experiment import preset

    cfg = dataclasses.asdict(dataclasses.replace(preset(mode), seeds=tuple(seeds), rl_steps=steps))
    cfg["arms"] = [a.as_json() for a in ARMS]
    runs, refs, bases = [], [], {}
    for s in seeds:
        rng = np.random.default_rng(1000 + s)
        g1, g256 = 0.47 + rng.normal(0, 0.02), 0.87 + rng.normal(0, 0.02)
        bases[s] = _eval(g1 - 0.1, g256 + 0.05, rng)
        for i, a in enumerate(ARMS):
            if not a.trained:
                lam = a.mixture
                refs.append({"arm": a.name, "estimator": a.estimator, "lambda": lam, "seed": s,
                             "eval": _eval(g1 - 0.1 * (1 - lam), g256 + 0.05 * (1 - lam) ** 0.5, rng)})
                continue
            slope = -0.4 if a.actor else -0.7
            dx = 0.0 if a.name == "GRPO N=8" else -0.015 * (i % 4 + 1) + rng.normal(0, 0.003)
            hist = [{"step": t, "train_acc": 0.4 + 0.01 * t, "loss": 0.1, "grad_norm": 0.5, "entropy": 0.4,
                     "zero_adv_group_frac": 0.3, "adv_abs_mean": 0.4, "groups_ge2_correct": 3,
                     "groups_multi_strategy": 2} for t in range(2)]
            runs.append({"arm": a.name, "estimator": a.estimator, "n": 8, "settings": dict(a.settings), "seed": s,
                         "eval": {**_eval(g1 + dx, g256 + slope * dx, rng), "entropy_final": 0.4,
                                  "multi_strategy_share": 0.6}, "history": hist})
    claims, group_size = run_claims(runs, bases, cfg["arms"], [a.as_json() for a in ARMS if a.trained])
    return {"config": cfg, "problems": {"rl": 256, "familiar": 128, "unfamiliar": 128}, "base": {
        "eval": bases[seeds[0]], "per_seed": bases}, "runs": runs, "references": refs,
        "seeds_completed": list(seeds), "seeds_not_started": [], "interrupted": False, "seeds_not_finished": [],
        "skipped_arms": [], "claims": [c.as_json() for c in claims], "group_size": group_size, "jobs": 2,
        "seconds": {"total": 10.0, "cpu": 18.0, "seed_cpu": 17.0, "sft_cpu": 5.0, "rl_cpu": 12.0}}


def _json(res):
    return json.loads(json.dumps(res))  # as read back from results.json (string keys)


def test_pooled_analysis_is_one_analysis_over_the_concatenated_seeds():
    from verl_focal.lab.demo.frontier_report import frontier_results
    from verl_focal.lab.demo.pool import pool_results

    a, b = _json(_results([10, 11, 12])), _json(_results([20, 21, 22, 23]))
    pooled = pool_results([a, b])
    single = _json(_results([10, 11, 12, 20, 21, 22, 23]))
    assert pooled["seeds_completed"] == single["seeds_completed"] and pooled["config"]["seeds"] == single["config"][
        "seeds"]
    assert pooled["claims"] == single["claims"]  # every arm vs GRPO N=8 and vs its SFT policy, 7 seeds paired
    assert {c["n_seeds"] for c in pooled["claims"]} == {7}
    fp, fs = frontier_results(pooled, n_boot=300), frontier_results(single, n_boot=300)
    assert fp["seeds"] == fs["seeds"] and fp["points"] == fs["points"] and fp["claims"] == fs["claims"]
    # the equal-pass@1 claims: the methods vs the lower lr, the mixture's points vs the lower lr, the methods vs
    # the mixture
    fams = [(c["method"], c["family"]) for c in fp["claims"]]
    assert fams == ([(m.name, "lower lr") for m in METHOD_FAMILIES[0].arms]
                    + [(m.name, "lower lr") for m in MIXTURE_FAMILY.arms]
                    + [(m.name, "output mixture") for m in METHOD_FAMILIES[0].arms])
    assert fp["references"] == [a.name for a in MIXTURE_FAMILY.arms]
    # the pooled base mean is over all seven seeds
    want = np.mean([single["base"]["per_seed"][str(s)]["pass_at_k"]["1"] for s in single["seeds_completed"]])
    assert pooled["base"]["eval"]["pass_at_k"]["1"] == pytest.approx(want)
    assert pooled["pooled_from"] == [{"seeds": [10, 11, 12]}, {"seeds": [20, 21, 22, 23]}]


def test_pooling_keeps_only_the_arms_every_run_holds():
    from verl_focal.lab.demo.pool import common_arms, pool_results

    a, b = _json(_results([1, 2])), _json(_results([3, 4]))
    dropped = METHOD_FAMILIES[0].arms[2].name
    b["runs"] = [r for r in b["runs"] if r["arm"] != dropped]
    assert dropped not in common_arms([a, b]) and "GRPO N=8" in common_arms([a, b])
    pooled = pool_results([a, b])
    assert dropped not in {r["arm"] for r in pooled["runs"]} | {a["name"] for a in pooled["config"]["arms"]}


def test_runs_of_another_design_or_with_shared_seeds_are_refused():
    from verl_focal.lab.demo.pool import halves, runs_refusal

    a, b, c = _results([1, 2]), _results([3, 4]), _results([5, 6], steps=30)
    assert runs_refusal([a, b], ["A", "B"]) is None
    msg = runs_refusal([a, b, c], ["A", "B", "C"])
    assert msg.startswith("--replicate: run 1 (A) and run 3 (C) have different designs") and "rl_steps: 60 vs 30" in msg
    assert runs_refusal([a, _results([4, 5])], ["A", "B"]) is None
    msg = runs_refusal([a, b, _results([4, 7])], ["A", "B", "C"])
    assert msg == ("--replicate: run 2 (B) and run 3 (C) share seeds [4]; runs that replicate or pool need disjoint "
                   "seed sets (--seeds)")
    assert [len(h) for h in halves([a, b, c])] == [1, 2] and [len(h) for h in halves([a, b, c, a])] == [2, 2]


def _write(tmp_path, name, res):
    d = tmp_path / name
    d.mkdir()
    (d / "results.json").write_text(json.dumps(res))
    return str(d)


def test_replicate_of_four_runs_prints_the_pooled_verdicts_and_writes_the_pooled_report(tmp_path, capsys):
    from verl_focal.cli import main

    dirs = [_write(tmp_path, f"r{i}", _results([10 * i + j for j in range(3)])) for i in range(4)]
    out = tmp_path / "pooled"
    assert main(["demo", "--replicate", *dirs, "--out-dir", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Pooled claims (12 seeds" in text and "| arm | baseline | metric | pooled | halves | runs | status |" in text
    assert "Equal pass@1, all runs' seeds pooled:" in text
    assert "Pooled over 12 seeds (4 runs; halves of 6 + 6 seeds)" in text
    assert "- Pooled power (" in text and "at 12 seeds." in text
    assert "- Methods better than the output mixture at equal pass@1 (12 seeds, holds):" in text
    assert "| output mixture λ=0.5 (reference) |" in text
    res = json.loads((out / "results.json").read_text())
    assert len(res["pooled_from"]) == 4 and res["seeds_completed"] == [j + 10 * i for i in range(4) for j in range(3)]
    assert res["frontier"]["seeds"] == sorted(res["seeds_completed"]) and (out / "frontier.png").stat().st_size > 0
    md = (out / "report.md").read_text()
    assert "Pooled from run 1 (seeds 0..2, 3); run 2 (seeds 10..12, 3)" in md
    assert "references (computed, not trained): output mixture λ=0.975, output mixture λ=0.95" in md
    # different designs and shared seeds: one line, exit 2, nothing printed on stdout
    other = _write(tmp_path, "other", _results([90, 91], steps=8))
    assert main(["demo", "--replicate", dirs[0], dirs[1], other]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and len(cap.err.strip().splitlines()) == 1 and "rl_steps: 60 vs 8" in cap.err
    assert main(["demo", "--replicate", dirs[0], dirs[1], dirs[0]]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and "run 1 (" in cap.err and "and run 3 (" in cap.err and "share seeds [0, 1, 2]" in cap.err
    assert main(["demo", "--replicate", dirs[0]]) == 2
    assert "needs two or more runs, got 1" in capsys.readouterr().err


def test_a_pooled_verdict_holds_only_when_both_halves_give_it():
    from verl_focal.lab.demo.report import pooled_claims_markdown

    def claim(v, est=0.01):
        lo, hi = (0.005, 0.02) if v == "better" else (-0.02, -0.005) if v == "worse" else (-0.01, 0.01)
        return {"arm": "A", "baseline": "GRPO N=8", "metric": "pass@256", "estimate": est, "ci_low": lo,
                "ci_high": hi, "n_seeds": 48, "verdict": v}

    rows = pooled_claims_markdown([claim("better")], [[claim("better")], [claim("better")]],
                                  [[claim("better")], [claim("not detected")], [claim("better")], [claim("better")]])
    assert rows[2] == ("| A | GRPO N=8 | pass@256 | +0.010 [+0.005, +0.020] better | b \\| b | b nd b b | **holds** |")
    rows = pooled_claims_markdown([claim("better")], [[claim("better")], [claim("not detected")]],
                                  [[claim("better")]] * 4)
    assert rows[2].endswith("| b \\| nd | b b b b | not established |")
    rows = pooled_claims_markdown([claim("not detected")], [[claim("not detected")], [claim("not detected")]],
                                  [[claim("worse")]] * 4)
    assert rows[2].endswith("| nd \\| nd | w w w w | **holds** |")  # the runs are for reading, not for the rule
