"""Equal-pass@1 comparisons (verl_focal.demo.frontier) against values computed independently here, and the
controls' report section and figure on a synthetic run."""

import json
import math
import os

import numpy as np
import pytest
from scipy import stats as st

from verl_focal.demo.arms import CONTROL_FAMILIES, CONTROLS_SET, METHOD_FAMILIES, REFERENCE_ARM
from verl_focal.demo.frontier import OUTSIDE, frontier_claim, frontier_claims, interpolate, replicate_frontier


def test_interpolate_is_the_polyline_through_the_points_sorted_by_x_and_never_extrapolates():
    xs, ys = [0.0, -0.10, -0.04], [0.0, 0.05, 0.03]  # unsorted on purpose
    assert interpolate(xs, ys, -0.04) == pytest.approx(0.03)
    assert interpolate(xs, ys, -0.07) == pytest.approx(0.04)  # halfway between (-0.10, 0.05) and (-0.04, 0.03)
    assert interpolate(xs, ys, -0.02) == pytest.approx(0.015)
    assert interpolate(xs, ys, 0.0) == pytest.approx(0.0)
    assert interpolate(xs, ys, 0.001) is None and interpolate(xs, ys, -0.1001) is None


def _seeded(n, loc, sd, seed):
    return np.random.default_rng(seed).normal(loc, sd, n)


def test_a_fixed_straight_frontier_gives_the_student_t_interval_of_y_minus_f_x():
    """Family points identical on every seed: the frontier is the fixed line y = −0.5 x, so D = mean_s(y_s + 0.5 x_s)
    and the bootstrap interval is that mean's Student-t interval, up to resampling noise."""
    n = 12
    mx, my = _seeded(n, -0.03, 0.01, 1), _seeded(n, 0.03, 0.01, 2)
    fx, fy = [np.full(n, -0.10)], [np.full(n, 0.05)]
    c = frontier_claim("M", "F", mx, my, fx, fy, n_boot=20000, seed=3)
    z = my + 0.5 * mx
    half = st.t.ppf(0.975, n - 1) * z.std(ddof=1) / math.sqrt(n)
    assert c.estimate == pytest.approx(z.mean(), abs=1e-12)
    assert c.frontier_y == pytest.approx(-0.5 * mx.mean(), abs=1e-12)
    assert (c.ci_high - c.ci_low) / 2 == pytest.approx(half, rel=0.03)
    assert c.verdict == "better" and c.outside_share == 0.0 and c.grid == pytest.approx((-0.10, 0.0)) and c.n_seeds == n


def test_the_interval_carries_the_frontiers_noise():
    """The same method against a frontier with the same means but noisy per-seed points: a wider interval."""
    n = 12
    mx, my = _seeded(n, -0.03, 0.01, 1), _seeded(n, 0.03, 0.01, 2)
    quiet = frontier_claim("M", "F", mx, my, [np.full(n, -0.10)], [np.full(n, 0.05)], seed=3)
    noise = _seeded(n, 0.0, 0.1, 4)  # the family's pass@256 scatters over seeds (its slope with it)
    noisy = frontier_claim("M", "F", mx, my, [np.full(n, -0.10)], [np.full(n, 0.05) + noise - noise.mean()], seed=3)
    assert noisy.estimate == pytest.approx(quiet.estimate)  # same means, same D
    assert noisy.ci_high - noisy.ci_low > 1.5 * (quiet.ci_high - quiet.ci_low)


@pytest.mark.parametrize("y, verdict", [(0.005, "worse"), (0.02, "not detected"), (0.04, "better")])
def test_verdicts_at_equal_pass1(y, verdict):
    # frontier through (0, 0) and (-0.1, 0.05): 0.02 at the method's pass@1 of -0.04
    n = 16
    mx = -0.04 + _seeded(n, 0, 0.002, 5)
    mx -= mx.mean() + 0.04
    my = y + _seeded(n, 0, 0.004, 6)
    my += y - my.mean()
    c = frontier_claim("M", "F", mx, my, [np.full(n, -0.10)], [np.full(n, 0.05)], seed=0)
    assert c.x == pytest.approx(-0.04) and c.estimate == pytest.approx(y - 0.02)
    assert c.verdict == verdict


def test_outside_the_grid_below_the_family_and_at_its_edge():
    n = 12
    fam_x, fam_y = [np.full(n, -0.05)], [np.full(n, 0.02)]
    below = frontier_claim("M", "F", np.full(n, -0.08), np.full(n, 0.05), fam_x, fam_y)
    assert (below.verdict, below.estimate, below.ci_low, below.frontier_y) == (OUTSIDE, None, None, None)
    # inside on the point estimate, but the seeds scatter across the edge in many resamples: still no interval
    edge = frontier_claim("M", "F", -0.049 + _seeded(n, 0, 0.01, 7) - _seeded(n, 0, 0.01, 7).mean(),
                          np.full(n, 0.05), fam_x, fam_y)
    assert edge.x == pytest.approx(-0.049) and edge.estimate is not None
    assert edge.outside_share > 0.025 and edge.verdict == OUTSIDE
    # above GRPO's pass@1 when every family point is below it
    above = frontier_claim("M", "F", np.full(n, 0.01), np.full(n, 0.05), fam_x, fam_y)
    assert above.verdict == OUTSIDE and above.grid == pytest.approx((-0.05, 0.0))


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="per-seed arrays differ in length"):
        frontier_claim("M", "F", [0.0, 0.1], [0.0, 0.1], [[0.0, 0.1, 0.2]], [[0.0, 0.1, 0.2]])
    with pytest.raises(ValueError, match="non-finite per-seed difference"):
        frontier_claim("M", "F", [0.0, float("nan")], [0.0, 0.1], [[0.0, 0.1]], [[0.0, 0.1]])


def test_frontier_claims_pair_by_seed_and_leave_out_an_incomplete_family():
    seeds = [3, 1, 2]

    def arm(p1, p256):
        return {"pass@1": {s: p1 + 0.001 * s for s in seeds}, "pass@256": {s: p256 - 0.001 * s for s in seeds}}

    per_seed = {"G": arm(0.5, 0.8), "L1": arm(0.45, 0.82), "L2": arm(0.40, 0.84), "M": arm(0.47, 0.83)}
    claims = frontier_claims(per_seed, "G", ["M", "absent"], {"lower": ["L1", "L2"], "partial": ["L1", "missing"]},
                             n_boot=200)
    assert [(c.method, c.family) for c in claims] == [("M", "lower")]
    # the per-seed offsets cancel in the paired differences: x = -0.03, frontier through (0,0), (-0.05, 0.02)
    (c,) = claims
    assert c.x == pytest.approx(-0.03) and c.frontier_y == pytest.approx(0.012) and c.estimate == pytest.approx(0.018)
    per_seed["M"]["pass@1"] = {1: 0.4, 2: 0.4}
    with pytest.raises(ValueError, match=r"M: seeds \[1, 2\] differ from G's \[1, 2, 3\]"):
        frontier_claims(per_seed, "G", ["M"], {"lower": ["L1"]})


def test_replicate_frontier_holds_only_on_the_same_verdict():
    def c(method, family, verdict, est):
        return {"method": method, "family": family, "verdict": verdict, "estimate": est}

    rows = replicate_frontier(
        [c("A", "lr", "better", 0.02), c("B", "lr", OUTSIDE, None), c("C", "lr", "better", 0.01), c("D", "lr", "x", 0)],
        [c("A", "lr", "better", 0.01), c("B", "lr", OUTSIDE, None), c("C", "lr", OUTSIDE, None),
         c("D", "lr", "x", 0)])
    assert [(r["method"], r["status"]) for r in rows] == [
        ("A", "holds"), ("B", "holds"), ("C", "not established"), ("D", "not established")]


def _synthetic_results(seeds):
    """A run of the controls set whose per-seed metrics follow simple curves: controls lose pass@256 gains along
    y = -0.4 x, the methods sit on y = -0.8 x (above every control), the SFT policy at (-0.1, +0.06)."""
    rng = np.random.default_rng(0)
    knob_x = {}
    for fam in CONTROL_FAMILIES + METHOD_FAMILIES:
        for i, a in enumerate(fam.arms):
            knob_x[a.name] = (-0.02 * (i + 1), -0.4 if fam.control else -0.8)
    runs, base = [], {}
    for s in seeds:
        g1, g256 = 0.47 + rng.normal(0, 0.02), 0.87 + rng.normal(0, 0.02)
        base[str(s)] = {"pass_at_k": {"1": g1 - 0.1, "256": g256 + 0.06}}
        for a in CONTROLS_SET:
            x, slope = knob_x.get(a.name, (0.0, 0.0))
            dx = x + rng.normal(0, 0.003) if a.name != REFERENCE_ARM else 0.0
            runs.append({"arm": a.name, "seed": s, "eval": {"pass_at_k": {"1": g1 + dx, "256": g256 + slope * dx}},
                         "history": [{"adv_abs_mean": 0.4 if a.estimator == "grpo" else 0.2}]})
    return {"runs": runs, "base": {"per_seed": base}, "config": {"arms": [a.as_json() for a in CONTROLS_SET]}}


def test_controls_section_and_figure_on_a_synthetic_run(tmp_path):
    from verl_focal.demo.frontier_report import (
        FRONTIER_PLOT,
        controls_markdown,
        frontier_plot,
        frontier_replication_markdown,
        frontier_results,
    )

    res = _synthetic_results(range(6))
    fr = frontier_results(json.loads(json.dumps(res)), n_boot=500)  # as read back from results.json
    assert fr["seeds"] == list(range(6)) and [f["name"] for f in fr["families"]][:3] == [
        "lower lr", "entropy bonus", "KL to SFT"]
    # 19 methods x 5 control families; a method above every control frontier is better against each
    assert len(fr["claims"]) == 95
    by = {(c["method"], c["family"]): c for c in fr["claims"]}
    assert by[("F-GRPO N=8 γ=1", "lower lr")]["verdict"] == "better"
    # the deepest method points (x = -0.06) are outside the entropy and KL grids (deepest -0.08) only if beyond;
    # every method point lies within the lower-lr family, which reaches the SFT policy at x = -0.1
    assert all(c["verdict"] != OUTSIDE for c in fr["claims"] if c["family"] == "lower lr")
    sft = [p for p in fr["points"] if p["arm"] == "base (SFT)"]
    assert len(sft) == 1 and sft[0]["pass@1"]["mean"] == pytest.approx(-0.1)
    res["frontier"] = fr
    md = "\n".join(controls_markdown(res))
    assert "## Equal pass@1: the methods against the controls' frontiers (6 seeds)" in md
    assert "| F-GRPO N=8 γ=1 | -0.04" in md and "**better**" in md
    assert "Mean |Â| per update" in md and "GRPO N=8 0.400" in md
    path = os.path.join(tmp_path, FRONTIER_PLOT)
    frontier_plot(res, path)
    assert os.path.getsize(path) > 10_000
    rep = frontier_replication_markdown(res, res)
    assert rep[0].startswith("| method | vs lower lr | vs entropy bonus | vs KL to SFT | vs focal shuffled | "
                             "vs focal batch-mean |") and len(rep) == 2 + 19
    assert "holds" not in rep[2] and "**better**" in rep[2]


def test_no_controls_section_without_a_complete_control_family():
    from verl_focal.demo.frontier_report import frontier_results

    res = _synthetic_results(range(3))
    dropped = CONTROL_FAMILIES[0].arms[1].name
    for fam in CONTROL_FAMILIES[1:]:
        dropped_names = {a.name for a in fam.arms}
        res["runs"] = [r for r in res["runs"] if r["arm"] not in dropped_names]
    res["runs"] = [r for r in res["runs"] if r["arm"] != dropped]
    assert frontier_results(res) is None
    assert frontier_results({"runs": [r for r in _synthetic_results(range(3))["runs"] if r["arm"] != REFERENCE_ARM],
                             "base": {"per_seed": {}}}) is None
