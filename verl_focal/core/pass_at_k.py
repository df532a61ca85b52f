"""The unbiased pass@k estimator of Chen et al. (2021), Eq. 1, on per-problem counts (pure numpy).

``n`` samples drawn for a problem, ``c`` of them correct: ``pass@k = 1 - C(n-c, k) / C(n, k)`` (docs/methods.md §8).
Validation (:mod:`verl_focal.validation`) and the lab's evaluation (:mod:`verl_focal.lab.eval.metrics`: curves,
AUC@K, significance) both read it from here, so training never imports the lab.
"""

from __future__ import annotations

import numpy as np

__all__ = ["default_ks", "pass_at_k"]

# Work is chunked so no intermediate array holds more than this many float64.
_CHUNK_ELEMS = 1 << 22


# ----------------------------------------------------------------------------------------------
# validation helpers
# ----------------------------------------------------------------------------------------------
def _as_int_array(x, name: str) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype == bool:
        raise TypeError(f"{name} must hold integers, got booleans; pass counts (e.g. correct.sum(axis=1))")
    if a.dtype.kind == "f":
        if not np.all(np.isfinite(a)) or not np.all(a == np.round(a)):
            raise ValueError(
                f"{name} must hold whole numbers, got non-integral values such as {a[a != np.round(a)][:3]}"
            )
        a = a.astype(np.int64)
    elif a.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer array, got dtype {a.dtype}")
    return a.astype(np.int64, copy=False)


def _check_counts(n: np.ndarray, c: np.ndarray) -> None:
    if np.any(n < 1):
        raise ValueError(f"n (samples per problem) must be >= 1, got min n = {int(n.min())}")
    if np.any(c < 0) or np.any(c > n):
        bad = np.flatnonzero(((c < 0) | (c > n)).ravel())[0]
        raise ValueError(
            f"c (correct samples) must satisfy 0 <= c <= n; element {bad} has "
            f"c = {int(c.ravel()[bad])}, n = {int(n.ravel()[bad])}"
        )


# ----------------------------------------------------------------------------------------------
# pass@k
# ----------------------------------------------------------------------------------------------
def _log_miss_table(n: np.ndarray, c: np.ndarray, kmax: int) -> np.ndarray:
    """Cumulative ``log(C(n-c, j) / C(n, j))`` for j = 1..kmax, one row per (n, c) pair.

    Product form: ``C(n-c, k)/C(n, k) = prod_{i<k} (1 - c/(n-i))``, so the log is a
    sum of ``log1p(-c/(n-i))`` -- every term has the same sign, so the cumulative sum
    keeps relative accuracy of order ``k * eps`` (no cancellation as with log-gamma
    differences).  Terms with ``n-c-i <= 0`` are ``-inf`` (the miss probability is 0).
    Requires ``kmax <= min(n)``.
    """
    i = np.arange(kmax, dtype=np.float64)[None, :]
    nf = n.astype(np.float64)[:, None]
    cf = c.astype(np.float64)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.log1p(-cf / (nf - i))
    terms = np.where(nf - cf - i <= 0, -np.inf, terms)
    return np.cumsum(terms, axis=1)


def pass_at_k(n, c, k):
    """Unbiased pass@k estimator of Chen et al. (2021), Eq. 1, per problem.

    ``pass@k = 1 - C(n-c, k) / C(n, k)`` with ``n`` samples of which ``c`` are
    correct; it equals 1 when ``n - c < k``.  Evaluated in the stable product form
    ``1 - exp(sum_{i<k} log1p(-c/(n-i)))`` (with ``expm1``), which is accurate to a
    few ulps times k for any ``n`` (tested against exact rational arithmetic up to
    n = 4096).  ``n``, ``c`` and ``k`` broadcast against each other; integer arrays
    or scalars.  Requires ``0 <= c <= n`` and ``1 <= k <= n``.

    Returns a float for scalar inputs, otherwise a float64 array of the broadcast
    shape.  Average over problems yourself (``pass_at_k(n, c, k).mean()``) or use
    :func:`verl_focal.lab.eval.metrics.pass_at_k_curve`.
    """
    scalar = all(np.ndim(x) == 0 for x in (n, c, k))
    n_, c_, k_ = np.broadcast_arrays(_as_int_array(n, "n"), _as_int_array(c, "c"), _as_int_array(k, "k"))
    _check_counts(n_, c_)
    if np.any(k_ < 1) or np.any(k_ > n_):
        bad = np.flatnonzero(((k_ < 1) | (k_ > n_)).ravel())[0]
        raise ValueError(
            f"k must satisfy 1 <= k <= n; element {bad} has k = {int(k_.ravel()[bad])}, "
            f"n = {int(n_.ravel()[bad])} (draw at least k samples per problem)"
        )
    shape = n_.shape
    nf, cf, kf = n_.ravel(), c_.ravel(), k_.ravel()
    out = np.empty(nf.shape, dtype=np.float64)
    if nf.size:
        # distinct (n, c) pairs share one cumulative table row
        pairs, inverse = np.unique(np.stack([nf, cf], axis=1), axis=0, return_inverse=True)
        inverse = inverse.ravel()
        kmax = int(kf.max())
        rows = max(1, _CHUNK_ELEMS // kmax)
        for start in range(0, len(pairs), rows):
            sel_pairs = pairs[start : start + rows]
            table = _log_miss_table(sel_pairs[:, 0], sel_pairs[:, 1], kmax)
            members = np.flatnonzero((inverse >= start) & (inverse < start + rows))
            logmiss = table[inverse[members] - start, kf[members] - 1]
            out[members] = -np.expm1(logmiss)
    out = out.reshape(shape)
    return float(out) if scalar else out


def default_ks(max_k: int) -> tuple[int, ...]:
    """Powers of two 1, 2, 4, ... up to ``max_k``; ``max_k`` itself is appended if not a power of two."""
    if max_k < 1:
        raise ValueError(f"max_k must be >= 1, got {max_k}")
    ks = [k for k in (2**i for i in range(64)) if k <= max_k]
    if ks[-1] != max_k:
        ks.append(int(max_k))
    return tuple(ks)
