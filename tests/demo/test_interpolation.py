"""The weight interpolation θ_λ = λ·θ_GRPO N=8 + (1 − λ)·θ_SFT (a reference of `--arms controls`): the formula on a
state dict against a hand computation, its arms, and on a real seed that its evaluation is GRPO N=8's trained policy
at λ → 1 and the seed's SFT policy at λ → 0 (an interpolation of any other pair of models fails both)."""

from __future__ import annotations

import pytest
import torch

from verl_focal.lab.demo.arms import (
    CONTROLS_SET,
    INTERPOLATION_ESTIMATOR,
    INTERPOLATION_FAMILY,
    INTERPOLATION_LAMBDAS,
    MIXTURE_LAMBDAS,
    REFERENCE_FAMILIES,
    Arm,
    arms_by_name,
)
from verl_focal.lab.demo.experiment import interpolate_state


def test_the_state_formula_by_hand():
    rl = {"w": torch.tensor([1.0, -2.0, 4.0]), "steps": torch.tensor([7])}
    sft = {"w": torch.tensor([3.0, 2.0, 0.0]), "steps": torch.tensor([7])}
    out = interpolate_state(0.25, rl, sft)
    assert out["w"].tolist() == [0.25 * 1 + 0.75 * 3, 0.25 * -2 + 0.75 * 2, 0.25 * 4 + 0.75 * 0]
    assert out["steps"].tolist() == [7] and out["steps"] is not rl["steps"]
    with pytest.raises(ValueError, match="strictly between 0"):
        interpolate_state(1.0, rl, sft)


def test_the_interpolation_arms_are_references_of_the_controls_set():
    fam = INTERPOLATION_FAMILY
    assert INTERPOLATION_LAMBDAS == (0.9, 0.8, 0.7, 0.65, 0.6, 0.55, 0.5, 0.45, 0.4, 0.3, 0.2, 0.1)
    assert len(INTERPOLATION_LAMBDAS) == len(MIXTURE_LAMBDAS) and fam in REFERENCE_FAMILIES
    assert fam.reference and not fam.control and fam.ends_at_sft and fam.knob == "λ"
    assert [(a.name, a.estimator, a.interpolation, a.trained) for a in fam.arms] == [
        (f"weight interpolation λ={v:g}", INTERPOLATION_ESTIMATOR, v, False) for v in INTERPOLATION_LAMBDAS]
    assert [a.name for a in CONTROLS_SET][-12:] == [a.name for a in fam.arms]
    assert fam.arms[0].as_json()["interpolation"] == 0.9 and "interpolation" not in CONTROLS_SET[0].as_json()
    with pytest.raises(ValueError, match="0 < λ < 1"):
        Arm("w", INTERPOLATION_ESTIMATOR, 8, interpolation=0.0)
    with pytest.raises(ValueError, match="a weight interpolation has estimator"):
        Arm("w", "grpo", 8, interpolation=0.5)
    assert [a.name for a in arms_by_name(["weight interpolation λ=0.5"])] == ["weight interpolation λ=0.5"]


def test_a_real_seed_interpolates_grpo_and_its_sft_policy():
    import verl  # noqa: F401  a hard dependency: fail loudly if it is missing

    from verl_focal.lab.demo.experiment import DemoConfig, _run_seed
    from verl_focal.lab.demo.model import ModelSpec

    near = [Arm("near GRPO", INTERPOLATION_ESTIMATOR, 8, interpolation=1 - 1e-7),
            Arm("near SFT", INTERPOLATION_ESTIMATOR, 8, interpolation=1e-7),
            Arm("half", INTERPOLATION_ESTIMATOR, 8, interpolation=0.5)]
    arms = arms_by_name(["GRPO N=8"])
    cfg = DemoConfig(model=ModelSpec(hidden=32, layers=1, heads=2, intermediate=64), sft_examples=2000,
                     sft_steps=60, sft_batch=64, rl_steps=4, rare_rollouts=64, arms=arms + tuple(near))
    out = _run_seed({"cfg": cfg, "arms": list(arms), "mixtures": near, "seed": 3})
    grpo, base = out["runs"][0]["eval"], out["base"]
    refs = {r["arm"]: r for r in out["references"]}
    assert [r["estimator"] for r in out["references"]] == [INTERPOLATION_ESTIMATOR] * 3 and out["references_cpu_s"] > 0
    for k in (1, 16, 256):
        gap = abs(grpo["pass_at_k"][k] - base["pass_at_k"][k])  # RL moved the policy: the test can tell them apart
        assert gap > 2e-5, k
        assert refs["near GRPO"]["eval"]["pass_at_k"][k] == pytest.approx(grpo["pass_at_k"][k], abs=gap / 20)
        assert refs["near SFT"]["eval"]["pass_at_k"][k] == pytest.approx(base["pass_at_k"][k], abs=gap / 20)
    assert refs["near SFT"]["eval"]["delta_nll_rare"] == pytest.approx(0.0, abs=1e-4)
    half = refs["half"]["eval"]["pass_at_k"][1]
    assert half != pytest.approx(grpo["pass_at_k"][1], abs=1e-6) and half != pytest.approx(base["pass_at_k"][1],
                                                                                             abs=1e-6)
    assert "history" not in refs["half"] and "entropy_final" not in refs["half"]["eval"]
