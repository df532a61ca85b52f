"""How bench/advantage_step.py compares an arm with verl's stock step: robust to one noisy step, and the
order in which the arms run."""

from __future__ import annotations

import pytest
from _bench_module import load


@pytest.fixture(scope="module")
def bench():
    return load()


def _arm(walls):
    return {"wall_s_all": list(walls)}


def test_difference_is_of_medians_and_its_range_covers_every_pair_of_steps(bench):
    got = bench.compare(_arm([10.0, 10.3, 10.1]), _arm([10.2, 9.9, 10.0]))
    assert got["diff_s"] == pytest.approx(10.1 - 10.0)
    assert got["diff_lo_s"] == pytest.approx(10.0 - 10.2) and got["diff_hi_s"] == pytest.approx(10.3 - 9.9)
    assert got["paired_diff_s"] == pytest.approx([-0.2, 0.4, 0.1])
    assert got["within_margin"] == "?"  # the steps' own spread (0.4 s) is wider than the 0.1 s margin


def test_one_slow_baseline_step_does_not_decide_the_verdict(bench):
    # a single arm step against three baseline steps, one of them slow: the median ignores the slow one
    got = bench.compare(_arm([5.05]), _arm([5.0, 6.6, 5.02]))
    assert got["diff_s"] == pytest.approx(5.05 - 5.02)
    assert "paired_diff_s" not in got  # unequal counts: nothing to pair
    assert got["within_margin"] == "yes"  # 5.05 - 5.0 = 0.05 at worst


def test_verdicts_at_the_margin(bench):
    assert bench.compare(_arm([1.1]), _arm([1.0]))["within_margin"] == "yes"  # exactly +0.1: allowed
    assert bench.compare(_arm([1.3, 1.35]), _arm([1.0, 1.1]))["within_margin"] == "no"  # even the best pair: +0.2


def test_schedule_rotates_the_arms_and_times_the_baselines_three_times(bench):
    arms = ["grpo", "grpo_bypass", "a", "b", "c", "d"]
    assert bench.schedule(arms, 1, 1) == ["grpo", "grpo_bypass", "a", "b", "c", "d"]
    assert bench.schedule(arms, 2, 1) == ["grpo", "grpo_bypass", "b", "c", "d", "a"]
    got = bench.schedule(arms, 1, 3)
    assert got == ["grpo", "grpo_bypass", "a", "b", "grpo", "grpo_bypass", "c", "d", "grpo", "grpo_bypass"]
    assert bench.schedule(arms, 1, 2) == ["grpo", "grpo_bypass", "a", "b", "c", "d", "grpo", "grpo_bypass"]
    assert bench.schedule(["grpo"], 3, 3) == ["grpo"]  # nothing to compare: the baseline once
