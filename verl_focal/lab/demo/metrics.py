"""Evaluation of the demo policy (torch + numpy, no verl import).

The demo task has a tiny answer space: a correct response is exactly the four
tokens ``A op B <eos>``, and every problem has at most a handful of correct
answers.  So the probability that the policy, sampling at temperature 1,
answers problem x correctly is an exact finite sum

    p(x) = Σ_{a correct for x} π(a | x),

computed by teacher forcing.  Sampling n responses and verifying them gives a
count c ~ Binomial(n, p(x)) -- exactly, since the samples are independent.
:func:`pass_curve` draws c from that binomial and applies the unbiased pass@k
estimator (Chen et al. 2021; docs/methods.md §8); this is the paper's
procedure at n samples per problem without spending the generation time.
The rare-correct set for ΔNLL (F-GRPO Sec. 4 / docs/methods.md §8) is built the
same way: the base policy's rollouts on training prompts are drawn from the
exact multinomial over its correct answers.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln, xlogy

from verl_focal.lab.demo.model import RESPONSE_LEN, encode_pairs, sequence_logprob
from verl_focal.lab.demo.task import STRATEGIES, Problem, solutions
from verl_focal.lab.eval import pass_at_k as _pass_at_k

__all__ = [
    "CorrectSet",
    "correct_set",
    "exact_pass_curve",
    "exact_auc",
    "group_strategy_stats",
    "answer_logprobs",
    "encode_correct_set",
    "strategy_mass",
    "pass_curve",
    "sample_counts",
    "retained_mass",
    "RareSet",
    "build_rare_set",
    "delta_nll",
]


@dataclass(frozen=True)
class CorrectSet:
    """Every correct answer of some problems, flattened: row j is (problems[owner[j]], answers[j])."""

    problems: list[Problem]
    answers: list[str]
    owner: np.ndarray  # (n_answers,) index into problems
    strategy: np.ndarray  # (n_answers,) index into STRATEGIES


def correct_set(problems: Sequence[Problem]) -> CorrectSet:
    """Enumerate the correct answers of ``problems`` (via :func:`verl_focal.lab.demo.task.solutions`)."""
    answers, owner, strat = [], [], []
    names = list(STRATEGIES)
    for i, p in enumerate(problems):
        for s, sols in solutions(p).items():
            for a in sols:
                answers.append(a)
                owner.append(i)
                strat.append(names.index(s))
    return CorrectSet(list(problems), answers, np.array(owner, dtype=np.int64), np.array(strat, dtype=np.int64))


def encode_correct_set(tokenizer, cs: CorrectSet) -> tuple:
    """The teacher-forcing batch (``input_ids``, ``answer_mask``) of every answer of ``cs``, in its order."""
    return encode_pairs(tokenizer, [(cs.problems[o], a) for o, a in zip(cs.owner, cs.answers)])


def answer_logprobs(model, tokenizer, cs: CorrectSet, encoded: tuple | None = None) -> np.ndarray:
    """log π(a | x) of every answer of ``cs`` (the whole sequence ``A op B <eos>``); ``encoded``: the batch of
    :func:`encode_correct_set`, when the caller evaluates several policies on the same answers."""
    ids, mask = encode_correct_set(tokenizer, cs) if encoded is None else encoded
    return sequence_logprob(model, ids, mask).double().numpy()


def strategy_mass(cs: CorrectSet, logp: np.ndarray) -> np.ndarray:
    """(n_problems, n_strategies) correct probability mass Σ π(a|x) per strategy."""
    out = np.zeros((len(cs.problems), len(STRATEGIES)))
    np.add.at(out, (cs.owner, cs.strategy), np.exp(logp))
    return out


def sample_counts(p_correct: np.ndarray, n: int, seed: int) -> np.ndarray:
    """Correct count among n samples per problem: c ~ Binomial(n, p(x)) (exactly the sampling distribution)."""
    return np.random.default_rng(seed).binomial(n, np.clip(p_correct, 0.0, 1.0))


def pass_curve(p_correct: np.ndarray, n: int, ks: Sequence[int], seed: int) -> dict[int, float]:
    """Mean unbiased pass@k over problems, from c ~ Binomial(n, p(x)) correct out of n samples.

    pass@k = 1 − C(n−c, k)/C(n, k) (Chen et al. 2021; docs/methods.md §8).
    """
    if max(ks) > n:
        raise ValueError(f"pass@{max(ks)} needs n >= {max(ks)} samples per problem, got n={n}")
    c = sample_counts(p_correct, n, seed)
    return {int(k): float(np.mean(_pass_at_k(np.full_like(c, n), c, int(k)))) for k in ks}


def exact_pass_curve(p_correct: np.ndarray, ks: Sequence[int]) -> dict[int, float]:
    """Mean exact pass@k over problems: (1/|X|) Σ_x [1 − (1 − p(x))^k].

    This is the expectation of the unbiased estimator 1 − C(n−c, k)/C(n, k)
    for any n ≥ k when c ~ Binomial(n, p(x)) (Chen et al. 2021; docs/methods.md §8),
    so it carries no evaluation-sampling noise: seed-to-seed differences are
    differences between trained policies only.
    """
    p = np.clip(np.asarray(p_correct, dtype=float), 0.0, 1.0)
    return {int(k): float(np.mean(1.0 - (1.0 - p) ** int(k))) for k in ks}


def exact_auc(p_correct: np.ndarray, K: int) -> float:
    """AUC@K on exact pass@j: trapezoid over j = 1..K of the mean pass@j curve, divided by K − 1
    (the definition of :func:`verl_focal.lab.eval.auc_at_k`, docs/methods.md §8); K = 1 gives pass@1."""
    curve = np.array(list(exact_pass_curve(p_correct, range(1, int(K) + 1)).values()))
    if K == 1:
        return float(curve[0])
    return float(((curve[1:] + curve[:-1]) / 2).sum() / (K - 1))


def group_strategy_stats(mass: np.ndarray, n: int) -> dict[str, float]:
    """Exact strategy diversity of N-rollout groups drawn from a policy with per-strategy correct mass.

    ``mass[x, s]`` = Σ_{a correct for x, strategy s} π(a | x).  A group of ``n``
    rollouts on problem x has counts (c_1..c_S, wrong) ~ Multinomial(n; mass[x], 1 − Σ mass[x]).
    Returns, for x drawn uniformly from the rows:

    * ``ge2_correct``: P(≥ 2 correct rollouts);
    * ``multi_given_ge2``: P(≥ 2 strategies among the correct | ≥ 2 correct)
      = Σ_x P_x(≥2 correct, ≥2 strategies) / Σ_x P_x(≥2 correct)
      (the share of groups in which a strategy partition has something to act on).
    """
    mass = np.clip(np.asarray(mass, dtype=float), 0.0, 1.0)
    n_prob, S = mass.shape
    comps = np.array([c for c in itertools.product(range(n + 1), repeat=S) if sum(c) <= n], dtype=float)
    wrong = n - comps.sum(1)
    log_coef = gammaln(n + 1) - gammaln(comps + 1).sum(1) - gammaln(wrong + 1)
    q = np.clip(1.0 - mass.sum(1), 0.0, 1.0)
    logp = log_coef[None] + xlogy(comps[None], mass[:, None, :]).sum(-1) + xlogy(wrong[None], q[:, None])
    pr = np.exp(logp)  # (n_prob, n_comps)
    correct, strategies = comps.sum(1), (comps > 0).sum(1)
    ge2 = pr[:, correct >= 2].sum()
    multi = pr[:, (correct >= 2) & (strategies >= 2)].sum()
    return {"ge2_correct": float(ge2 / n_prob), "multi_given_ge2": float(multi / ge2) if ge2 > 0 else float("nan")}


def retained_mass(base_prob: np.ndarray, prob: np.ndarray, select: np.ndarray) -> float:
    """Retained mass over a selected answer set (F-GRPO App. J metric, docs/methods.md §4):

        M_ret = 1 − Σ_a max(0, π_0(a) − π_t(a)) / Σ_a π_0(a).
    """
    b, q = base_prob[select], prob[select]
    denom = b.sum()
    if denom <= 0:
        return float("nan")
    return float(1.0 - np.maximum(0.0, b - q).sum() / denom)


@dataclass(frozen=True)
class RareSet:
    """Rare-correct trajectories: (problem, answer) pairs and their base NLL per token (with multiplicity)."""

    pairs: list[tuple[Problem, str]]
    base_nll: np.ndarray  # (n,) length-normalised NLL under the base model
    n_sampled_correct: int
    #: (n,) each pair's row in ``correct_set(problems)`` (every rare answer is a correct answer), when built by
    #: :func:`build_rare_set`
    rows: np.ndarray | None = None


def build_rare_set(model, tokenizer, problems: Sequence[Problem], rollouts: int, top_frac: float, seed: int,
                   logp: np.ndarray | None = None) -> RareSet:
    """The paper's rare-correct set (docs/methods.md §8), with exact sampling.

    ``rollouts`` base-model samples per training prompt are drawn from the
    multinomial over {each correct answer, anything incorrect}; the correct
    samples are ranked by length-normalised NLL under the base model and the
    top ``top_frac`` (paper: 1%) are kept.  ``logp``: the base model's
    :func:`answer_logprobs` of ``correct_set(problems)``, when the caller has them.
    """
    cs = correct_set(problems)
    logp = answer_logprobs(model, tokenizer, cs) if logp is None else logp
    rng = np.random.default_rng(seed)
    counts = np.zeros(len(cs.answers), dtype=np.int64)
    for i in range(len(cs.problems)):
        rows = np.flatnonzero(cs.owner == i)
        pr = np.exp(logp[rows])
        pr_all = np.append(pr, max(0.0, 1.0 - pr.sum()))
        counts[rows] = rng.multinomial(rollouts, pr_all / pr_all.sum())[:-1]
    total = int(counts.sum())
    keep = max(1, math.ceil(top_frac * total))
    nll = -logp / RESPONSE_LEN
    order = np.argsort(-nll, kind="stable")
    pairs, base, rows = [], [], []
    for j in order:
        take = min(int(counts[j]), keep - len(pairs))
        for _ in range(take):
            pairs.append((cs.problems[cs.owner[j]], cs.answers[j]))
            base.append(nll[j])
            rows.append(j)
        if len(pairs) >= keep:
            break
    return RareSet(pairs, np.array(base), total, np.array(rows, dtype=np.int64))


def delta_nll(model, tokenizer, rare: RareSet, encoded: tuple | None = None) -> float:
    """ΔNLL_rare = mean over the rare set of (NLL_trained − NLL_base), per token (F-GRPO Table 2); ``encoded``: the
    rare set's teacher-forcing batch (``encode_pairs(tokenizer, rare.pairs)``), when the caller reuses it."""
    if not rare.pairs:
        return float("nan")
    ids, mask = encode_pairs(tokenizer, rare.pairs) if encoded is None else encoded
    nll = -sequence_logprob(model, ids, mask).double().numpy() / RESPONSE_LEN
    return float(np.mean(nll - rare.base_nll))
