"""Equal-pass@1 comparisons (verl_focal.lab.stats.frontier) against values computed independently here."""

import math

import numpy as np
import pytest
from scipy import stats as st

from verl_focal.lab.stats.frontier import OUTSIDE, frontier_claim, frontier_claims, interpolate, replicate_frontier


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


def test_claim_from_resamples_over_problems_uses_the_normal_quantile_and_keeps_the_outside_rule():
    from verl_focal.lab.stats.frontier import claim_from_resamples

    rng = np.random.default_rng(5)
    b = 2000
    fx, fy = np.array([-0.10]), np.array([0.04])  # frontier y = -0.4 x
    bfx, bfy = fx[:, None] + rng.normal(0, 0.005, (1, b)), fy[:, None] + rng.normal(0, 0.005, (1, b))
    bx, by = -0.05 + rng.normal(0, 0.005, b), 0.05 + rng.normal(0, 0.005, b)
    c = claim_from_resamples("M", "F", -0.05, 0.05, fx, fy, bx, by, bfx, bfy, 1, "problems")
    ds = []
    for i in range(b):  # D* by hand: the line through (0, 0) and the family's resampled point
        slope = bfy[0, i] / bfx[0, i]
        ds.append(by[i] - slope * bx[i])
    sd = float(np.std(ds, ddof=1))
    assert c.estimate == pytest.approx(0.05 - 0.02) and c.se == pytest.approx(sd)
    assert c.ci_high - c.estimate == pytest.approx(st.norm.ppf(0.975) * sd) and c.verdict == "better"
    assert c.resampled == "problems" and c.n_seeds == 1
    near = claim_from_resamples("M", "F", -0.002, 0.0, fx, fy, -0.002 + rng.normal(0, 0.005, b), by, bfx, bfy, 1,
                                "problems")
    assert near.verdict == OUTSIDE and near.outside_share > 0.025 and near.estimate is not None
    with pytest.raises(ValueError, match="resampled='folds'"):
        claim_from_resamples("M", "F", -0.05, 0.05, fx, fy, bx, by, bfx, bfy, 1, "folds")
