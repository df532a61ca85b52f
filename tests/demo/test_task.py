"""The demo task (clock arithmetic mod 16): verifier, strategy labels, diversity, split and teacher (pure Python)."""

import collections
import itertools
import math

import pytest

from verl_focal.lab.demo.task import (
    MODULUS,
    STRATEGIES,
    SYMBOLS,
    Problem,
    all_problems,
    sft_examples,
    solutions,
    split_problems,
    strategy_of,
    verify,
)

OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
ALL_ANSWERS = [f"{SYMBOLS[a]}{op}{SYMBOLS[b]}" for a, op, b in itertools.product(range(16), "+-*", range(16))]


def test_verifier_matches_direct_modular_arithmetic():
    p = Problem(t=7, d=3)
    assert p.prompt == "T7D3="
    assert verify(p, "3+4") and verify(p, "4+3")
    assert verify(p, "3-c")  # 3 - 12 = -9 = 7 (mod 16)
    assert verify(p, "a-3")  # 10 - 3 = 7
    assert verify(p, "3*d") and verify(p, "d*3")  # 39 = 2*16 + 7
    assert not verify(p, "2+5")  # right value, symbol 3 not used
    assert not verify(p, "3+5")  # uses 3, wrong value
    for bad in ("34", "3x4", "3++4", "03+4", "3+4?", "", "3+4…", "7", "3+A"):
        assert not verify(p, bad), bad


def test_solutions_equal_brute_force_over_answer_space():
    names = {"+": "add", "-": "sub", "*": "mul"}
    for p in all_problems()[::5]:
        expect = {s: [] for s in STRATEGIES}
        for ans in ALL_ANSWERS:
            a, op, b = SYMBOLS.index(ans[0]), ans[1], SYMBOLS.index(ans[2])
            if p.d in (a, b) and OPS[op](a, b) % 16 == p.t:
                expect[names[op]].append(ans)
        assert solutions(p) == {k: sorted(v) for k, v in expect.items()}


def test_every_problem_has_add_and_sub_and_mul_where_gcd_allows():
    probs = all_problems()
    assert len(probs) == MODULUS**2 == 256
    for p in probs:
        sol = solutions(p)
        assert sol["add"] and sol["sub"], p  # b = t - d, b = d - t always exist mod M
        assert bool(sol["mul"]) == (p.t % math.gcd(p.d, MODULUS) == 0), p  # d*b = t solvable iff gcd(d, M) | t
    with_mul = sum(bool(solutions(p)["mul"]) for p in probs)
    assert 0.3 * len(probs) < with_mul < 0.8 * len(probs)


def test_strategy_labels():
    assert strategy_of("3+4") == "add" and strategy_of("9-0") == "sub" and strategy_of("f*f") == "mul"
    assert strategy_of("3/4") is None and strategy_of("34") is None and strategy_of("?+1") is None


def test_problems_differ_no_shortcut_answer():
    probs = all_problems()
    solved_by = collections.Counter({ans: sum(verify(p, ans) for p in probs) for ans in ALL_ANSWERS})
    # one answer has one value and two operands: it solves at most 2 problems (< 1% of the set)
    assert max(solved_by.values()) <= 2


def test_prompt_roundtrip_and_errors():
    for p in all_problems()[::11]:
        assert Problem.from_prompt(p.prompt) == p
        assert len(p.prompt) == 5
    with pytest.raises(ValueError, match="d=16"):
        Problem(t=1, d=16)
    with pytest.raises(ValueError, match="not a demo prompt"):
        Problem.from_prompt("T+1D3=")


def test_split_is_deterministic_and_disjoint():
    tr, ho = split_problems(0)
    assert (tr, ho) == split_problems(0)
    assert not set(tr) & set(ho) and set(tr) | set(ho) == set(all_problems())
    assert len(ho) == 64
    assert split_problems(1)[1] != ho
    with pytest.raises(ValueError, match="held_out_frac"):
        split_problems(0, 1.0)


def test_teacher_follows_prior_where_all_strategies_work():
    full = [p for p in all_problems() if all(solutions(p).values())]
    prior = {"add": 0.55, "sub": 0.30, "mul": 0.15}
    ex = sft_examples(full, prior, 6000, seed=3)
    assert all(verify(p, a) for p, a in ex)
    freq = collections.Counter(strategy_of(a) for _, a in ex)
    for s, w in prior.items():  # 6000 draws: binomial sd <= 0.0065
        assert abs(freq[s] / 6000 - w) < 0.03, (s, freq)


def test_teacher_renormalises_over_working_strategies():
    no_mul = [p for p in all_problems() if not solutions(p)["mul"]]
    ex = sft_examples(no_mul, {"add": 0.55, "sub": 0.30, "mul": 0.15}, 4000, seed=1)
    freq = collections.Counter(strategy_of(a) for _, a in ex)
    assert freq["mul"] == 0
    assert abs(freq["add"] / 4000 - 0.55 / 0.85) < 0.03
    with pytest.raises(ValueError, match="prior keys"):
        sft_examples(no_mul, {"add": 1.0}, 10, 0)
