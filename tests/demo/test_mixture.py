"""The output mixture λ·π_GRPO + (1 − λ)·π_SFT: its metrics against a hand computation from the two policies'
per-answer probabilities, its arms, and its points in a (small) real seed: pass@1 linear in λ."""

import math

import numpy as np
import pytest

from verl_focal.lab.demo.arms import (
    CONTROLS_SET,
    MIXTURE_ESTIMATOR,
    MIXTURE_FAMILY,
    MIXTURE_LAMBDAS,
    REFERENCE_ARM,
    Arm,
    arms_by_name,
)
from verl_focal.lab.demo.metrics import RareSet, correct_set
from verl_focal.lab.demo.task import Problem

KS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def _shared(problems, base_logp, rare_rows):
    """A SeedEval without a model: the correct answers of ``problems``, the SFT policy's log-probs, and a rare set
    made of the given correct-answer rows."""
    from verl_focal.lab.demo.experiment import SeedEval

    cs = correct_set(problems)
    rows = np.array(rare_rows, dtype=np.int64)
    rare = RareSet([(cs.problems[cs.owner[j]], cs.answers[j]) for j in rows], -base_logp[rows] / 4, len(rows), rows)
    unfamiliar = np.array([i % 2 == 1 for i in range(len(problems))])  # every other problem is unfamiliar
    return SeedEval(cs, (None, None), unfamiliar, base_logp, rare, None)


def _policy(cs, rng, scale):
    """log π(a|x) for every correct answer: random probabilities whose sum per problem stays below 1."""
    p = rng.uniform(0.0, 1.0, len(cs.answers)) ** scale
    for i in range(len(cs.problems)):
        rows = cs.owner == i
        p[rows] *= rng.uniform(0.05, 0.95) / p[rows].sum()
    return np.log(p)


def test_mixture_metrics_are_the_hand_computed_ones():
    from verl_focal.lab.demo.experiment import DemoConfig, mixture_eval

    problems = [Problem(7, 3), Problem(0, 0), Problem(5, 2), Problem(12, 4), Problem(9, 9)]
    cs = correct_set(problems)
    rng = np.random.default_rng(0)
    lp_g, lp_s = _policy(cs, rng, 3.0), _policy(cs, rng, 0.5)
    rare_rows = [0, 3, 3, 7, len(cs.answers) - 1]
    shared = _shared(problems, lp_s, rare_rows)
    lam = 0.3
    ev = mixture_eval(lam, lp_g, shared, DemoConfig())
    # by hand: per problem, the probability of a correct answer under each policy, then the mixture's
    p_g = [sum(math.exp(lp_g[j]) for j in range(len(cs.answers)) if cs.owner[j] == i) for i in range(len(problems))]
    p_s = [sum(math.exp(lp_s[j]) for j in range(len(cs.answers)) if cs.owner[j] == i) for i in range(len(problems))]
    p_mix = [lam * a + (1 - lam) * b for a, b in zip(p_g, p_s)]

    def pass_at(k, ps):
        total = 0.0
        for p in ps:
            miss = 1.0
            for _ in range(k):  # (1 − p)^k by repeated multiplication
                miss *= 1.0 - p
            total += 1.0 - miss
        return total / len(ps)

    for k in KS:
        assert ev["pass_at_k"][k] == pytest.approx(pass_at(k, p_mix), rel=1e-12, abs=1e-14)
    curve = [pass_at(j, p_mix) for j in range(1, 257)]
    auc = sum((curve[j] + curve[j + 1]) / 2 for j in range(255)) / 255
    assert ev["auc_at_k"] == pytest.approx(auc, rel=1e-12)
    unf = [p for i, p in enumerate(p_mix) if i % 2 == 1]
    assert ev["unfamiliar_pass_at_k"][1] == pytest.approx(sum(unf) / len(unf), rel=1e-12)
    assert ev["unfamiliar_pass_at_k"][256] == pytest.approx(pass_at(256, unf), rel=1e-12)
    # pass@1 is linear in λ, pass@k concave: above the chord between the two policies
    assert ev["pass_at_k"][1] == pytest.approx(lam * pass_at(1, p_g) + (1 - lam) * pass_at(1, p_s), rel=1e-12)
    assert ev["pass_at_k"][4] > lam * pass_at(4, p_g) + (1 - lam) * pass_at(4, p_s) + 1e-3
    # ΔNLL_rare: −log(λ π_G(a) + (1 − λ) π_S(a))/4 + log π_S(a)/4 over the rare answers, with their multiplicity
    d = [(-math.log(lam * math.exp(lp_g[j]) + (1 - lam) * math.exp(lp_s[j])) + lp_s[j]) / 4 for j in rare_rows]
    assert ev["delta_nll_rare"] == pytest.approx(sum(d) / len(d), rel=1e-12)
    # rare retained: M_ret = 1 − Σ max(0, π_S(a) − π_λ(a)) / Σ π_S(a) over the answers off each problem's dominant
    # strategy under the SFT policy
    num = den = 0.0
    for i in range(len(problems)):
        rows = [j for j in range(len(cs.answers)) if cs.owner[j] == i]
        by_strategy = {}
        for j in rows:
            by_strategy[cs.strategy[j]] = by_strategy.get(cs.strategy[j], 0.0) + math.exp(lp_s[j])
        dominant = max(sorted(by_strategy), key=lambda s: by_strategy[s])
        for j in rows:
            if cs.strategy[j] != dominant:
                pi_s, pi_mix = math.exp(lp_s[j]), lam * math.exp(lp_g[j]) + (1 - lam) * math.exp(lp_s[j])
                num += max(0.0, pi_s - pi_mix)
                den += pi_s
    assert ev["rare_retained"] == pytest.approx(1 - num / den, rel=1e-12)
    mul = [sum(lam * math.exp(lp_g[j]) + (1 - lam) * math.exp(lp_s[j]) for j in range(len(cs.answers))
               if cs.owner[j] == i and cs.strategy[j] == 2) for i in range(len(problems))]
    assert ev["strategy_mass"]["mul"] == pytest.approx(sum(mul) / len(mul), rel=1e-12)
    assert "entropy_final" not in ev and "train_acc_final" not in ev  # nothing was trained
    with pytest.raises(ValueError, match="must lie strictly between 0"):
        mixture_eval(1.0, lp_g, shared, DemoConfig())


def test_the_mixture_arms_are_references_of_the_controls_set():
    assert MIXTURE_LAMBDAS == (0.975, 0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1)
    fam = MIXTURE_FAMILY
    assert fam.reference and not fam.control and fam.ends_at_sft and fam.labels == tuple(f"{v:g}" for v in
                                                                                         MIXTURE_LAMBDAS)
    assert [(a.name, a.estimator, a.mixture, a.trained) for a in fam.arms] == [
        (f"output mixture λ={v:g}", MIXTURE_ESTIMATOR, v, False) for v in MIXTURE_LAMBDAS]
    assert [a.name for a in CONTROLS_SET][30:42] == [a.name for a in fam.arms]
    assert fam.arms[1].as_json()["mixture"] == 0.95 and "mixture" not in arms_by_name([REFERENCE_ARM])[0].as_json()
    with pytest.raises(ValueError, match="0 < λ < 1"):
        Arm("m", MIXTURE_ESTIMATOR, 8, mixture=1.0)
    with pytest.raises(ValueError, match="an output mixture has estimator"):
        Arm("m", "grpo", 8, mixture=0.5)


def test_a_run_with_the_mixture_needs_grpo_n8():
    from verl_focal.lab.demo.experiment import DemoConfig

    with pytest.raises(ValueError, match="made from GRPO N=8's policy and the SFT policy; add 'GRPO N=8'"):
        DemoConfig(arms=arms_by_name(["F-GRPO N=8 γ=1", "output mixture λ=0.5"])).validate()
    with pytest.raises(ValueError, match="no arms to run"):
        DemoConfig(arms=arms_by_name(["output mixture λ=0.5"])).validate()


def test_mixture_points_of_a_real_seed_are_linear_in_pass1():
    """A small seed (short SFT, two RL steps): each point's pass@1 is λ·GRPO's + (1 − λ)·the SFT policy's (the two
    policies' evaluations, computed independently of the mixture's), and no training record is made for it."""
    import verl  # noqa: F401  a hard dependency: fail loudly if it is missing

    from verl_focal.lab.demo.experiment import DemoConfig, _run_seed
    from verl_focal.lab.demo.model import ModelSpec

    arms = arms_by_name(["GRPO N=8", "output mixture λ=0.8", "output mixture λ=0.2"])
    cfg = DemoConfig(model=ModelSpec(hidden=32, layers=1, heads=2, intermediate=64), sft_examples=2000,
                     sft_steps=60, sft_batch=64, rl_steps=2, rare_rollouts=64, arms=arms)
    out = _run_seed({"cfg": cfg, "arms": [a for a in arms if a.trained],
                     "mixtures": [a for a in arms if not a.trained], "seed": 3})
    assert [r["arm"] for r in out["runs"]] == ["GRPO N=8"]
    grpo, base = out["runs"][0]["eval"], out["base"]
    assert [r["arm"] for r in out["references"]] == ["output mixture λ=0.8", "output mixture λ=0.2"]
    for r in out["references"]:
        lam, ev = r["lambda"], r["eval"]
        assert r["seed"] == 3 and r["estimator"] == MIXTURE_ESTIMATOR and "history" not in r
        want = lam * grpo["pass_at_k"][1] + (1 - lam) * base["pass_at_k"][1]
        assert ev["pass_at_k"][1] == pytest.approx(want, rel=1e-9)
        assert ev["p_correct_mean"] == pytest.approx(want, rel=1e-9)
        assert math.isfinite(ev["delta_nll_rare"]) and "rare_retained" in ev and "groups_n8" in ev
