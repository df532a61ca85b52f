"""TEMPORARY stand-in for ``verl_focal.eval`` (being written on branch ``eval``).

Remove this file and import from ``verl_focal.eval`` once that branch is merged
into main.  Only what the demo needs: the unbiased pass@k estimator.
"""

from __future__ import annotations

import numpy as np


def pass_at_k(n, c, k) -> np.ndarray:
    """Unbiased pass@k (Chen et al. 2021): 1 − C(n−c, k)/C(n, k) per problem, in product form.

    1 − Π_{i=n−c+1}^{n} (1 − k/i); equals 1 when n − c < k.
    """
    n = np.broadcast_to(np.asarray(n, dtype=np.int64), np.shape(c))
    c = np.asarray(c, dtype=np.int64)
    out = np.empty(c.shape, dtype=np.float64)
    for j, (nn, cc) in enumerate(zip(n.ravel(), c.ravel())):
        if k > nn:
            raise ValueError(f"pass@{k} needs at least k samples, got n={nn}")
        if nn - cc < k:
            out.flat[j] = 1.0
        else:
            i = np.arange(nn - cc + 1, nn + 1, dtype=np.float64)
            out.flat[j] = 1.0 - float(np.prod(1.0 - k / i))
    return out


def auc_at_k(n, c, K: int) -> float:
    """AUC@K = 1/(K−1) Σ_{j=1}^{K−1} (pass@j + pass@(j+1))/2, pass@j averaged over problems; AUC@1 = pass@1."""
    curve = np.array([pass_at_k(n, c, j).mean() for j in range(1, int(K) + 1)])
    if K == 1:
        return float(curve[0])
    return float((curve[:-1] + curve[1:]).sum() / (2.0 * (K - 1)))
