r"""A small realistic corpus of competition-maths solutions, written for verl-focal's tests.

Each problem is solved by two or three *methods*; each method is written two or three
times in different words (paraphrases).  A good strategy partition puts paraphrases
of one method together and different methods apart.  Plain data (and a numpy
reference for the estimator tests), no verl import.
"""

import numpy as np

PROBLEMS = [
    {
        "id": "subsets_even",
        "problem": "How many 3-element subsets of {1, 2, ..., 10} contain at least one even number?",
        "methods": {
            "complement": [
                r"""The total number of 3-element subsets is $\binom{10}{3} = 120$.
We use complementary counting: subtract the subsets with no even number at all.
A subset with no even number uses only the odd numbers 1, 3, 5, 7, 9, so there are $\binom{5}{3} = 10$ of them.
Therefore the answer is $120 - 10 = 110$.""",
                r"""It is easier to count the complement.
All subsets of size three: $\dbinom{10}{3}=120$.
Subsets made only of odd numbers: $\dbinom{5}{3}=10$.
Hence $120-10=\boxed{110}$ subsets contain at least one even number.""",
                r"""Count everything, then remove the bad ones (complementary counting).
There are $\binom{10}{3}$ subsets in total, which is 120.
The bad subsets contain no even element; choose 3 of the 5 odd numbers in $\binom{5}{3}=10$ ways.
So we get $110$.""",
            ],
            "casework": [
                r"""We split into cases by the number of even elements.
Case 1: exactly one even number. Choose it in 5 ways and two odd numbers in $\binom{5}{2} = 10$ ways, giving 50.
Case 2: exactly two even numbers: $\binom{5}{2} \cdot 5 = 50$.
Case 3: all three are even: $\binom{5}{3} = 10$.
Adding, $50 + 50 + 10 = 110$.""",
                r"""Let $k$ be the number of even elements, $k \in \{1,2,3\}$, and do casework on $k$.
Case $k=1$ is Case 1: $5 \cdot \binom{5}{2} = 50$ subsets.
Case 2: two evens and one odd, $\binom{5}{2}\cdot 5 = 50$.
Case 3: three evens, $\binom{5}{3} = 10$.
The total is $110$.""",
            ],
        },
    },
    {
        "id": "right_triangle_altitude",
        "problem": "A right triangle has legs 6 and 8. Find the length of the altitude to the hypotenuse.",
        "methods": {
            "coordinates": [
                r"""Place the right angle C at the origin, with A = (6, 0) on the x-axis and B = (0, 8) on the y-axis.
The line AB has equation $\frac{x}{6} + \frac{y}{8} = 1$, i.e. $4x + 3y - 24 = 0$.
By the Pythagorean theorem the hypotenuse is 10, which we do not even need.
The altitude is the distance from the origin to this line: $\frac{|{-24}|}{\sqrt{4^2+3^2}} = \frac{24}{5}$.""",
                r"""Put the triangle in the coordinate plane: C at the origin, A = (8, 0), B = (0, 6).
Then line AB is $3x + 4y = 24$.
The foot of the perpendicular from the origin is at distance $\frac{24}{\sqrt{3^2 + 4^2}} = \frac{24}{5}$ from the origin.
So the altitude is $4.8$.""",
            ],
            "similar_triangles": [
                r"""By the Pythagorean theorem the hypotenuse AB has length $\sqrt{6^2+8^2} = 10$.
Let D be the foot of the altitude from C. Triangles ACD and ABC are similar triangles (they share angle A and both have a right angle).
So $\frac{CD}{BC} = \frac{AC}{AB}$, which gives $CD = \frac{6 \cdot 8}{10} = \frac{24}{5}$.""",
                r"""First, $AB = 10$ by Pythagoras.
Drop the altitude CH. Then $\triangle ACH \sim \triangle ABC$ by AA similarity.
From the similarity, $CH / CB = AC / AB$, so $CH = 8 \cdot 6 / 10 = 4.8$.""",
            ],
        },
    },
    {
        "id": "power_mod_7",
        "problem": "Find the remainder when $2^{100}$ is divided by 7.",
        "methods": {
            "modular": [
                r"""Note that $2^3 = 8 \equiv 1 \pmod{7}$.
Since $100 = 3 \cdot 33 + 1$, we have $2^{100} = (2^3)^{33} \cdot 2 \equiv 1^{33} \cdot 2 \equiv 2 \pmod 7$.
The remainder is 2.""",
                r"""Work modulo 7. The powers of 2 cycle: 2, 4, 1, 2, 4, 1, ...
The cycle length is 3 and $100 \equiv 1 \pmod 3$, so $2^{100} \equiv 2^1 = 2 \pmod{7}$.
Answer: 2.""",
            ],
            "binomial_expansion": [
                r"""Write $2^{100} = 2 \cdot 8^{33} = 2 (7 + 1)^{33}$.
Expand by the binomial theorem: $(7+1)^{33} = \sum_{k=0}^{33} \binom{33}{k} 7^k$.
Every term except $k = 0$ is divisible by 7, so $(7+1)^{33}$ leaves remainder 1, and $2^{100}$ leaves remainder 2.""",
                r"""We have $2^{100} = 2\cdot(1+7)^{33}$.
By the binomial theorem, $(1+7)^{33} = 1 + \binom{33}{1}7 + \binom{33}{2}7^2 + \cdots$, and all terms after the first are multiples of 7.
Hence the remainder of $2^{100}$ is $2 \cdot 1 = 2$.""",
            ],
        },
    },
    {
        "id": "sum_of_squares_of_roots",
        "problem": "Let r and s be the roots of $x^2 - 5x + 3 = 0$. Find $r^2 + s^2$.",
        "methods": {
            "vieta": [
                r"""By Vieta's formulas, $r + s = 5$ and $rs = 3$.
Then $r^2 + s^2 = (r+s)^2 - 2rs = 25 - 6 = 19$.""",
                r"""The sum of the roots is 5 and the product of the roots is 3.
So $r^2+s^2 = (r+s)^2 - 2rs = 19$.""",
            ],
            "explicit_roots": [
                r"""Solve with the quadratic formula: $x = \frac{5 \pm \sqrt{25 - 12}}{2} = \frac{5 \pm \sqrt{13}}{2}$.
Then $r^2 = \frac{38 + 10\sqrt{13}}{4}$ and $s^2 = \frac{38 - 10\sqrt{13}}{4}$.
Adding, $r^2 + s^2 = \frac{76}{4} = 19$.""",
                r"""The roots are $\frac{5+\sqrt{13}}{2}$ and $\frac{5-\sqrt{13}}{2}$.
Squaring each: $\left(\frac{5+\sqrt{13}}{2}\right)^2 = \frac{19 + 5\sqrt{13}}{2}$, and similarly for the other root with a minus sign.
The square roots cancel when we add, leaving $19$.""",
            ],
        },
    },
    {
        "id": "min_x_plus_4_over_x",
        "problem": "Find the minimum value of $x + \\frac{4}{x}$ for $x > 0$.",
        "methods": {
            "am_gm": [
                r"""By AM-GM, $x + \frac{4}{x} \ge 2\sqrt{x \cdot \frac{4}{x}} = 4$.
Equality holds when $x = \frac{4}{x}$, i.e. $x = 2$. The minimum is 4.""",
                r"""Apply the AM-GM inequality to the two positive numbers $x$ and $4/x$: their sum is at least $2\sqrt{4} = 4$.
The bound is attained at $x=2$, so the minimum value is $4$.""",
            ],
            "calculus": [
                r"""Let $f(x) = x + \frac{4}{x}$. Its derivative is $f'(x) = 1 - \frac{4}{x^2}$.
Setting $f'(x) = 0$ gives $x = 2$ (since $x > 0$), and $f''(x) = \frac{8}{x^3} > 0$ there, so it is a minimum.
The minimum value is $f(2) = 4$.""",
                r"""Differentiate $g(t) = t + 4/t$: $g'(t) = 1 - 4/t^2$, which vanishes at $t = 2$.
The derivative changes sign from negative to positive at $t=2$, so the minimum is $g(2) = 4$.""",
            ],
        },
    },
    {
        "id": "candies",
        "problem": "In how many ways can 10 identical candies be given to 4 children?",
        "methods": {
            "stars_and_bars": [
                r"""This is a stars and bars problem: 10 stars and 3 bars.
The number of arrangements is $\binom{13}{3} = 286$.""",
                r"""Represent a distribution by a row of 10 stars and 3 bars separating the children; this is a bijection with distributions.
Choosing the bar positions gives $\binom{13}{3} = 286$ ways.""",
            ],
            "casework": [
                r"""Do casework on how many candies the first child gets.
Case 1: the first child gets 0, and the other three share 10 in $\binom{12}{2} = 66$ ways.
Case 2: the first child gets 1, leaving $\binom{11}{2} = 55$ ways.
Continuing the cases down to 10 candies, the total is $\sum_{j=0}^{10} \binom{12-j}{2} = 286$.""",
                r"""Consider cases on the number $a$ given to the first child.
Case $a = 0$, Case 1: $\binom{12}{2}$ ways for the rest. Case 2 with $a = 1$: $\binom{11}{2}$ ways.
In the last case $a = 10$ there is 1 way. Adding all the cases gives $66 + 55 + \dots + 1 = 286$.""",
            ],
        },
    },
    {
        "id": "telescoping_sum",
        "problem": "Compute $\\sum_{k=1}^{99} \\frac{1}{k(k+1)}$.",
        "methods": {
            "telescoping": [
                r"""Use partial fractions: $\frac{1}{k(k+1)} = \frac{1}{k} - \frac{1}{k+1}$.
The sum $\sum_{k=1}^{99}\left(\frac{1}{k} - \frac{1}{k+1}\right)$ telescopes to $1 - \frac{1}{100} = \frac{99}{100}$.""",
                r"""Write each term as a difference, $\frac{1}{k}-\frac{1}{k+1}$, so the series is telescoping.
Everything cancels except the first and last pieces: $1 - \frac{1}{100} = \frac{99}{100}$.""",
            ],
            "induction": [
                r"""Let $S_n = \sum_{k=1}^{n} \frac{1}{k(k+1)}$. We claim $S_n = \frac{n}{n+1}$ and prove it by induction.
Base case: $S_1 = \frac{1}{2}$.
Inductive step: $S_{n+1} = \frac{n}{n+1} + \frac{1}{(n+1)(n+2)} = \frac{n+1}{n+2}$.
Hence $S_{99} = \frac{99}{100}$.""",
                r"""Computing small cases suggests $S_n = n/(n+1)$; we prove it by induction on $n$.
The base case $n = 1$ holds. Assuming it for $n$, the inductive step adds $\frac{1}{(n+1)(n+2)}$ and gives $\frac{n+1}{n+2}$.
So the sum up to 99 is $\frac{99}{100}$.""",
            ],
        },
    },
]


def group(problem_id):
    """(texts, method names) of one problem, methods in order, paraphrases in order."""
    for p in PROBLEMS:
        if p["id"] == problem_id:
            texts, names = [], []
            for name, paras in p["methods"].items():
                texts += paras
                names += [name] * len(paras)
            return texts, names
    raise KeyError(problem_id)


def all_texts():
    return [t for p in PROBLEMS for paras in p["methods"].values() for t in paras]


# --------------------------------------------------------------------------- batches for estimator tests
WRONG = ["I guess the answer is 7.", "Trying random values, the answer is 3."]


def batch_rows():
    """rows: (uid, text, correct, method); plus one padding row at the end."""
    rows = []
    for p in PROBLEMS:
        texts, methods = group(p["id"])
        rows += [(p["id"], t, 1.0, m) for t, m in zip(texts, methods)]
        rows += [(p["id"], w, 0.0, None) for w in WRONG]
    rows.append(("pad", "", 0.0, None))
    return rows


def reference_advantages(rows, alpha=0.8, clip=(0.3, 3.0), gamma=None, eps=1e-6):
    """Independent GRPO advantage (× focal weight when gamma is given) times the credit rule,
    with the corpus methods as the clusters, by loops over the formula (docs/methods.md §1, §2, §5)."""
    out = np.zeros(len(rows))
    for uid in dict.fromkeys(r[0] for r in rows):
        idx = [i for i, r in enumerate(rows) if r[0] == uid]
        if uid == "pad":
            continue
        R = np.array([rows[i][2] for i in idx])
        A = (R - R.mean()) / (R.std(ddof=1) + eps)
        pos = [k for k, i in enumerate(idx) if rows[i][2] > 0.5]
        meth = [rows[idx[k]][3] for k in pos]
        size = {m: meth.count(m) for m in meth}
        u = [size[m] ** -alpha for m in meth]
        w = [len(meth) * x / sum(u) for x in u]
        if clip is not None:
            w = [min(max(x, clip[0]), clip[1]) for x in w]
            w = [x * len(w) / sum(w) for x in w]
        g = 1.0 if gamma is None else (1 - len(pos) / len(idx)) ** gamma
        for k, i in enumerate(idx):
            out[i] = A[k] * g
        for k, wk in zip(pos, w):
            out[idx[k]] *= wk
    return out


