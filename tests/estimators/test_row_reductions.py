"""The passes over verl's (bs, L) tensors give, bit for bit, what the plain whole-batch torch expression gives.

:func:`row_sums` and the old log-probs' reduction go a slice of rows at a time, :func:`broadcast` converts the mask
and scales it in place: each is checked against the one-line expression it replaces, on shapes around the slice
size, a lone long row (torch splits the sum of a single row of 32,768 or more elements over its threads), the
dtypes verl hands over, and with one and two threads.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from verl_focal.estimators.inputs import broadcast, row_slices, row_sums
from verl_focal.estimators.old_log_probs import OLD_LOG_PROB_SUM, OLD_LOG_PROB_TOKENS, sequence_log_prob_columns

#: (14, 40_000): 13 rows per slice and a last row left over, which a lone slice would sum in another order
SHAPES = [(1, 7), (2, 5), (3, 40_000), (14, 40_000), (65, 8192), (66, 8192), (129, 8192), (130, 4097), (1, 40_000),
          (300, 3)]


@pytest.fixture(params=[1, 2], ids=["1-thread", "2-threads"])
def threads(request):
    before = torch.get_num_threads()
    torch.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(before)


def _bits(x: torch.Tensor) -> np.ndarray:
    return x.detach().cpu().numpy().view(np.uint64 if x.dtype == torch.float64 else np.uint32)


def _log_probs(shape, dtype, seed=0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    # spread over many binades, as real log-probs (near 0 for confident tokens): float64 sums then round
    x = -torch.exp(torch.empty(shape, dtype=torch.float64).uniform_(-18.0, 3.5, generator=g))
    return x.to(dtype)


def test_row_slices_cover_the_rows_in_order_and_never_leave_one_row_alone():
    for n in range(1, 300):
        for length in (1, 8192, 40_000, 1 << 20):
            slices = list(row_slices(n, length))
            assert slices[0][0] == 0 and slices[-1][1] == n
            assert all(a == prev_b for (a, _), (_, prev_b) in zip(slices[1:], slices))
            assert all(b - a >= 2 for a, b in slices) or slices == [(0, 1)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_row_sums_are_the_whole_batch_sum_bit_for_bit(shape, dtype, threads):
    x = _log_probs(shape, dtype)
    assert np.array_equal(_bits(row_sums(x)), _bits(x.sum(-1, dtype=torch.float64)))
    strided = _log_probs((shape[0], shape[1] + 3), dtype, seed=1)[:, 3:]  # a view, as attention_mask[:, -L:]
    assert np.array_equal(_bits(row_sums(strided)), _bits(strided.sum(-1, dtype=torch.float64)))


@pytest.mark.parametrize("mask_dtype", [torch.int64, torch.bool, torch.float32])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_old_log_prob_columns_are_the_masked_sums_bit_for_bit(shape, dtype, mask_dtype, threads):
    lp = _log_probs(shape, dtype, seed=2)
    g = torch.Generator().manual_seed(3)
    mask = torch.rand(shape, generator=g) < 0.9  # holes in the middle (tool outputs), and padding at the end
    mask[:, shape[1] * 3 // 4:] = False
    mask[0] = False  # an empty response
    mask = mask.to(mask_dtype)
    m = mask.to(dtype)
    cols = sequence_log_prob_columns(lp, mask)
    assert np.array_equal(cols[OLD_LOG_PROB_SUM].view(np.uint64),
                          _bits((lp * m).sum(-1, dtype=torch.float64)))
    assert np.array_equal(cols[OLD_LOG_PROB_TOKENS], m.sum(-1, dtype=torch.float64).numpy())
    assert cols[OLD_LOG_PROB_TOKENS][0] == 0 and cols[OLD_LOG_PROB_SUM][0] == 0


def test_a_non_finite_log_prob_under_the_mask_or_beyond_it_propagates_as_before():
    """NaN * 0 is NaN: a NaN in a masked position still spoils its row (the estimators count such rows)."""
    lp = _log_probs((70, 9000), torch.float32)
    mask = torch.ones(70, 9000, dtype=torch.int64)
    mask[:, 8000:] = 0
    lp[5, 8500] = float("nan")  # beyond the response
    lp[6, 10] = float("-inf")
    got = sequence_log_prob_columns(lp, mask)[OLD_LOG_PROB_SUM]
    want = (lp * mask.to(lp.dtype)).sum(-1, dtype=torch.float64).numpy()
    assert np.isnan(got[5]) and got[6] == -np.inf
    assert np.array_equal(got, want, equal_nan=True)


@pytest.mark.parametrize("mask_dtype", [torch.int64, torch.bool, torch.float32, torch.float64])
@pytest.mark.parametrize("rewards_dtype", [torch.float32, torch.bfloat16])
def test_broadcast_is_the_scaled_mask_bit_for_bit_and_leaves_the_mask_alone(rewards_dtype, mask_dtype):
    g = torch.Generator().manual_seed(4)
    scalars = torch.randn(67, dtype=torch.float64, generator=g)
    scalars[3] = 0.0
    scalars[4] = -0.0
    mask = (torch.rand(67, 300, generator=g) < 0.8).to(mask_dtype)
    before = mask.clone()
    rewards = torch.zeros(67, 300, dtype=rewards_dtype)
    adv, ret = broadcast(scalars, rewards, mask)
    want = scalars.to(rewards_dtype).unsqueeze(-1) * mask
    assert adv is ret and adv.dtype == want.dtype and adv.shape == want.shape
    assert torch.equal(adv, want)
    assert torch.equal(torch.signbit(adv), torch.signbit(want))  # -0.0 where a negative advantage meets mask 0
    assert torch.equal(mask, before)  # a mask already in the result's dtype is copied, not scaled in place
