"""Cue vectors and their similarity graph (Cue-GRPO, docs/methods.md §6 steps 4-5).

Pure numpy/scipy.  Given one group's cue sequences:

* ρ-suppression: a cue present in more than a fraction ρ of the group's traces is
  removed from every trace (it does not distinguish strategies within this group);
* bag-of-cues count vectors v_i;
* an edge i–j when cos(v_i, v_j) ≥ ε; clusters are the connected components (single
  linkage at distance 1 − ε);
* all traces whose vector is empty form ONE residual cluster.

:func:`cluster_sequences` does this for one group; :func:`cluster_groups` for every group of a batch at once, with
the same labels, in a handful of sparse-matrix operations (no Python loop over rows or groups).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from verl_focal.partition.base import canonical_labels

__all__ = ["bag_of_cues", "suppress_common", "cosine_components", "cluster_sequences", "cluster_groups"]

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


def cluster_groups(seqs: Sequence[Sequence[str]], which: np.ndarray, group: np.ndarray, epsilon: float = 0.5,
                   rho: float = 0.75) -> np.ndarray:
    """:func:`cluster_sequences` of every group of a batch at once (docs/methods.md §6, steps 4-5).

    Row r has the cue sequence ``seqs[which[r]]`` (``seqs``: the distinct sequences, each listed once) and belongs
    to group ``group[r]``.  Returns (n,) int64 labels, canonical within each group in row order: for every group,
    the labels :func:`cluster_sequences` gives its rows' sequences in row order.

    One count matrix over (group, cue) columns, so that rows of different groups share no column: ρ-suppression is
    a count of rows per column against its group's size; the cosine of two rows is the integer dot product of their
    counts (exact) over the product of their norms, and only rows of one group have one; the components of the
    whole batch's graph at ε are those of each group's.  Shapes: ``which``, ``group`` (n,) ints.
    """
    which = np.asarray(which, dtype=np.int64).reshape(-1)
    n = which.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(c, len(vocab)) for c in s] for s in seqs]  # once per distinct sequence
    lens = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
    flat = np.fromiter((c for x in ids for c in x), dtype=np.int64, count=int(lens.sum()))
    starts = np.cumsum(lens) - lens
    _, g = np.unique(np.asarray(group).reshape(-1), return_inverse=True)
    g = g.reshape(-1)
    n_groups, width = int(g.max()) + 1, max(1, len(vocab))
    # the (row, cue) entries: the codes of each row's sequence, one after another
    row_len = lens[which]
    rows = np.repeat(np.arange(n), row_len)
    first = np.cumsum(row_len) - row_len
    codes = flat[np.repeat(starts[which] - first, row_len) + np.arange(int(row_len.sum()))]
    counts = csr_matrix((np.ones(codes.size), (rows, g[rows] * width + codes)), shape=(n, n_groups * width))
    counts.sum_duplicates()
    # ρ-suppression: a column present in more than rho of its group's rows
    size = np.bincount(g, minlength=n_groups).astype(np.float64)
    present = np.bincount(counts.indices, minlength=n_groups * width)
    share = present / size[np.arange(n_groups * width) // width]
    counts.data[(share > rho)[counts.indices]] = 0.0
    counts.eliminate_zeros()
    norms = np.sqrt(np.asarray(counts.multiply(counts).sum(axis=1)).reshape(-1))
    dots = (counts @ counts.T).tocoo()
    keep = dots.data / (norms[dots.row] * norms[dots.col]) >= epsilon - _TOL
    graph = csr_matrix((np.ones(int(keep.sum())), (dots.row[keep], dots.col[keep])), shape=(n, n))
    n_comp, comp = connected_components(graph, directed=False)
    key = np.where(norms == 0, n_comp + g, comp)  # a group's empty rows: its one residual cluster
    # canonical: a group's clusters numbered in the order of their first row
    keys, first_row = np.unique(key, return_index=True)
    order = np.lexsort((first_row, g[first_row]))
    rank = np.empty(keys.size, dtype=np.int64)
    key_group = g[first_row][order]
    group_start = np.searchsorted(key_group, key_group, side="left")
    rank[order] = np.arange(keys.size) - group_start
    return rank[np.searchsorted(keys, key)]
