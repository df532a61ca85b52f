"""The smallest detectable D (verl_focal.lab.stats.power) against the formula written out here, and its meaning: a true
difference of that size is found by the two-sided t interval about 80% of the time (noncentral t)."""

import math

import pytest
from scipy import stats as st

from verl_focal.lab.stats.power import minimum_detectable_d


@pytest.mark.parametrize("n,n_target", [(12, None), (12, 24), (24, 12), (4, 100)])
def test_the_formula_at_n_and_projected(n, n_target):
    se = 0.004
    m = n_target or n
    expected = (st.t.ppf(0.975, m - 1) + st.t.ppf(0.80, m - 1)) * se * math.sqrt(n / m)
    assert minimum_detectable_d(se, n, n_target) == pytest.approx(expected, rel=1e-12)


def test_doubling_the_seeds_shrinks_it_by_more_than_root_two_and_large_n_reaches_the_normal_values():
    at12, at24 = minimum_detectable_d(0.01, 12), minimum_detectable_d(0.01, 12, 24)
    assert at24 < at12 / math.sqrt(2)  # smaller se and smaller t quantiles
    z = st.norm.ppf(0.975) + st.norm.ppf(0.80)  # 2.80
    assert minimum_detectable_d(0.01, 10_000) == pytest.approx(z * 0.01, rel=1e-3)


@pytest.mark.parametrize("n", [6, 12, 24])
def test_a_true_d_of_that_size_is_detected_with_about_the_stated_power(n):
    se = 0.01
    d = minimum_detectable_d(se, n)
    crit = st.t.ppf(0.975, n - 1)
    power = st.nct.sf(crit, n - 1, d / se) + st.nct.cdf(-crit, n - 1, d / se)
    assert 0.78 <= power <= 0.81


@pytest.mark.parametrize("kw", [dict(se=0.01, n=1), dict(se=0.01, n=12, n_target=1), dict(se=-1.0, n=12),
                                dict(se=float("nan"), n=12), dict(se=0.01, n=12, power=1.0)])
def test_bad_arguments_are_refused(kw):
    with pytest.raises(ValueError, match="minimum_detectable_d"):
        minimum_detectable_d(**kw)
