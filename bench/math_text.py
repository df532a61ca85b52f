r"""Varied, realistic competition-maths solutions for the step benchmarks.

A long reasoning-model response (``<think> ... </think>`` then a short answer with
``\boxed{}``) is generated from a small set of problem *families*.  Each family draws
its numbers at random and can be solved by two or three *methods*; each step of a
method has several wordings.  A response repeats what long chains of thought do:
the method, checks of the arithmetic, a second pass in other words, small detours,
until it reaches the requested length.  Wrong responses end with a wrong answer.

Written for verl-focal's benchmarks (no model, no download).  Pure Python.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Problem", "FAMILIES", "make_problem", "make_response", "corpus"]


@dataclass
class Problem:
    family: str
    text: str
    answer: str
    wrong: str
    methods: dict[str, list[list[str]]]  # method -> steps -> alternative wordings


def _pick(rng: random.Random, options: list[str]) -> str:
    return options[rng.randrange(len(options))]


# --------------------------------------------------------------------------- families
def _subsets(rng: random.Random) -> Problem:
    n = rng.choice([8, 10, 12, 14])
    k = rng.choice([3, 4])
    odd = n // 2
    total, bad = math.comb(n, k), math.comb(odd, k)
    ans = total - bad
    cases = [math.comb(odd, j) * math.comb(n - odd, k - j) for j in range(1, k + 1)]
    case_steps = [
        [f"Case {j}: exactly {j} even element{'s' if j > 1 else ''}: $\\binom{{{odd}}}{{{j}}}\\binom{{{n - odd}}}{{{k - j}}} = {c}$.",
         f"In Case {j} we take {j} of the evens and {k - j} of the odds, which gives {c} subsets."]
        for j, c in zip(range(1, k + 1), cases)
    ]
    return Problem(
        "subsets",
        f"How many {k}-element subsets of $\\{{1, 2, \\ldots, {n}\\}}$ contain at least one even number?",
        str(ans), str(ans + rng.choice([-2, 1, 5, odd])),
        {
            "complement": [
                [f"The total number of {k}-element subsets is $\\binom{{{n}}}{{{k}}} = {total}$.",
                 f"Without any restriction there are $\\dbinom{{{n}}}{{{k}}}={total}$ subsets."],
                ["It is easier to use complementary counting: subtract the subsets with no even number.",
                 "Count the complement: the bad subsets are those with no even element at all."],
                [f"Those use only the {odd} odd numbers, so there are $\\binom{{{odd}}}{{{k}}} = {bad}$ of them.",
                 f"Choosing all {k} elements among the {odd} odd numbers gives {bad} bad subsets."],
                [f"Therefore the count is ${total} - {bad} = {ans}$.", f"Subtracting, ${total}-{bad}={ans}$."],
            ],
            "casework": [["We split into cases by the number of even elements.",
                          "Let me do casework on how many even numbers the subset contains."]]
            + case_steps
            + [[f"Adding the cases: ${' + '.join(map(str, cases))} = {ans}$.", f"Summing all the cases gives {ans}."]],
        },
    )


def _power_mod(rng: random.Random) -> Problem:
    m = rng.choice([7, 11, 13, 17])
    a = rng.choice([2, 3, 5])
    e = rng.randint(50, 400)
    ans = pow(a, e, m)
    order = next(d for d in range(1, m) if pow(a, d, m) == 1)
    q, r = divmod(e, order)
    return Problem(
        "power_mod",
        f"Find the remainder when ${a}^{{{e}}}$ is divided by {m}.",
        str(ans), str((ans + rng.randint(1, m - 1)) % m),
        {
            "modular": [
                [f"Note that ${a}^{{{order}}} \\equiv 1 \\pmod{{{m}}}$.",
                 f"Working modulo {m}, the powers of {a} cycle with period {order}."],
                [f"Since ${e} = {order} \\cdot {q} + {r}$, we get ${a}^{{{e}}} \\equiv {a}^{{{r}}} \\pmod {m}$.",
                 f"The exponent satisfies ${e} \\equiv {r} \\pmod{{{order}}}$, so only ${a}^{{{r}}}$ matters."],
                [f"So the remainder is {ans}.", f"Hence ${a}^{{{e}}} \\equiv {ans} \\pmod{{{m}}}$."],
            ],
            "binomial": [
                [f"Write ${a}^{{{order}}} = {a ** order} = {m} \\cdot {a ** order // m} + 1$.",
                 f"Observe that ${a ** order}$ is one more than a multiple of {m}."],
                [f"By the binomial theorem, $({a ** order // m} \\cdot {m} + 1)^{{{q}}} = \\sum_{{k}} \\binom{{{q}}}{{k}} ({m * (a ** order // m)})^k$, "
                 f"and every term except $k = 0$ is divisible by {m}.",
                 f"Expanding $(1 + {m * (a ** order // m)})^{{{q}}}$ with the binomial theorem, all terms but the first vanish mod {m}."],
                [f"Multiplying by ${a}^{{{r}}}$ leaves remainder {ans}.", f"So the remainder is {ans}."],
            ],
        },
    )


def _roots(rng: random.Random) -> Problem:
    s = rng.randint(3, 12)
    p = rng.randint(1, s * s // 4)
    ans = s * s - 2 * p
    disc = s * s - 4 * p
    return Problem(
        "roots",
        f"Let $r$ and $s$ be the roots of $x^2 - {s}x + {p} = 0$. Find $r^2 + s^2$.",
        str(ans), str(ans + 2 * p),
        {
            "vieta": [
                [f"By Vieta's formulas, $r + s = {s}$ and $rs = {p}$.",
                 f"The sum of the roots is {s} and the product of the roots is {p}."],
                [f"Then $r^2 + s^2 = (r+s)^2 - 2rs = {s * s} - {2 * p} = {ans}$.",
                 f"Using $(r+s)^2 = r^2 + 2rs + s^2$ we get $r^2+s^2 = {ans}$."],
            ],
            "explicit": [
                [f"Solve with the quadratic formula: $x = \\frac{{{s} \\pm \\sqrt{{{disc}}}}}{{2}}$.",
                 f"The roots are $\\frac{{{s}+\\sqrt{{{disc}}}}}{{2}}$ and $\\frac{{{s}-\\sqrt{{{disc}}}}}{{2}}$."],
                [f"Squaring each root, the cross terms with $\\sqrt{{{disc}}}$ cancel when we add.",
                 f"$r^2 = \\frac{{{s * s + disc} + {2 * s}\\sqrt{{{disc}}}}}{{4}}$ and similarly for $s^2$ with a minus sign."],
                [f"Adding, $r^2 + s^2 = \\frac{{{2 * (s * s + disc)}}}{{4}} = {ans}$.", f"The sum is {ans}."],
            ],
        },
    )


def _am_gm(rng: random.Random) -> Problem:
    c = rng.choice([4, 9, 16, 25, 36])
    r = int(math.isqrt(c))
    ans = 2 * r
    return Problem(
        "am_gm",
        f"Find the minimum value of $x + \\frac{{{c}}}{{x}}$ for $x > 0$.",
        str(ans), str(ans + r),
        {
            "am_gm": [
                [f"By AM-GM, $x + \\frac{{{c}}}{{x}} \\ge 2\\sqrt{{x \\cdot \\frac{{{c}}}{{x}}}} = {ans}$.",
                 f"Apply the AM-GM inequality to $x$ and ${c}/x$: their sum is at least $2\\sqrt{{{c}}} = {ans}$."],
                [f"Equality holds when $x = \\frac{{{c}}}{{x}}$, i.e. $x = {r}$.", f"The bound is attained at $x = {r}$."],
            ],
            "calculus": [
                [f"Let $f(x) = x + \\frac{{{c}}}{{x}}$. Its derivative is $f'(x) = 1 - \\frac{{{c}}}{{x^2}}$.",
                 f"Differentiate: $\\frac{{d}}{{dx}}\\left(x + {c}/x\\right) = 1 - {c}/x^2$."],
                [f"Setting $f'(x) = 0$ gives $x = {r}$, and $f''(x) = \\frac{{{2 * c}}}{{x^3}} > 0$ there, so it is a minimum.",
                 f"The derivative vanishes at $x = {r}$ and changes sign from negative to positive."],
                [f"The minimum value is $f({r}) = {ans}$.", f"So the minimum is {ans}."],
            ],
        },
    )


def _stars(rng: random.Random) -> Problem:
    n = rng.randint(6, 20)
    k = rng.randint(3, 6)
    ans = math.comb(n + k - 1, k - 1)
    first = [math.comb(n - j + k - 2, k - 2) for j in range(3)]
    return Problem(
        "stars_bars",
        f"In how many ways can {n} identical candies be given to {k} children?",
        str(ans), str(math.comb(n + k, k - 1)),
        {
            "stars_and_bars": [
                [f"This is a stars and bars problem: {n} stars and {k - 1} bars.",
                 f"Represent a distribution by a row of {n} stars and {k - 1} bars; this is a bijection."],
                [f"The number of arrangements is $\\binom{{{n + k - 1}}}{{{k - 1}}} = {ans}$.",
                 f"Choosing the bar positions gives $\\dbinom{{{n + k - 1}}}{{{k - 1}}}={ans}$ ways."],
            ],
            "recursion": [
                ["Let $f(n, k)$ be the number of ways; then $f(n, k) = \\sum_{j=0}^{n} f(n - j, k - 1)$, a recurrence on the first child.",
                 "Set up a recursion: condition on what the first child receives."],
                [f"With the base case $f(n, 1) = 1$, the first terms are {first[0]}, {first[1]}, {first[2]}, ...",
                 f"The recurrence relation with $f(m, 1) = 1$ gives {first[0]} + {first[1]} + {first[2]} + ..."],
                [f"Carrying the recursion through, $f({n}, {k}) = {ans}$.", f"Summing up, the total is {ans}."],
            ],
        },
    )


def _telescoping(rng: random.Random) -> Problem:
    n = rng.choice([49, 99, 199, 999])
    return Problem(
        "telescoping",
        f"Compute $\\sum_{{k=1}}^{{{n}}} \\frac{{1}}{{k(k+1)}}$.",
        f"\\frac{{{n}}}{{{n + 1}}}", f"\\frac{{{n - 1}}}{{{n}}}",
        {
            "telescoping": [
                ["Use partial fractions: $\\frac{1}{k(k+1)} = \\frac{1}{k} - \\frac{1}{k+1}$.",
                 "Write each term as a difference, $\\frac{1}{k}-\\frac{1}{k+1}$, so the series is telescoping."],
                [f"The sum telescopes to $1 - \\frac{{1}}{{{n + 1}}} = \\frac{{{n}}}{{{n + 1}}}$.",
                 f"Everything cancels except the first and last pieces: $1 - \\frac{{1}}{{{n + 1}}}$."],
            ],
            "induction": [
                ["Let $S_m = \\sum_{k=1}^{m} \\frac{1}{k(k+1)}$. We claim $S_m = \\frac{m}{m+1}$ and prove it by induction.",
                 "Small cases suggest $S_m = m/(m+1)$; we prove it by induction on $m$."],
                ["Base case: $S_1 = \\frac{1}{2}$. Inductive step: $S_{m+1} = \\frac{m}{m+1} + \\frac{1}{(m+1)(m+2)} = \\frac{m+1}{m+2}$.",
                 "The base case holds, and the inductive step adds $\\frac{1}{(m+1)(m+2)}$ to get $\\frac{m+1}{m+2}$."],
                [f"Hence $S_{{{n}}} = \\frac{{{n}}}{{{n + 1}}}$.", f"So the sum up to {n} is $\\frac{{{n}}}{{{n + 1}}}$."],
            ],
        },
    )


def _altitude(rng: random.Random) -> Problem:
    a, b, c = rng.choice([(3, 4, 5), (6, 8, 10), (5, 12, 13), (8, 15, 17), (9, 12, 15)])
    h = f"\\frac{{{a * b}}}{{{c}}}"
    return Problem(
        "altitude",
        f"A right triangle has legs {a} and {b}. Find the length of the altitude to the hypotenuse.",
        h, f"\\frac{{{a * b}}}{{{c + 1}}}",
        {
            "coordinates": [
                [f"Place the right angle C at the origin, with A = ({a}, 0) and B = (0, {b}).",
                 f"Put the triangle in the coordinate plane: C at the origin, A = ({a}, 0), B = (0, {b})."],
                [f"The line AB has equation ${b}x + {a}y = {a * b}$.", f"Line AB is $\\frac{{x}}{{{a}}} + \\frac{{y}}{{{b}}} = 1$."],
                [f"The altitude is the distance from the origin to this line: $\\frac{{{a * b}}}{{\\sqrt{{{a * a} + {b * b}}}}} = {h}$.",
                 f"By the point-to-line distance formula the altitude is ${h}$."],
            ],
            "similar_triangles": [
                [f"By the Pythagorean theorem the hypotenuse is $\\sqrt{{{a}^2+{b}^2}} = {c}$.", f"First, the hypotenuse is {c} by Pythagoras."],
                ["Let D be the foot of the altitude from C. Triangles ACD and ABC are similar triangles (AA similarity).",
                 "Drop the altitude CH; then $\\triangle ACH \\sim \\triangle ABC$."],
                [f"From the similarity, $CD = \\frac{{{a} \\cdot {b}}}{{{c}}} = {h}$.", f"So the altitude is ${h}$."],
            ],
            "area": [
                [f"The area of the triangle is $\\frac{{1}}{{2}} \\cdot {a} \\cdot {b} = {a * b // 2 if a * b % 2 == 0 else str(a * b) + '/2'}$.",
                 "Compute the area in two ways."],
                [f"It also equals $\\frac{{1}}{{2}} \\cdot {c} \\cdot h$, so $h = {h}$.", f"Equating the two expressions, $h = {h}$."],
            ],
        },
    )


def _grid(rng: random.Random) -> Problem:
    w, hgt = rng.randint(3, 8), rng.randint(3, 8)
    ans = math.comb(w + hgt, w)
    return Problem(
        "grid_paths",
        f"How many shortest lattice paths go from $(0,0)$ to $({w},{hgt})$ using unit steps right and up?",
        str(ans), str(math.comb(w + hgt, w) - w),
        {
            "binomial": [
                [f"Every path has {w + hgt} steps, {w} of which go right.",
                 f"A shortest path is a word of {w} R's and {hgt} U's."],
                [f"Choosing the positions of the right steps gives $\\binom{{{w + hgt}}}{{{w}}} = {ans}$.",
                 f"So the number of paths is $\\dbinom{{{w + hgt}}}{{{w}}}={ans}$."],
            ],
            "recursion": [
                ["Let $P(i, j)$ count the paths to $(i, j)$; the last step comes from the left or from below, so $P(i,j) = P(i-1,j) + P(i,j-1)$.",
                 "Set up the recurrence $P(i,j)=P(i-1,j)+P(i,j-1)$ with $P(i,0)=P(0,j)=1$."],
                [f"Filling in the table row by row (this is Pascal's triangle) we reach $P({w},{hgt}) = {ans}$.",
                 f"Computing the table of values by recursion gives {ans} at the corner."],
            ],
        },
    )


FAMILIES: dict[str, Callable[[random.Random], Problem]] = {
    "subsets": _subsets,
    "power_mod": _power_mod,
    "roots": _roots,
    "am_gm": _am_gm,
    "stars_bars": _stars,
    "telescoping": _telescoping,
    "altitude": _altitude,
    "grid_paths": _grid,
}

_OPENINGS = [
    "Okay, so I need to solve this problem. Let me read it again carefully.",
    "Alright, let me think about how to approach this.",
    "Hmm, let me start by understanding what is being asked.",
    "Let me work through this step by step.",
]
_CHECKS = [
    "Wait, let me double-check that computation. {x} times {y} is {xy}, yes.",
    "Let me verify with a smaller example first: if the numbers were {x} and {y}, we would get {xy}, which matches a direct count.",
    "Hold on, I should make sure I did not miscount. {x} plus {y} is {s}, and that is consistent.",
    "Hmm, is that right? Let me recompute: {xy} divided by {y} gives back {x}. Good.",
    "Actually, let me re-examine the setup to be sure nothing was missed.",
    "So far so good. Just to be safe, {x} squared is {xx}.",
    "Let me restate what we have so far before going on.",
]
_SECOND_PASS = [
    "Let me redo this another way to be confident.",
    "Now let me go through the argument once more, more carefully.",
    "To be thorough, I will write out the reasoning again.",
]
_DETOURS = [
    "Maybe there is a pattern if I list a few values: {a}, {b}, {c}. Not obviously, so let me go back to the main approach.",
    "I briefly considered drawing a diagram, but the algebra is cleaner here.",
    "One could also try to guess and check, but that would not be a proof.",
    "Let me note that all quantities here are positive integers, which simplifies things.",
]


def _filler(rng: random.Random, pool: list[str]) -> str:
    x, y = rng.randint(2, 40), rng.randint(2, 40)
    return _pick(rng, pool).format(x=x, y=y, xy=x * y, s=x + y, xx=x * x, a=rng.randint(1, 50),
                                   b=rng.randint(1, 99), c=rng.randint(1, 199))


def make_problem(rng: random.Random, family: str | None = None) -> Problem:
    """A random problem of ``family`` (a random family when None)."""
    name = family or _pick(rng, sorted(FAMILIES))
    return FAMILIES[name](rng)


def make_response(rng: random.Random, problem: Problem, correct: bool, min_chars: int,
                  method: str | None = None) -> tuple[str, str]:
    r"""One response as ``(reasoning, answer)``: the ``<think>`` part of at least ``min_chars``
    characters, and the closing ``</think>`` with the answer in ``\boxed{}`` (the right one when
    ``correct``).  The response is their concatenation; a benchmark that cuts it to a token
    budget cuts the reasoning and keeps the answer."""
    method = method or _pick(rng, sorted(problem.methods))
    steps = problem.methods[method]
    parts = ["<think>", _pick(rng, _OPENINGS), problem.text]
    size = sum(len(p) for p in parts)
    first = True
    while first or size < min_chars:
        para = []
        if not first:
            para.append(_pick(rng, _SECOND_PASS))
        for step in steps:
            para.append(_pick(rng, step))
            if rng.random() < 0.5:
                para.append(_filler(rng, _CHECKS))
        if rng.random() < 0.3:
            para.append(_filler(rng, _DETOURS))
        text = "\n".join(para)
        parts.append(text)
        size += len(text) + 2
        first = False
    answer = problem.answer if correct else problem.wrong
    tail = f"\n\n</think>\n\n{_pick(rng, steps[-1])}\n\nThe answer is $\\boxed{{{answer}}}$."
    return "\n\n".join(parts), tail


def corpus(n: int, seed: int = 0, min_chars: int = 2000) -> list[str]:
    """``n`` varied responses (all families and methods, right and wrong), e.g. to train a tokenizer."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        p = make_problem(rng)
        out.append("".join(make_response(rng, p, correct=i % 3 != 0, min_chars=min_chars)))
    return out
