"""The family arms (Pass@k Training, unlikeliness reward) in the demo: arm sets, second baseline, and the
rollout policy's log-probs reaching ``unlikely_grpo`` through the demo's context (CPU, real verl dispatch)."""

import copy

import numpy as np
import pytest
import verl  # noqa: F401  a hard dependency: fail loudly if it is missing

from verl_focal.lab.demo.arms import (
    ARM_SETS,
    DEFAULT_ARMS,
    FAMILY_ARMS,
    FOCAL_REFERENCE_ARM,
    LARGE_N_ARM,
    REFERENCE_ARM,
    arms_by_name,
)
from verl_focal.lab.demo.stats import build_claims


def test_family_set_is_reference_focal_and_the_two_estimators():
    names = [a.name for a in arms_by_name(["family"])]
    assert names == [REFERENCE_ARM, FOCAL_REFERENCE_ARM] + [a.name for a in FAMILY_ARMS]
    assert [a.estimator for a in FAMILY_ARMS] == ["passk_grpo", "unlikely_grpo", "unlikely_grpo"]
    assert all(a.n == 8 and a.compare_with == (FOCAL_REFERENCE_ARM,) for a in FAMILY_ARMS)
    assert dict(FAMILY_ARMS[0].settings) == {"passk.k": 4}
    # both readings of "likelihood": the paper's summed sequence log-prob and the authors' per-token mean
    assert dict(FAMILY_ARMS[1].settings) == {"unlikely.beta": 0.25, "unlikely.likelihood": "sum"}
    assert dict(FAMILY_ARMS[2].settings) == {"unlikely.beta": 0.25, "unlikely.likelihood": "mean"}
    assert not {a.name for a in FAMILY_ARMS} & {a.name for a in DEFAULT_ARMS}  # opt-in: default run's time unchanged
    assert {a.name for a in FAMILY_ARMS} <= {a.name for a in ARM_SETS["all"]}
    # a set plus one of its arms: no duplicate
    assert [a.name for a in arms_by_name(["family", REFERENCE_ARM])] == names


def test_unknown_arm_lists_the_sets():
    with pytest.raises(ValueError, match=r"did you mean 'family'\?.*'all', 'controls', 'default', 'family', 'n-sweep'"):
        arms_by_name(["famly"])


def test_n_sweep_set_is_grpo_at_five_group_sizes_and_focal_at_8():
    arms = arms_by_name(["n-sweep"])
    grpo = [a for a in arms if a.estimator == "grpo"]
    assert [a.n for a in grpo] == [2, 4, 8, 16, 32] and all(not a.settings for a in grpo)
    (focal,) = [a for a in arms if a.estimator != "grpo"]
    assert (focal.name, focal.estimator, focal.n, dict(focal.settings)) == (
        FOCAL_REFERENCE_ARM, "f_grpo", 8, {"focal.gamma": 1.0})
    assert LARGE_N_ARM in focal.compare_with and LARGE_N_ARM == "GRPO N=32"
    # the same arm in two sets is one arm: F-GRPO γ=1 of the default set carries the n-sweep comparison too
    assert [a for a in arms_by_name(["default", "n-sweep"]) if a.name == FOCAL_REFERENCE_ARM] == [focal]


def test_claims_against_a_second_baseline_pair_by_seed():
    metrics = ("pass@1", "pass@16", "pass@256", "AUC@256", "ΔNLL_rare")

    def arm(vals):
        return {m: dict(enumerate(vals)) for m in metrics}

    per_seed = {"G": arm([0.1, 0.2, 0.3]), "F": arm([0.2, 0.3, 0.4]), "P": arm([0.25, 0.35, 0.45])}
    base = {m: 0.0 for m in metrics}
    claims = build_claims(per_seed, base, reference="G", also_vs={"P": ("F", "missing", "G")})
    vs_f = [c for c in claims if c.arm == "P" and c.baseline == "F"]
    assert len(vs_f) == 5 and all(c.estimate == pytest.approx(0.05) and c.n_seeds == 3 for c in vs_f)
    assert {c.metric: c.verdict for c in vs_f}["ΔNLL_rare"] == "worse"  # lower is better there
    # the reference is not repeated, an absent baseline gives no claim, F itself is only compared with G and base
    assert sorted((c.arm, c.baseline) for c in claims if c.metric == "pass@1") == sorted(
        [("G", "base (SFT)"), ("F", "base (SFT)"), ("F", "G"), ("P", "base (SFT)"), ("P", "G"), ("P", "F")]
    )


def test_unlikely_arm_gets_the_pre_update_sequence_log_probs(monkeypatch):
    """The demo hands ``unlikely_grpo`` Σ_t log π_old(y_t) of each sampled response, computed independently here
    by teacher forcing on a copy of the pre-update policy; the estimator runs through verl's dispatch."""
    import verl_focal.lab.demo.rl as rl
    from verl_focal.estimators.context import current_context
    from verl_focal.estimators.old_log_probs import OLD_LOG_PROB_SUM, OLD_LOG_PROB_TOKENS
    from verl_focal.lab.demo.model import PROMPT_LEN, ModelSpec, build_model, build_tokenizer, sequence_logprob
    from verl_focal.lab.demo.task import split_problems

    tok = build_tokenizer()
    model = build_model(tok, ModelSpec(hidden=32, layers=1, heads=2, intermediate=64), seed=3)
    before = copy.deepcopy(model)
    seen = {}
    real_rollout, real_adv = rl.make_rollout, rl.compute_advantage

    def rollout(*a, **k):
        r = real_rollout(*a, **k)
        gen = r.generate_sequences

        def generate(batch):
            out = gen(batch)
            seen["ids"], seen["attn"] = out.batch["input_ids"].clone(), out.batch["attention_mask"].clone()
            return out

        r.generate_sequences = generate
        return r

    def adv(data, **k):
        ctx = current_context()
        seen["sum"], seen["tokens"] = ctx.extras[OLD_LOG_PROB_SUM].copy(), ctx.extras[OLD_LOG_PROB_TOKENS].copy()
        out = real_adv(data, **k)
        seen["metrics"] = dict(ctx.metrics)
        return out

    monkeypatch.setattr(rl, "make_rollout", rollout)
    monkeypatch.setattr(rl, "compute_advantage", adv)
    train, _ = split_problems(0)
    arm = FAMILY_ARMS[1]  # the summed reading
    hist = rl.train_rl(model, tok, train, arm, rl.RLConfig(steps=1, prompts_per_step=3), seed=0)
    mask = seen["attn"].clone()
    mask[:, :PROMPT_LEN] = 0
    expected = sequence_logprob(before, seen["ids"], mask).double().numpy()
    assert seen["sum"].shape == (3 * arm.n,)
    np.testing.assert_allclose(seen["sum"], expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(seen["tokens"], mask[:, PROMPT_LEN:].sum(-1).double().numpy())
    assert seen["metrics"]["unlikely/beta"] == 0.25 and hist[0]["unlikely/beta"] == 0.25


def test_grpo_arm_gets_no_log_probs(monkeypatch):
    import verl_focal.lab.demo.rl as rl
    from verl_focal.estimators.context import current_context
    from verl_focal.lab.demo.model import ModelSpec, build_model, build_tokenizer
    from verl_focal.lab.demo.task import split_problems

    seen = []
    real_adv = rl.compute_advantage
    monkeypatch.setattr(rl, "compute_advantage", lambda data, **k: (seen.append(dict(current_context().extras)),
                                                                    real_adv(data, **k))[1])
    tok = build_tokenizer()
    model = build_model(tok, ModelSpec(hidden=32, layers=1, heads=2, intermediate=64), seed=3)
    rl.train_rl(model, tok, split_problems(0)[0], arms_by_name(["F-GRPO N=8 γ=1"])[0],
                rl.RLConfig(steps=1, prompts_per_step=2), seed=0)
    assert seen == [{}]


def test_report_has_a_table_per_extra_baseline(tmp_path):
    """An arm with ``compare_with`` gets its own claims table in report.md, after the GRPO N=8 one."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_report import _results

    from verl_focal.lab.demo.report import write_report

    res = _results()
    per = {}
    for r in res["runs"]:
        per.setdefault(r["arm"], {}).setdefault("pass@1", {})[r["seed"]] = r["eval"]["pass_at_k"][1]
    # the F-GRPO run also compared with GRPO N=8 as an extra baseline gives no duplicate; a third arm vs F-GRPO does
    extra = [c for c in build_claims(
        {**{a: {m: per[a]["pass@1"] for m in ("pass@1", "pass@16", "pass@256", "AUC@256", "ΔNLL_rare")}
            for a in per}}, dict.fromkeys(("pass@1", "pass@16", "pass@256", "AUC@256", "ΔNLL_rare"), 0.0),
        reference="GRPO N=8", also_vs={"GRPO N=8": ("F-GRPO",)}) if c.baseline == "F-GRPO"]
    res["claims"] += [c.as_json() for c in extra]
    write_report(res, str(tmp_path))
    md = (tmp_path / "report.md").read_text()
    order = [md.index(h) for h in ("Against GRPO N=8:", "Against F-GRPO:", "Against the base (SFT) policy of the same")]
    assert order == sorted(order)
    # GRPO N=8 − F-GRPO on pass@1 is exactly −0.05 in every seed
    assert "| GRPO N=8 | 3 | -0.050 [-0.050, -0.050] **worse** |" in md
