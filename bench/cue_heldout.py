r"""Held-out check of the math_v1 catalogue: solutions written AFTER the catalogue was frozen.

The test corpus (tests/partition/cue_corpus.py) was written together with the catalogue,
so it shows behaviour, not quality.  These problems were written afterwards and the
catalogue was not changed for them.  For each group this prints the strategy_cue
partition against the true methods: pairwise agreement and the adjusted Rand index.

    python bench/cue_heldout.py
"""

from __future__ import annotations

import itertools
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

HELDOUT = [
    ("lattice_paths", {
        "combinatorial": [
            r"""A path from (0,0) to (4,3) using unit steps right and up has 7 steps, 3 of them up.
Choosing which steps go up gives $\binom{7}{3} = 35$ paths.""",
            r"""Every such path is a word with four R's and three U's. The number of arrangements of these letters is $\frac{7!}{4!\,3!} = 35$.""",
        ],
        "recursive_grid": [
            r"""Let $f(i,j)$ be the number of paths to $(i,j)$. Then $f(i,j) = f(i-1,j) + f(i,j-1)$ with $f(i,0)=f(0,j)=1$.
Filling the table row by row gives $f(4,3) = 35$.""",
            r"""Count paths to each lattice point recursively: each point's count is the sum of the counts to its left and below.
Building up the table from the boundary values of 1, we reach 35 at (4,3).""",
        ],
    }),
    ("digit_sum_divisibility", {
        "modular": [
            r"""A number is congruent to its digit sum modulo 9. The digit sum of 123456789 is 45, and $45 \equiv 0 \pmod 9$.
So the remainder is 0.""",
            r"""Working mod 9, $10 \equiv 1$, so $123456789 \equiv 1+2+\dots+9 = 45 \equiv 0 \pmod{9}$. Remainder 0.""",
        ],
        "direct_division": [
            r"""Divide directly: 123456789 = 9 \times 13717421. Since the quotient is an integer, the remainder is 0.""",
            r"""Long division of 123456789 by 9 gives 13717421 exactly, with nothing left over, so the remainder is 0.""",
        ],
    }),
    ("triangle_area_coords", {
        "shoelace": [
            r"""With vertices (0,0), (4,0), (1,3), the shoelace formula gives area $\frac{1}{2}|0\cdot0 - 4\cdot0 + 4\cdot3 - 1\cdot0 + 1\cdot0 - 0\cdot3| = 6$.""",
            r"""Use coordinates: A=(0,0), B=(4,0), C=(1,3). Area $= \frac12 |x_A(y_B-y_C)+x_B(y_C-y_A)+x_C(y_A-y_B)| = \frac12 \cdot 12 = 6$.""",
        ],
        "base_height": [
            r"""Take AB as the base; its length is 4. The height is the distance from C to line AB, which is 3.
So the area is $\frac{1}{2}\cdot 4 \cdot 3 = 6$.""",
            r"""The base along the bottom side measures 4 and the apex is 3 units above it, so the area equals one half of base times height, 6.""",
        ],
    }),
    ("quadratic_max", {
        "complete_square": [
            r"""Complete the square: $-x^2 + 6x + 1 = -(x-3)^2 + 10$. The square is nonnegative, so the maximum is 10 at x = 3.""",
            r"""Rewrite $-x^2+6x+1$ as $10-(x-3)^2$; since $(x-3)^2 \ge 0$, the largest value is 10.""",
        ],
        "derivative": [
            r"""The derivative of $-x^2+6x+1$ is $-2x+6$, which is zero at x=3. The second derivative is negative, so the maximum is $f(3)=10$.""",
            r"""Setting $f'(x) = -2x + 6 = 0$ gives x = 3, and the maximum value is 10.""",
        ],
    }),
]


def ari(a, b):
    """Adjusted Rand index of two labelings (Hubert & Arabie), by pair counts."""
    from math import comb

    n = len(a)
    cont = {}
    for x, y in zip(a, b):
        cont[(x, y)] = cont.get((x, y), 0) + 1
    sa = {}
    sb = {}
    for (x, y), v in cont.items():
        sa[x] = sa.get(x, 0) + v
        sb[y] = sb.get(y, 0) + v
    idx = sum(comb(v, 2) for v in cont.values())
    ea, eb = sum(comb(v, 2) for v in sa.values()), sum(comb(v, 2) for v in sb.values())
    exp = ea * eb / comb(n, 2)
    mx = (ea + eb) / 2
    return 1.0 if mx == exp else (idx - exp) / (mx - exp)


def main() -> int:
    from verl_focal.partition import get_partitioner
    from verl_focal.partition.cues import signature

    part = get_partitioner("strategy_cue")
    total = []
    for pid, methods in HELDOUT:
        texts = [t for paras in methods.values() for t in paras]
        truth = [m for m, paras in methods.items() for _ in paras]
        labels = part.partition(texts)
        pairs = list(itertools.combinations(range(len(texts)), 2))
        agree = sum((labels[i] == labels[j]) == (truth[i] == truth[j]) for i, j in pairs) / len(pairs)
        total.append(agree)
        print(f"{pid:<26} labels={labels} truth={truth} pair-agreement={agree:.2f} ARI={ari(labels, truth):.2f}")
        for t, m in zip(texts, truth):
            print(f"    {m:<16} {signature(t)}")
    print(f"mean pair-agreement {sum(total) / len(total):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
