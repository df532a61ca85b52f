"""The demo's paired statistics against independently computed values (no torch, no verl)."""

import math
import statistics

import pytest

from verl_focal.lab.demo.stats import Claim, build_claims, paired_claim, replicate
from verl_focal.lab.stats.verdict import t_interval, verdict

# Student-t 0.975 quantiles from a printed table (df = 3, 9), not from scipy
T975 = {3: 3.182446305, 9: 2.262157163}


def test_t_interval_matches_hand_formula():
    d = [0.1, 0.3, 0.2, 0.4]
    half = T975[3] * statistics.stdev(d) / math.sqrt(4)
    mean, lo, hi = t_interval(d)
    assert mean == pytest.approx(0.25, abs=1e-12)
    assert (lo, hi) == (pytest.approx(0.25 - half, abs=1e-8), pytest.approx(0.25 + half, abs=1e-8))
    assert half == pytest.approx(0.2054270, abs=1e-6)  # 3.1824463 * 0.1290994 / 2


def test_t_interval_ten_seeds_and_single_seed():
    d = [0.03, -0.01, 0.02, 0.05, 0.00, 0.04, 0.01, 0.02, -0.02, 0.06]
    mean, lo, hi = t_interval(d)
    half = T975[9] * statistics.stdev(d) / math.sqrt(10)
    assert mean == pytest.approx(statistics.mean(d)) and hi - mean == pytest.approx(half, abs=1e-9)
    m1, l1, h1 = t_interval([0.5])
    assert m1 == 0.5 and math.isnan(l1) and math.isnan(h1)
    with pytest.raises(ValueError, match="non-finite"):
        t_interval([0.1, float("nan")])


def test_verdict_direction():
    assert verdict(0.01, 0.05, True) == "better" and verdict(0.01, 0.05, False) == "worse"
    assert verdict(-0.05, -0.01, True) == "worse" and verdict(-0.05, -0.01, False) == "better"
    assert verdict(-0.01, 0.02, True) == "not detected"
    assert verdict(float("nan"), float("nan"), True).startswith("not tested")


def test_paired_claim_pairs_by_seed_not_by_position():
    a = {0: 0.9, 1: 0.8, 2: 0.7}
    b = {2: 0.6, 0: 0.8, 1: 0.7}  # every paired difference is exactly +0.1
    c = paired_claim("F", "G", "pass@256", a, b)
    assert c.estimate == pytest.approx(0.1) and c.ci_high - c.ci_low == pytest.approx(0.0, abs=1e-12)
    assert c.n_seeds == 3 and c.verdict == "better"
    nll = paired_claim("F", "G", "ΔNLL_rare", a, b)  # lower is better for ΔNLL
    assert nll.verdict == "worse"
    with pytest.raises(ValueError, match=r"seeds differ \(\[3\]"):
        paired_claim("F", "G", "pass@1", {0: 1.0, 3: 1.0}, {0: 1.0})


def test_build_claims_covers_base_and_reference():
    per = {"G": {m: {0: 0.5, 1: 0.6} for m in ("pass@1", "pass@16", "pass@256", "AUC@256", "ΔNLL_rare")},
           "F": {m: {0: 0.7, 1: 0.9} for m in ("pass@1", "pass@16", "pass@256", "AUC@256", "ΔNLL_rare")}}
    base = {"pass@1": 0.5, "pass@16": 0.5, "pass@256": 0.5, "AUC@256": 0.5, "ΔNLL_rare": 0.0}
    claims = build_claims(per, base, reference="G")
    assert len(claims) == 5 + 5 + 5  # G vs base, F vs base, F vs G
    fg = next(c for c in claims if (c.arm, c.baseline, c.metric) == ("F", "G", "pass@256"))
    assert fg.estimate == pytest.approx(0.25)  # diffs 0.2, 0.3
    half = 12.70620474 * statistics.stdev([0.2, 0.3]) / math.sqrt(2)  # t_{1, 0.975} from a table
    assert fg.ci_low == pytest.approx(0.25 - half, abs=1e-6)
    assert {c.baseline for c in claims if c.arm == "G"} == {"base (SFT)"}


def test_replicate_marks_disagreement_not_established():
    c1 = [
        Claim("F", "G", "pass@256", 0.02, 0.01, 0.03, 10, "better"),
        Claim("F", "G", "pass@1", 0, -1, 1, 10, "not detected"),
    ]
    c2 = [Claim("F", "G", "pass@256", 0.01, -0.01, 0.03, 10, "not detected").as_json(),
          Claim("F", "G", "pass@1", 0, -1, 1, 10, "not detected")]
    rows = {r["metric"]: r["status"] for r in replicate(c1, c2)}
    assert rows == {"pass@256": "not established", "pass@1": "holds"}
    assert Claim("a", "b", "pass@1", 0.1, float("nan"), float("nan"), 1, "x").as_json()["ci_low"] is None
