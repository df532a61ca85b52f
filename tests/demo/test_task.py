"""The demo task: verifier, strategy labels, problem diversity, split and teacher (pure Python, fast)."""

import collections
import itertools

import pytest

from verl_focal.demo.task import (
    STRATEGIES,
    Problem,
    all_problems,
    sft_examples,
    solutions,
    split_problems,
    strategy_of,
    verify,
)

OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
ALL_ANSWERS = [f"{a}{op}{b}" for a, op, b in itertools.product(range(10), "+-*", range(10))]


def test_verifier_matches_direct_arithmetic():
    p = Problem(t=24, d=3)
    assert verify(p, "3*8") and verify(p, "8*3")
    assert not verify(p, "4*6")  # right value, digit 3 not used
    assert not verify(p, "3*7")  # uses 3, wrong value
    assert verify(Problem(t=-4, d=2), "2-6") and not verify(Problem(t=-4, d=2), "6-2")
    for text in ("3*8 ", "3*8"):  # surrounding whitespace tolerated, nothing else
        assert verify(p, text)
    for bad in ("38", "3x8", "3**8", "03*8", "3*8?", "", "3*8…", "24"):
        assert not verify(p, bad), bad


def test_solutions_equal_brute_force_over_answer_space():
    for p in all_problems()[::7]:
        expect = {s: [] for s in STRATEGIES}
        for ans in ALL_ANSWERS:
            a, op, b = int(ans[0]), ans[1], int(ans[2])
            if p.d in (a, b) and OPS[op](a, b) == p.t:
                expect[{"+": "add", "-": "sub", "*": "mul"}[op]].append(ans)
        assert solutions(p) == expect
        assert all(verify(p, a) for sols in expect.values() for a in sols)


def test_strategy_labels():
    assert strategy_of("3+4") == "add" and strategy_of("9-0") == "sub" and strategy_of("2*2") == "mul"
    assert strategy_of("3/4") is None and strategy_of("34") is None and strategy_of("?+1") is None


def test_problems_differ_no_shortcut_answer():
    probs = all_problems()
    assert len(probs) == len(set(probs)) > 200
    solved_by = collections.Counter()
    for ans in ALL_ANSWERS:
        solved_by[ans] = sum(verify(p, ans) for p in probs)
    # one answer has one value and two digits: it solves at most 2 problems (< 1% of the set)
    assert max(solved_by.values()) <= 2
    assert all(any(verify(p, a) for a in ALL_ANSWERS) for p in probs)


def test_difficulty_is_graded_by_strategy_availability():
    kinds = collections.Counter()
    for p in all_problems():
        avail = frozenset(s for s, v in solutions(p).items() if v)
        kinds[avail] += 1
    assert kinds[frozenset({"mul"})] >= 20  # t > 18: multiplication only
    assert kinds[frozenset({"sub"})] >= 20  # negative t: subtraction only
    assert sum(v for k, v in kinds.items() if len(k) >= 2) >= 50  # several strategies work
    for p in all_problems():
        if p.t > 18:
            assert not solutions(p)["add"] and not solutions(p)["sub"]
        if p.t < 0:
            assert solutions(p)["sub"] and not solutions(p)["add"] and not solutions(p)["mul"]


def test_prompt_roundtrip_and_errors():
    for p in all_problems()[::11]:
        assert Problem.from_prompt(p.prompt) == p
        assert len(p.prompt) == 7
    with pytest.raises(ValueError, match="d=12"):
        Problem(t=1, d=12)
    with pytest.raises(ValueError, match="not a demo prompt"):
        Problem.from_prompt("T+1D3=")


def test_split_is_deterministic_and_disjoint():
    tr, ho = split_problems(0)
    tr2, ho2 = split_problems(0)
    assert (tr, ho) == (tr2, ho2)
    assert not set(tr) & set(ho) and set(tr) | set(ho) == set(all_problems())
    assert abs(len(ho) - 0.2 * len(all_problems())) <= 1
    assert split_problems(1)[1] != ho
    with pytest.raises(ValueError, match="held_out_frac"):
        split_problems(0, 1.0)


def test_teacher_follows_prior_where_all_strategies_work():
    full = [p for p in all_problems() if all(solutions(p).values())]
    assert full
    prior = {"add": 0.7, "sub": 0.22, "mul": 0.08}
    ex = sft_examples(full, prior, 6000, seed=3)
    assert all(verify(p, a) for p, a in ex)
    freq = collections.Counter(strategy_of(a) for _, a in ex)
    for s, w in prior.items():  # 6000 draws: binomial sd <= 0.006
        assert abs(freq[s] / 6000 - w) < 0.03, (s, freq)


def test_teacher_rarely_demonstrates_rare_only_problems():
    probs = all_problems()
    ex = sft_examples(probs, {"add": 0.7, "sub": 0.22, "mul": 0.08}, 20000, seed=0)
    per = collections.Counter(p for p, _ in ex)
    mul_only = [p for p in probs if not solutions(p)["add"] and not solutions(p)["sub"]]
    add_ok = [p for p in probs if solutions(p)["add"]]
    mean = lambda ps: sum(per[p] for p in ps) / len(ps)  # noqa: E731
    assert mean(mul_only) < 0.3 * mean(add_ok)
    with pytest.raises(ValueError, match="prior keys"):
        sft_examples(probs, {"add": 1.0}, 10, 0)
