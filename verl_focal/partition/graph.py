"""Cue vectors and their similarity graph (Cue-GRPO, docs/methods.md §6 steps 4-5).

Pure numpy/scipy.  Given one group's cue sequences:

* ρ-suppression: a cue present in more than a fraction ρ of the group's traces is
  removed from every trace (it does not distinguish strategies within this group);
* bag-of-cues count vectors v_i;
* an edge i–j when cos(v_i, v_j) ≥ ε; clusters are the connected components (single
  linkage at distance 1 − ε);
* all traces whose vector is empty form ONE residual cluster.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from verl_focal.partition.base import canonical_labels

__all__ = ["bag_of_cues", "suppress_common", "cosine_components", "cluster_sequences"]

_TOL = 1e-9  # cosine ties at exactly ε count as edges, independent of rounding


def bag_of_cues(seqs: Sequence[Sequence[str]], vocab: Sequence[str] | None = None) -> tuple[np.ndarray, list[str]]:
    """Count matrix (n_traces, n_cues) over ``vocab`` (default: sorted codes seen)."""
    vocab = sorted({c for s in seqs for c in s}) if vocab is None else list(vocab)
    col = {c: j for j, c in enumerate(vocab)}
    m = np.zeros((len(seqs), len(vocab)), dtype=np.float64)
    for i, s in enumerate(seqs):
        for c in s:
            j = col.get(c)
            if j is not None:
                m[i, j] += 1.0
    return m, vocab


def suppress_common(counts: np.ndarray, rho: float) -> np.ndarray:
    """Zero the columns present (count > 0) in more than a fraction ``rho`` of the rows."""
    if counts.size == 0:
        return counts
    share = (counts > 0).mean(axis=0)
    out = counts.copy()
    out[:, share > rho] = 0.0
    return out


def cosine_components(counts: np.ndarray, epsilon: float) -> list[int]:
    """Connected components of the graph {i–j : cos(v_i, v_j) ≥ ε}; empty rows form one residual cluster.

    Labels are canonical (0..m-1 in order of first appearance).
    """
    n = counts.shape[0]
    if n == 0:
        return []
    norms = np.linalg.norm(counts, axis=1)
    empty = norms == 0
    labels = np.full(n, -1, dtype=np.int64)
    idx = np.flatnonzero(~empty)
    if idx.size:
        unit = counts[idx] / norms[idx, None]
        adj = (unit @ unit.T) >= epsilon - _TOL
        _, comp = connected_components(csr_matrix(adj), directed=False)
        labels[idx] = comp
    if empty.any():
        labels[empty] = labels.max() + 1
    return canonical_labels(labels.tolist())


def cluster_sequences(seqs: Sequence[Sequence[str]], epsilon: float = 0.5, rho: float = 0.75) -> list[int]:
    """Steps 4-5 of docs/methods.md §6 for one group: suppress, vectorise, link, take components."""
    counts, _ = bag_of_cues(seqs)
    return cosine_components(suppress_common(counts, rho), epsilon)
