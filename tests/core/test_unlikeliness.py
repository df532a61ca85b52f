"""The unlikeliness reward's ranking and multiplier (docs/methods.md §10) against plain loops."""

import numpy as np
import pytest
import torch

from verl_focal.core.groups import group_ids
from verl_focal.core.unlikeliness import likelihood_ranks, sequence_log_likelihood, unlikeliness_factor


def _loop_ranks(score, index, valid):
    out = [0] * len(score)
    groups: dict = {}
    for i, u in enumerate(index):
        if valid[i]:
            groups.setdefault(u, []).append(i)
    for rows in groups.values():
        for pos, i in enumerate(sorted(rows, key=lambda i: (-score[i], i))):
            out[i] = pos + 1
    return out, {u: len(r) for u, r in groups.items()}


@pytest.mark.parametrize("seed", range(4))
def test_ranks_match_a_sorted_loop_with_ties_padding_and_shuffled_groups(seed):
    rng = np.random.default_rng(seed)
    sizes = [8, 1, 5, 3, 8]
    index = np.array([f"u{g}" for g, s in enumerate(sizes) for _ in range(s)] + ["u0", "pad"], dtype=object)
    perm = rng.permutation(len(index))
    index = index[perm]
    score = rng.choice([-3.0, -2.0, -1.5, -1.0, -0.5], size=len(index))  # many ties
    valid = np.ones(len(index))
    valid[-2:] = 0.0  # a padding row sharing uid u0 and one of its own
    gid, ng = group_ids(index)
    rank, n_valid = likelihood_ranks(torch.tensor(score), gid, ng, torch.tensor(valid))
    ref, sizes_ref = _loop_ranks(score.tolist(), index, valid.tolist())
    assert rank.tolist() == ref
    assert {u: int(n_valid[g]) for u, g in zip(index, gid.tolist()) if u in sizes_ref} == sizes_ref


def test_factor_endpoints_and_wrong_rows_untouched():
    # one group of G = 4: log-likelihoods -1 (most likely) .. -4 (least likely), all correct but the last
    score = torch.tensor([-3.0, -1.0, -4.0, -2.0])
    correct = torch.tensor([1.0, 1.0, 0.0, 1.0])
    gid, ng = group_ids(np.array(["a"] * 4, dtype=object))
    factor, rank = unlikeliness_factor(score, correct, gid, ng, torch.ones(4), beta=0.25)
    assert rank.tolist() == [3.0, 1.0, 4.0, 2.0]
    # 1 − β(G − rank)/G
    assert factor.tolist() == pytest.approx([1 - 0.25 * 1 / 4, 1 - 0.25 * 3 / 4, 1.0, 1 - 0.25 * 2 / 4])
    zero, _ = unlikeliness_factor(score, correct, gid, ng, torch.ones(4), beta=0.0)
    assert zero.tolist() == [1.0] * 4


def test_sum_and_mean_likelihoods_rank_long_and_short_responses_differently():
    # long response: sum -6 over 12 tokens (mean -0.5); short: sum -3 over 2 tokens (mean -1.5)
    s, t = torch.tensor([-6.0, -3.0]), torch.tensor([12.0, 2.0])
    gid, ng = group_ids(np.array(["a", "a"], dtype=object))
    by_sum, _ = likelihood_ranks(sequence_log_likelihood(s, t, "sum"), gid, ng, torch.ones(2))
    by_mean, _ = likelihood_ranks(sequence_log_likelihood(s, t, "mean"), gid, ng, torch.ones(2))
    assert by_sum.tolist() == [2.0, 1.0] and by_mean.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match=r"algorithm.unlikely.likelihood='max' is not one of \['sum', 'mean'\]"):
        sequence_log_likelihood(s, t, "max")


def test_non_finite_log_prob_on_a_valid_row_is_refused_but_ignored_on_padding():
    gid, ng = group_ids(np.array(["a", "a", "a"], dtype=object))
    with pytest.raises(ValueError, match=r"row 1 has a non-finite old log-probability"):
        likelihood_ranks(torch.tensor([-1.0, float("nan"), -2.0]), gid, ng, torch.ones(3))
    rank, _ = likelihood_ranks(torch.tensor([-1.0, float("nan"), -2.0]), gid, ng, torch.tensor([1.0, 0.0, 1.0]))
    assert rank.tolist() == [1.0, 0.0, 2.0]
