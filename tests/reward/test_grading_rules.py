"""verl_focal.grading: the numeric and unit policies, reference forms, the failure-log predicate."""

from __future__ import annotations

from fractions import Fraction

import pytest

from verl_focal.grading import NumericPolicy, equivalent, gold_alternatives, obviously_wrong
from verl_focal.grading.normalise import code_to_latex, normalise
from verl_focal.grading.numeric import numbers_match, parse_number
from verl_focal.grading.units import split_quantity, units_compatible
from verl_focal.reward import compute_score


def num(s):
    n = parse_number(normalise(s))
    assert n is not None, s
    return n


def test_parse_number_values_and_forms():
    assert num("1.24e-8").value == Fraction(124, 10 ** 10) and not num("1.24e-8").exact
    assert num(r"3\times10^8").value == 300_000_000 and num(r"3\times10^8").sig_figs == 1
    assert num("-1./3").value == Fraction(-1, 3) and num("-1./3").exact
    assert num("1,000").value == 1000 and num("1,000").exact
    assert num("2.50").sig_figs == 3 and num("2.50").ulp == Fraction(1, 100)
    assert parse_number("x") is None and parse_number(r"\frac{1}{0}") is None
    assert parse_number(r"10^{100000}") is None  # refused, not built


def test_integer_references_are_exact_in_every_form():
    for pred in ("1001", "1,001", "1001.0", "1.001e3", r"1.001\times10^{3}", "999.9999"):
        assert not numbers_match(num(pred), num("1000")), pred
    assert numbers_match(num("1.0e3"), num("1000"))


def test_relative_tolerance_and_its_cap():
    # |p - g| <= min(rel_tol |g|, half a unit in the reference's last digit)
    assert numbers_match(num("2.00001"), num("2.0000"))           # 5e-6 <= min(2e-4, 5e-5)
    assert not numbers_match(num("2.0001"), num("2.0000"))         # 1e-4  > 5e-5: a stated digit differs
    assert numbers_match(num("1.2340001"), num("1.234"))
    assert not numbers_match(num("1.2341"), num("1.234"), NumericPolicy(rel_tol=0.0))
    assert not numbers_match(num("1.2340001"), num("1.234"), NumericPolicy(rel_tol=0.0))
    # exact fraction against a decimal: the decimal must show it to its last digit, >= 3 figures
    assert numbers_match(num("0.333"), num(r"\frac13")) and not numbers_match(num("0.33"), num(r"\frac13"))
    assert not numbers_match(num("0.334"), num(r"\frac13"))


def test_significant_figures_option():
    p, g = num("2.998e8"), num(r"3.0\times10^{8}")
    assert not numbers_match(p, g)
    assert numbers_match(p, g, NumericPolicy(sig_figs=True))
    assert not numbers_match(num("3.1e8"), g, NumericPolicy(sig_figs=True))
    assert compute_score("x", r"\boxed{2.998e8}", r"3.0\times10^{8}", sig_figs=True)["acc"] == 1.0
    assert compute_score("x", r"\boxed{2.998e8}", r"3.0\times10^{8}")["acc"] == 0.0


@pytest.mark.parametrize("kw", [{"rel_tol": -1e-3}, {"rel_tol": 0.7}, {"rel_tol": "1e-4"}, {"sig_figs": "yes"}])
def test_bad_policy_kwargs_are_rejected(kw):
    with pytest.raises(ValueError, match=next(iter(kw))):
        compute_score("x", r"\boxed{1}", "1", **kw)


def test_units_policy():
    q = split_quantity(normalise(r"6.43 \times 10^{16} \text{ cm}^{-3}"))
    assert q[0].value == Fraction(643) * 10 ** 14 and q[1] == "cm^-3"
    assert split_quantity("5m") is None  # a product, not five metres
    assert split_quantity("5 m")[1] == "m" and split_quantity("5 x") is None
    assert units_compatible("cm", None) and units_compatible("°", "°C")
    assert not units_compatible("cm", "m")
    assert equivalent(r"5 \text{ cm}", "5") and equivalent("5", r"5\,\mathrm{cm}")
    assert not equivalent(r"5 \text{ cm}", r"5 \text{ m}")


def test_code_to_latex():
    assert code_to_latex("np.arcsin(10/13)") == r"\arcsin(10/13)"
    assert code_to_latex("math.sqrt(x**2 + 1)") == r"\sqrt{x^{2} + 1}"
    assert code_to_latex(r"\sqrt{2}") == r"\sqrt{2}"  # LaTeX is left alone


def test_gold_alternatives():
    assert gold_alternatives(["1/2", "0.5"]) == ["1/2", "0.5"]
    assert gold_alternatives("['1/2', '0.5']") == ["1/2", "0.5"]
    assert gold_alternatives("[1, 2]") == ["[1, 2]"]     # an interval stays whole
    assert gold_alternatives("1 or 2") == ["1 or 2"]     # two solutions stay together
    import numpy as np

    assert gold_alternatives(np.array(["3", "x=3"], dtype=object)) == ["3", "x=3"]


def test_math_verify_dropping_a_variable_is_refused():
    # math-verify reads the trailing bare "m" in "c^2 m" as a unit and compares c^2
    assert not equivalent("c^2 m", "c^2") and not equivalent("v_0 t", "v_0")
    assert equivalent("c^2 m", "m c^2")


def test_obviously_wrong():
    assert obviously_wrong("12", "13") and obviously_wrong("", "13")
    assert obviously_wrong(r"5\text{ cm}", ["6", "0.06 m"]) is False  # a unit mismatch against one form
    assert obviously_wrong(r"5 \text{ cm}", "6")
    assert not obviously_wrong(r"5 \text{ cm}", r"5 \text{ m}")     # unit mismatch: audit it
    assert not obviously_wrong(r"\frac{a}{b}", r"\frac{b}{a}")     # symbolic: audit it
    assert not obviously_wrong("0.5", r"\frac{\pi}{6}")            # number against a symbolic form


def test_unit_notations_compare_as_factors():
    from verl_focal.grading.units import unit_factors

    assert unit_factors("m/s") == unit_factors("m s^-1") == {"m": 1, "s": -1}
    assert unit_factors("J/(mol K)") == {"J": 1, "mol": -1, "K": -1}
    assert unit_factors("ms") != unit_factors("m s")  # millisecond is not metre-second
    assert units_compatible("m/s", "m s^-1") and not units_compatible("m/s", "s/m")
    assert not units_compatible("m/s^2", "m/s")


def test_named_results_and_approximations():
    assert equivalent(r"v_0 = 3 \text{ m/s}", "3") and not equivalent(r"v_0 = 4 \text{ m/s}", "3")
    assert equivalent(r"\approx 0.25", "0.25") and equivalent("−5", "-5")
    assert not equivalent("x = 3", "y = 3")  # equation against equation stays whole


# issue 26: each case scores 1, and its near miss 0 (both directions)
ISSUE_26 = [
    # (prediction, reference, near miss of the prediction)
    (r"x^{\prime}+\frac{r}{V} x-r c=0", r"x' + \frac{r}{V}x - rc = 0", r"x+\frac{r}{V} x-r c=0"),
    ("0.003", r"0.003^{\prime \prime}", "0.0031"),
    (r"42 \pmod{100}", "42", r"43 \pmod{100}"),
    ("42 (mod 100)", "42", "24 (mod 100)"),
    (r"-2\leq x\leq 3", "[-2,3]", r"-2< x\leq 3"),
    ("-2 < x < 3", "(-2,3)", r"-2 \le x < 3"),
    (r"e^{i\pi}", "-1", r"e^{\pi}"),
    (r"\cos 0", "1", r"\sin 0"),
    ("４２", "42", "４３"),
    ("－1", "-1", "1"),
    ("3，4", "3,4", "3，5"),
    ("√2", r"\sqrt{2}", "√3"),
    ("½", r"\frac{1}{2}", "⅓"),
]


# sexagesimal angles: (prediction, reference, near miss of the prediction); d + m/60 + s/3600 degrees
ANGLES = [
    (r"30^\circ 15'", r"30.25^\circ", r"30^\circ 16'"),
    (r"30^{\circ}15^{\prime}36^{\prime\prime}", r"30.26^\circ", r"30^\circ 15' 37''"),
    ("30°15′36″", r"30^\circ\,15'\,36''", "30°15′26″"),
    (r"-12^\circ 30'", "-12.5", r"12^\circ 30'"),
    (r"30^\circ 15.5'", "30^\\circ 15' 30\"", r"30^\circ 15.6'"),
    (r"45^\circ 0' 36''", "45.01", r"45^\circ 36'"),
]


@pytest.mark.parametrize("pred,ref,near", ISSUE_26 + ANGLES)
def test_accepted_forms_and_their_near_misses(pred, ref, near):
    assert equivalent(pred, ref) and equivalent(ref, pred)
    assert not equivalent(near, ref) and not equivalent(ref, near)
    assert compute_score("x", r"\boxed{" + pred + "}", ref)["acc"] == 1.0
    assert compute_score("x", r"\boxed{" + near + "}", ref)["acc"] == 0.0


@pytest.mark.parametrize("a,b", [("x", "x'"), ("x", r"x^{\prime}"), (r"30^\circ", "30'"), ("30°", "30'"),
                                 ("30'", "30''"), (r"30^\circ", r"30^{\prime\prime}")])
def test_a_prime_or_angle_mark_is_not_dropped_when_the_other_side_has_another(a, b):
    assert not equivalent(a, b) and not equivalent(b, a)


def test_primes_are_one_mark_and_a_distinct_symbol():
    from verl_focal.grading.equivalence import encode_primes
    from verl_focal.grading.normalise import primes_as_marks

    assert primes_as_marks(r"x^{\prime}+y^\prime+z^{\prime \prime}+w^{'}") == "x'+y'+z''+w'"
    assert encode_primes("x'+y_1''") == r"x_{\prime}+y_{1\prime\prime}"
    assert encode_primes(r"\text{Newton's}") == r"\text{Newton's}"


def test_angle_marks_are_units():
    q = split_quantity("0.003''")
    assert q is not None and q[0].value == Fraction(3, 1000) and q[1] == "″"
    assert split_quantity("30'")[1] == "′" and split_quantity(r"30^\circ")[1] == "°"
    assert split_quantity("x'") is None  # a prime after a letter is not a unit
    assert not units_compatible("°", "′") and not units_compatible("′", "″") and units_compatible("′", None)


def test_congruence_modulus_policy():
    from verl_focal.grading.congruence import split_modulus

    assert split_modulus(r"42 \pmod{100}") == ("42", "100")
    assert split_modulus(r"42\ (\text{mod } 100)") == ("42", "100")
    assert split_modulus(r"\equiv 5 \pmod 12") == ("5", "12")
    assert split_modulus("42") is None and split_modulus(r"42 \bmod 100") is None  # \bmod is an operation
    assert equivalent(r"142 \pmod{100}", r"42 \pmod{100}")  # congruent residues, same modulus
    assert not equivalent(r"42 \pmod{50}", r"42 \pmod{100}")
    assert not equivalent("142", r"42 \pmod{100}")  # one side's modulus dropped: 142 against 42


def test_inequalities_as_intervals():
    from verl_focal.grading.intervals import as_interval

    iv = as_interval(r"3 \geq x > -2")
    assert (iv.lo, iv.hi, iv.lo_closed, iv.hi_closed, iv.var) == ("-2", "3", False, True, "x")
    iv = as_interval(r"x \geq 1")
    assert (iv.lo, iv.hi, iv.lo_closed, iv.hi_closed) == ("1", r"\infty", True, False)
    assert as_interval("(1, 2, 3)") is None and as_interval("x < y < z < w") is None
    assert equivalent(r"x \geq 1", r"[1, \infty)") and not equivalent(r"x \geq 1", r"[1, \infty]")
    assert not equivalent(r"-2 \le y \le 3", r"-2 \le x \le 3")  # two inequalities: same variable


def test_imaginary_unit_only_when_i_is_the_only_symbol():
    assert equivalent(r"e^{i\pi}", "-1") and equivalent("(1+i)^2", "2i")
    assert not equivalent(r"e^{i\pi}", "1") and not equivalent("i^2 + n", "n - 2")


def test_sexagesimal_degrees_values_and_non_angles():
    from fractions import Fraction

    from verl_focal.grading.angles import sexagesimal_degrees

    n, parts = sexagesimal_degrees(r"30^\circ 15' 36''")
    assert n.value == Fraction(3026, 100) and n.exact and parts == 3
    n, parts = sexagesimal_degrees(r"30^\circ 15.5'")
    assert n.value == 30 + Fraction(155, 600) and not n.exact and n.ulp == Fraction(1, 600) and parts == 2
    assert sexagesimal_degrees(r"30^\circ")[1] == 1
    for text in ("15'", "x^\\circ 15'", r"30^\circ 15' 20' ", "5'7\"", r"30^\circ 15' x"):
        assert sexagesimal_degrees(text) is None, text
