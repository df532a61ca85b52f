"""The hook's per-row reduction of verl's ``old_log_probs`` from the DataProto it is handed."""

import pytest
import torch

from verl_focal.estimators.old_log_probs import (
    OLD_LOG_PROB_SUM,
    OLD_LOG_PROB_TOKENS,
    OLD_LOG_PROBS,
    sequence_log_prob_columns,
)
from verl_focal.step.rows import attach_old_log_probs, build_context

ROWS = [[-0.5, -1.0, -0.25], [-2.0], [-0.1, -0.1]]
MASKS = [[1, 1, 0], [1], [1, 1]]  # a masked token (e.g. a tool response) in row 0


def _expected():
    sums = [sum(lp * m for lp, m in zip(r, mk)) for r, mk in zip(ROWS, MASKS)]
    return sums, [float(sum(mk)) for mk in MASKS]


def test_padded_tensor_layout():
    lp = torch.zeros(3, 4)
    m = torch.zeros(3, 4)
    for i, (r, mk) in enumerate(zip(ROWS, MASKS)):
        lp[i, : len(r)] = torch.tensor(r)
        lp[i, len(r) :] = -9.0  # garbage beyond the response: must be masked out
        m[i, : len(mk)] = torch.tensor(mk, dtype=torch.float32)
    cols = sequence_log_prob_columns(lp, m)
    sums, counts = _expected()
    assert cols[OLD_LOG_PROB_SUM].tolist() == pytest.approx(sums)
    assert cols[OLD_LOG_PROB_TOKENS].tolist() == counts


def test_attach_old_log_probs_reads_the_dataproto_batch():
    """The DataProto's ``old_log_probs`` under ``response_mask`` (else the response part of ``attention_mask``)."""
    from tensordict import TensorDict

    lp = torch.tensor([[-1.0, -0.5], [-2.0, -9.0]])
    ctx = build_context(["a", "a"], frozenset({OLD_LOG_PROBS}))
    assert OLD_LOG_PROBS not in ctx.extras and OLD_LOG_PROB_SUM not in ctx.extras  # not a reward extra
    attach_old_log_probs(ctx, TensorDict({"old_log_probs": lp, "response_mask": torch.tensor([[1, 1], [1, 0]])}, [2]))
    assert ctx.extras[OLD_LOG_PROB_SUM].tolist() == [-1.5, -2.0]
    attention = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]])  # 2 prompt tokens, then the response
    ctx = build_context(["a", "a"], frozenset({OLD_LOG_PROBS}))
    attach_old_log_probs(ctx, TensorDict({"old_log_probs": lp, "attention_mask": attention}, [2]))
    assert ctx.extras[OLD_LOG_PROB_TOKENS].tolist() == [2.0, 1.0]
    attach_old_log_probs(ctx := build_context(["a"], frozenset({OLD_LOG_PROBS})), TensorDict({}, [1]))
    assert OLD_LOG_PROB_SUM not in ctx.extras  # no column: nothing (the estimator refuses with its message)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_padded_layout_with_an_empty_row_and_an_integer_mask(dtype):
    """verl's masks are int64; an empty response has no tokens; the sums accumulate in float64."""
    rows = [[-0.5, -1.0, -0.25], [], [-2.0], [-1e-3] * 5000]
    masks = [[1, 0, 1], [], [1], [1] * 5000]
    width = max(len(r) for r in rows)
    lps = torch.full((len(rows), width), -7.0, dtype=dtype)
    ms = torch.zeros(len(rows), width, dtype=torch.int64)
    for i, (r, m) in enumerate(zip(rows, masks)):
        lps[i, : len(r)] = torch.tensor(r, dtype=dtype)
        ms[i, : len(m)] = torch.tensor(m, dtype=torch.int64)
    cols = sequence_log_prob_columns(lps, ms)
    exact = [sum(float(torch.tensor(x, dtype=dtype)) * m for x, m in zip(r, mk)) for r, mk in zip(rows, masks)]
    assert cols[OLD_LOG_PROB_SUM].tolist() == pytest.approx(exact, rel=1e-12, abs=1e-12)
    assert cols[OLD_LOG_PROB_TOKENS].tolist() == [2.0, 0.0, 1.0, 5000.0]


def test_input_metrics_count_the_rows_whose_inputs_arrived():
    """``verl_focal/acc_rows_frac`` and ``verl_focal/old_log_prob_rows_frac``: finite values / rows."""
    import math

    from verl_focal.step.seam import input_metrics

    infos = [{"acc": 1.0}, {"acc": 0.0}, {}, {"acc": 1.0}]  # row 2: no acc extra
    cols = {OLD_LOG_PROB_SUM: [-1.0, math.nan, -2.0, -0.5], OLD_LOG_PROB_TOKENS: [1.0, 0.0, 2.0, 1.0]}
    ctx = build_context(["a", "a", "b", "b"], frozenset({"acc", OLD_LOG_PROBS}), infos)
    ctx.extras.update(cols)
    assert input_metrics(ctx, frozenset({"acc", OLD_LOG_PROBS})) == {
        "verl_focal/acc_rows_frac": 0.75,
        "verl_focal/old_log_prob_rows_frac": 0.75,
    }
    # without old log-probs among the needs, no log-prob figure; without any acc extra, 0.0
    bare = build_context(["a", "b"], frozenset({"acc"}), [{}, {}])
    assert input_metrics(bare, frozenset({"acc"})) == {"verl_focal/acc_rows_frac": 0.0}
