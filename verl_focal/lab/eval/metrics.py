"""Pass@k, AUC@K and the paired subsampling significance test (pure numpy).

Everything here works on per-problem *counts*: ``n`` samples drawn for a problem,
``c`` of them correct.  Nothing imports torch, transformers or verl.

Formulas (docs/methods.md §8):

* unbiased pass@k (Chen et al. 2021, Eq. 1 of "Evaluating Large Language Models
  Trained on Code"):  ``pass@k = 1 - C(n-c, k) / C(n, k)``, averaged over problems;
* AUC@K: normalised trapezoidal area under the pass@j curve for j = 1..K
  (the definition used by the Cue-GRPO / UARL papers);
* significance: paired m-out-of-n subsampling (F-GRPO paper, evaluation section:
  n = 1024, m = 256, 50,000 iterations, two-sided alpha = 0.05).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

# the estimator itself lives below the lab (validation reads it too); the curves here share its table
from verl_focal.core.pass_at_k import _CHUNK_ELEMS, _as_int_array, _check_counts, _log_miss_table, default_ks, pass_at_k

__all__ = [
    "DEFAULT_KS",
    "PassAtKCurve",
    "SignificanceResult",
    "auc_at_k",
    "default_ks",
    "pass_at_k",
    "pass_at_k_curve",
    "pass_at_k_matrix",
    "paired_subsampling_test",
]

#: the paper's curve grid: k = 1, 2, 4, ..., 256
DEFAULT_KS: tuple[int, ...] = tuple(2**i for i in range(9))


def pass_at_k_matrix(n, c, kmax: int) -> np.ndarray:
    """Per-problem pass@j for every j = 1..kmax: array of shape (problems, kmax).

    Same estimator as :func:`pass_at_k` (Chen et al. 2021, Eq. 1), computed for all j
    at once by a cumulative product; ``kmax`` must not exceed the smallest ``n``.
    """
    n_ = np.atleast_1d(_as_int_array(n, "n")).ravel()
    c_ = np.atleast_1d(_as_int_array(c, "c")).ravel()
    n_, c_ = np.broadcast_arrays(n_, c_)
    _check_counts(n_, c_)
    kmax = int(kmax)
    if kmax < 1 or kmax > int(n_.min()):
        raise ValueError(f"kmax must satisfy 1 <= kmax <= min(n) = {int(n_.min())}, got {kmax}")
    # distinct (n, c) pairs share one row (at most n+1 of them however many problems)
    pairs, inverse = np.unique(np.stack([n_, c_], axis=1), axis=0, return_inverse=True)
    return _pairs_matrix(pairs, kmax)[inverse.ravel()]


def _pairs_matrix(pairs: np.ndarray, kmax: int) -> np.ndarray:
    out = np.empty((len(pairs), kmax), dtype=np.float64)
    rows = max(1, _CHUNK_ELEMS // kmax)
    for s in range(0, len(pairs), rows):
        out[s : s + rows] = -np.expm1(_log_miss_table(pairs[s : s + rows, 0], pairs[s : s + rows, 1], kmax))
    return out


class PassAtKCurve(NamedTuple):
    """A pass@k curve: ``ks`` (int array) and ``values`` (mean pass@k over problems, in [0, 1])."""

    ks: np.ndarray
    values: np.ndarray

    def as_dict(self) -> dict[int, float]:
        return {int(k): float(v) for k, v in zip(self.ks, self.values)}


def pass_at_k_curve(n, c, ks: Sequence[int] | None = None) -> PassAtKCurve:
    """Mean unbiased pass@k over problems for each k in ``ks`` (Chen et al. 2021, Eq. 1).

    ``n``/``c`` are per-problem sample and correct counts (``n`` may be a scalar).
    ``ks`` defaults to 1, 2, 4, ..., 256 capped at the smallest ``n``
    (:func:`default_ks`).  Every k must be ``<= min(n)``.
    """
    c_ = np.atleast_1d(_as_int_array(c, "c")).ravel()
    n_ = np.atleast_1d(_as_int_array(n, "n")).ravel()
    if n_.size == 1:
        n_ = np.broadcast_to(n_, c_.shape)
    if len(c_) == 0:
        raise ValueError("pass_at_k_curve needs at least one problem, got none")
    if ks is None:
        ks = [k for k in DEFAULT_KS if k <= int(n_.min())] or [1]
    ks_arr = np.asarray(sorted(set(int(k) for k in ks)), dtype=np.int64)
    if ks_arr[0] < 1 or ks_arr[-1] > int(n_.min()):
        raise ValueError(f"every k must satisfy 1 <= k <= min(n) = {int(n_.min())}, got ks = {ks_arr.tolist()}")
    _check_counts(n_, c_)
    pairs, counts = np.unique(np.stack([n_, c_], axis=1), axis=0, return_counts=True)
    mat = _pairs_matrix(pairs, int(ks_arr[-1]))[:, ks_arr - 1]
    return PassAtKCurve(ks_arr, (counts[:, None] * mat).sum(axis=0) / counts.sum())


def auc_at_k(n, c, K: int) -> float:
    """AUC@K: normalised area under the pass@j curve for j = 1..K, averaged over problems.

    Trapezoidal rule on the integer grid (Cue-GRPO / UARL definition, Hu et al. 2026, Eq. 7):
    ``AUC@K = 1/(K-1) * sum_{j=1}^{K-1} (pass@j + pass@(j+1)) / 2`` and ``AUC@1 = pass@1``.
    The result lies in [0, 1] (multiply by 100 for the papers' percentages).
    """
    K = int(K)
    mat = pass_at_k_matrix(n, c, K)
    curve = mat.mean(axis=0)
    if K == 1:
        return float(curve[0])
    return float((curve[:-1] + curve[1:]).sum() / (2.0 * (K - 1)))


# ----------------------------------------------------------------------------------------------
# significance: paired m-out-of-n subsampling
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SignificanceResult:
    """Outcome of :func:`paired_subsampling_test` for one k.

    ``delta`` is the full-sample difference ``pass@k(B) - pass@k(A)`` (n samples),
    ``delta_sub`` the mean subsampled difference, ``ci_low``/``ci_high`` the
    two-sided (1-alpha) percentile interval of the subsampled difference, and
    ``p_value`` the two-sided subsampling p-value for "no difference".
    """

    k: int
    delta: float
    delta_sub: float
    ci_low: float
    ci_high: float
    p_value: float
    significant: bool


def _hypergeom_pmfs(n: np.ndarray, c: np.ndarray, m: int) -> np.ndarray:
    """Probabilities over x = 0..m (one row per (n, c)) of the number of correct samples
    among m drawn without replacement from n samples with c correct (hypergeometric law)."""
    from scipy.special import gammaln  # lazy: keeps `import verl_focal.lab.eval` light

    x = np.arange(m + 1, dtype=np.float64)[None, :]
    nf = n.astype(np.float64)[:, None]
    cf = c.astype(np.float64)[:, None]
    inside = (x >= np.maximum(0, m - (nf - cf))) & (x <= np.minimum(cf, m))
    with np.errstate(invalid="ignore"):
        logp = (
            gammaln(cf + 1) - gammaln(x + 1) - gammaln(cf - x + 1)
            + gammaln(nf - cf + 1) - gammaln(m - x + 1) - gammaln(nf - cf - m + x + 1)
            - (gammaln(nf + 1) - gammaln(m + 1) - gammaln(nf - m + 1))
        )
    pmf = np.where(inside, np.exp(np.where(inside, logp, 0.0)), 0.0)
    return pmf / pmf.sum(axis=1, keepdims=True)


def _alias_table(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walker/Vose alias table for sampling index j with probability p[j] in O(1)."""
    w = len(p)
    scaled = (p * w).tolist()
    prob = np.ones(w)
    alias = np.arange(w)
    small = [i for i, v in enumerate(scaled) if v < 1.0]
    large = [i for i, v in enumerate(scaled) if v >= 1.0]
    while small and large:
        a, b = small.pop(), large.pop()
        prob[a], alias[a] = scaled[a], b
        scaled[b] += scaled[a] - 1.0
        (small if scaled[b] < 1.0 else large).append(b)
    return prob, alias  # leftovers (rounding) keep prob 1 and alias to themselves


def _subsample_stat(n, c, m, ks, iterations, rng, chunk_elems):
    """Per-iteration mean over problems of pass@k(m, c') with c' ~ Hypergeom(n, c, m).

    Returns an array (len(ks), iterations).  Problems sharing (n, c) form one group:
    groups whose c' is certain add a constant; groups on which pass@k takes two values
    only (always the case for k = m) draw one binomial count; the others draw c' with an
    alias table (O(1) per draw), and the draws of an iteration chunk are histogrammed
    over c' = 0..m once, so the cost does not grow with the number of k.
    """
    f = pass_at_k_matrix(np.full(m + 1, m), np.arange(m + 1), int(max(ks)))[:, np.asarray(ks) - 1].T  # (K, m+1)
    total = np.zeros((len(ks), iterations), dtype=np.float64)
    pairs, counts = np.unique(np.stack([n, c], axis=1), axis=0, return_counts=True)
    lo = np.maximum(0, m - (pairs[:, 0] - pairs[:, 1]))
    hi = np.minimum(pairs[:, 1], m)
    pmfs = _hypergeom_pmfs(pairs[:, 0], pairs[:, 1], m)
    general = []
    for i, g in enumerate(counts.tolist()):
        a, b = int(lo[i]), int(hi[i])
        if a == b:  # deterministic subsample count
            total += g * f[:, a : a + 1]
            continue
        vals = f[:, a : b + 1]
        if np.all(vals[:, 1:] == vals[:, 1:2]):
            # two-valued on the support: only the number of problems with c' > lo matters,
            # which is Binomial(g, 1 - P(c' <= lo))
            q = min(1.0, max(0.0, 1.0 - float(pmfs[i, a])))
            hits = rng.binomial(g, q, size=iterations) if g >= 4 else (rng.random((iterations, g)) < q).sum(axis=1)
            total += g * vals[:, :1] + hits[None, :] * (vals[:, 1:2] - vals[:, :1])
            continue
        general.append(i)
    if general:
        width = m + 1
        draws = int(sum(counts[i] for i in general))
        # Alias tables over each group's support, flattened so one vectorised pass draws every
        # problem of an iteration chunk: one uniform per draw, whose integer part picks a column
        # and whose fraction accepts it or takes its alias.  Support points with probability
        # below 1e-18 (invisible next to the Monte-Carlo error) are left out of the tables.
        cols_a, cols_w, cols_off, probs, aliases = [], [], [], [], []
        off = 0
        for i in general:
            support = np.flatnonzero(pmfs[i] > 1e-18)
            a, b = int(support[0]), int(support[-1])
            prob, alias = _alias_table(pmfs[i, a : b + 1] / pmfs[i, a : b + 1].sum())
            g = int(counts[i])
            cols_a.append(np.full(g, a))
            cols_w.append(np.full(g, b - a + 1))
            cols_off.append(np.full(g, off))
            probs.append(prob)
            aliases.append(alias)
            off += b - a + 1
        col_a, col_w, col_off = (np.concatenate(v)[None, :] for v in (cols_a, cols_w, cols_off))
        prob_flat, alias_flat = np.concatenate(probs), np.concatenate(aliases)
        rows = max(1, min(iterations, chunk_elems // max(draws, width)))
        for s in range(0, iterations, rows):
            r = min(rows, iterations - s)
            t = rng.random((r, draws)) * col_w
            j = np.minimum(t.astype(np.int64), col_w - 1)
            idx = j + col_off
            xs = np.where(t - j < prob_flat[idx], j, alias_flat[idx]) + col_a
            xs += (np.arange(r) * width)[:, None]
            hist = np.bincount(xs.ravel(), minlength=r * width).reshape(r, width)
            total[:, s : s + r] += f @ hist.T
    return total / len(n)


def paired_subsampling_test(
    n_a,
    c_a,
    n_b,
    c_b,
    ks: Sequence[int] | int = 256,
    m: int = 256,
    iterations: int = 50_000,
    alpha: float = 0.05,
    seed: int = 0,
) -> list[SignificanceResult]:
    """Paired m-out-of-n subsampling test of pass@k(B) - pass@k(A) (F-GRPO evaluation protocol).

    Problems are paired by position (``c_a[j]`` and ``c_b[j]`` are the same problem).
    In each of ``iterations`` rounds, for every problem and each run, ``m`` of its ``n``
    samples are drawn without replacement (so the correct count is hypergeometric);
    pass@k is computed from those m samples with the unbiased estimator and averaged
    over problems; the round's statistic is the B - A difference.  With
    ``D*`` the subsampled differences:

    * ``p_value = min(1, 2 * min(P(D* <= 0), P(D* >= 0)))`` (two-sided),
    * the (1-alpha) interval is the alpha/2, 1-alpha/2 percentiles of ``D*``,
    * ``significant = p_value < alpha``.

    Because the subsample estimate is noisier than the n-sample one, this is
    conservative for m < n.  Paper setting: n = 1024, m = 256, 50,000 iterations,
    alpha = 0.05.  Vectorised (alias-table sampling per distinct (n, c)) and
    deterministic for a given ``seed``.  Returns one :class:`SignificanceResult` per k
    (each k must be <= m).
    """
    c_a = np.atleast_1d(_as_int_array(c_a, "c_a")).ravel()
    c_b = np.atleast_1d(_as_int_array(c_b, "c_b")).ravel()
    if c_a.shape != c_b.shape:
        raise ValueError(
            f"paired test needs the same problems in both runs: got {len(c_a)} problems for A and {len(c_b)} for B"
        )
    if len(c_a) == 0:
        raise ValueError("paired_subsampling_test needs at least one problem, got none")
    n_a = np.broadcast_to(_as_int_array(n_a, "n_a"), c_a.shape).ravel()
    n_b = np.broadcast_to(_as_int_array(n_b, "n_b"), c_b.shape).ravel()
    _check_counts(n_a, c_a)
    _check_counts(n_b, c_b)
    ks_list = [int(ks)] if np.ndim(ks) == 0 else [int(k) for k in ks]
    m = int(m)
    nmin = int(min(n_a.min(), n_b.min()))
    if m < 1 or m > nmin:
        raise ValueError(f"m (subsample size) must satisfy 1 <= m <= min(n) = {nmin}, got m = {m}")
    if not ks_list or min(ks_list) < 1 or max(ks_list) > m:
        raise ValueError(f"every k must satisfy 1 <= k <= m = {m}, got ks = {ks_list}")
    if iterations < 1:
        raise ValueError(f"iterations must be >= 1, got {iterations}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")

    rng = np.random.default_rng(seed)
    sub_a = _subsample_stat(n_a, c_a, m, ks_list, iterations, rng, _CHUNK_ELEMS)
    sub_b = _subsample_stat(n_b, c_b, m, ks_list, iterations, rng, _CHUNK_ELEMS)
    diff = sub_b - sub_a
    results = []
    for i, k in enumerate(ks_list):
        d = diff[i]
        full = float(pass_at_k(n_b, c_b, k).mean() - pass_at_k(n_a, c_a, k).mean())
        p = min(1.0, 2.0 * min(float(np.mean(d <= 0)), float(np.mean(d >= 0))))
        lo, hi = np.quantile(d, [alpha / 2, 1 - alpha / 2])
        results.append(SignificanceResult(k, full, float(d.mean()), float(lo), float(hi), p, p < alpha))
    return results
