"""The verdict rule and the join of two runs (verl_focal.lab.stats.verdict)."""

import math

import pytest

from verl_focal.lab.stats.verdict import NOT_TESTED, join_runs, verdict


@pytest.mark.parametrize("lo,hi,hib,expected", [
    (0.01, 0.02, True, "better"), (0.01, 0.02, False, "worse"), (-0.02, -0.01, True, "worse"),
    (-0.02, -0.01, False, "better"), (-0.01, 0.01, True, "not detected"), (0.0, 0.01, True, "not detected"),
    (None, None, True, NOT_TESTED), (math.nan, 0.1, True, NOT_TESTED)])
def test_the_interval_decides(lo, hi, hib, expected):
    assert verdict(lo, hi, hib) == expected


def test_join_keeps_the_first_runs_order_and_holds_only_on_a_settled_equal_verdict():
    a = [{"m": "x", "f": 1, "verdict": "better", "estimate": 0.1}, {"m": "y", "f": 1, "verdict": "odd", "estimate": 0},
         {"m": "z", "f": 1, "verdict": "worse", "estimate": -0.1}, {"m": "only-a", "f": 1, "verdict": "better",
                                                                    "estimate": 1}]
    b = [{"m": "z", "f": 1, "verdict": "not detected", "estimate": 0.0},
         {"m": "y", "f": 1, "verdict": "odd", "estimate": 0}, {"m": "x", "f": 1, "verdict": "better", "estimate": 0.2}]
    rows = join_runs(a, b, ("m", "f"))
    assert [(r["m"], r["status"]) for r in rows] == [("x", "holds"), ("y", "not established"),
                                                      ("z", "not established")]
    assert rows[0] == {"m": "x", "f": 1, "verdict_1": "better", "verdict_2": "better", "estimate_1": 0.1,
                       "estimate_2": 0.2, "status": "holds"}
    assert join_runs(a, b, ("m", "f"), settled=("odd",))[1]["status"] == "holds"
