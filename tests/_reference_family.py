"""Plain-loop references for passk_grpo and unlikely_grpo (docs/methods.md §9-10).

Exact rational arithmetic (``fractions`` / ``math.comb``) and explicit per-group
loops; never the vectorised code under test.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction


def passk_group_reference(n: int, c: int, k: int, eps: float = 1e-6, norm: bool = True) -> tuple[float, float, float]:
    """(Â⁺, Â⁻, ρ) from the closed form with exact binomials."""
    rho = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
    miss = Fraction(math.comb(n - c - 1, k - 1), math.comb(n - 1, k - 1)) if n - c - 1 >= 0 else Fraction(0)
    sigma = math.sqrt(float(rho * (1 - rho)))
    scale = sigma + eps if norm else 1.0
    pos = float(1 - rho) / scale if c > 0 else 0.0
    neg = float(1 - rho - miss) / scale if c < n else 0.0
    return pos, neg, float(rho)


def passk_bruteforce(correct: list[int], k: int) -> tuple[list[float], float, float]:
    """The definition the closed form solves: enumerate every k-subset of the group.

    A subset's reward is max of its members' 0/1 rewards; ρ and σ are that reward's
    mean and (population) std over subsets; a rollout's (unnormalised) advantage is
    the mean over the subsets containing it of (subset reward − ρ).
    """
    n = len(correct)
    subsets = list(itertools.combinations(range(n), k))
    rewards = {s: max(correct[i] for i in s) for s in subsets}
    rho = Fraction(sum(rewards.values()), len(subsets))
    sigma = math.sqrt(float(rho * (1 - rho)))
    adv = []
    for i in range(n):
        mine = [Fraction(rewards[s]) - rho for s in subsets if i in s]
        adv.append(float(sum(mine) / len(mine)))
    return adv, float(rho), sigma


def passk_rows_reference(correct, index, valid, k, eps=1e-6, norm=True) -> list[float]:
    groups: dict = {}
    for i, u in enumerate(index):
        if valid[i]:
            groups.setdefault(u, []).append(i)
    out = [0.0] * len(index)
    for rows in groups.values():
        n = len(rows)
        c = sum(1 for i in rows if correct[i])
        pos, neg, _ = passk_group_reference(n, c, k, eps, norm)
        for i in rows:
            out[i] = pos if correct[i] else neg
    return out


def unlikely_rows_reference(scores, correct, loglik, index, valid, beta, eps=1e-6, norm=True) -> list[float]:
    """r_i = R_i(1 − β(G − rank_i)/G) on correct rows (rank 1 = highest loglik, ties by row order), then GRPO."""
    groups: dict = {}
    for i, u in enumerate(index):
        if valid[i]:
            groups.setdefault(u, []).append(i)
    out = [0.0] * len(index)
    for rows in groups.values():
        G = len(rows)
        ordered = sorted(rows, key=lambda i: (-loglik[i], i))
        rank = {i: pos + 1 for pos, i in enumerate(ordered)}
        r = {i: scores[i] * (1 - beta * (G - rank[i]) / G) if correct[i] else scores[i] for i in rows}
        if G == 1:
            mean, std = 0.0, 1.0
        else:
            mean = sum(r.values()) / G
            std = math.sqrt(sum((v - mean) ** 2 for v in r.values()) / (G - 1))
        for i in rows:
            out[i] = (r[i] - mean) / (std + eps) if norm else r[i] - mean
    return out


def _groups(index, valid) -> dict:
    groups: dict = {}
    for i, u in enumerate(index):
        if valid[i]:
            groups.setdefault(u, []).append(i)
    return groups


def maxrl_rows_reference(correct, index, valid, eps=1e-6) -> list[float]:
    """Â_i = (c_i − p̂)/(p̂ + ε) per group; 0 for a group of one valid row and for a group with no correct one."""
    out = [0.0] * len(index)
    for rows in _groups(index, valid).values():
        n = len(rows)
        p = sum(1 for i in rows if correct[i]) / n
        if n == 1 or p == 0:
            continue
        for i in rows:
            out[i] = ((1.0 if correct[i] else 0.0) - p) / (p + eps)
    return out


def ds_grpo_rows_reference(scores, correct, log_probs, mask, index, valid, c_pos=0.05, c_neg=0.05,
                           population=True, eps=1e-6, norm=True) -> list[float]:
    """GRPO of the summed reward (population or sample std; a group of one: mean 0, std 1), then
    − c₊·ℓ̄ on correct rows and + c₋·ℓ̄ on wrong ones, ℓ̄ the mean of the log-probs under the mask."""
    out = [0.0] * len(index)
    for rows in _groups(index, valid).values():
        n = len(rows)
        if n == 1:
            mean, std = 0.0, 1.0
        else:
            mean = sum(scores[i] for i in rows) / n
            std = math.sqrt(sum((scores[i] - mean) ** 2 for i in rows) / (n if population else n - 1))
        for i in rows:
            a = (scores[i] - mean) / (std + eps) if norm else scores[i] - mean
            total, count = 0.0, 0
            for t in range(len(mask[i])):
                if mask[i][t]:
                    total += log_probs[i][t]
                    count += 1
            lbar = total / count
            out[i] = a - c_pos * lbar if correct[i] else a + c_neg * lbar
    return out
