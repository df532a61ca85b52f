"""The v1 trainer's real ``_compute_advantage`` through our hook, with a real TransferQueue.

Rows are written to TransferQueue exactly as verl's agent loop writes them (tests/verl_harness.py);
the reward extras sit in ``extra_fields["reward_extra_info"]``.  Only the trainer's GPU-bound
``__init__`` (resource pools, workers) is skipped (:func:`verl_harness.v1_trainer`).
"""

from __future__ import annotations

import numpy as np
import pytest
import verl  # noqa: F401

from _reference import reference_advantages
from verl_harness import Rollout, first_token_advantages, put_rollouts, v1_trainer, word_tokenizer

WORDS = ["<pad>", "<eos>", "case", "one", "two", "count", "complement", "answer", "is", "7", "9", "so"]


@pytest.fixture(scope="module")
def tokenizer():
    return word_tokenizer(WORDS)


def _rollouts(tokenizer, groups):
    """groups: {uid: [(response_text, reward, acc), ...]}"""
    return [Rollout(uid, tokenizer(text)["input_ids"], reward, {"acc": float(acc), "score": float(reward)},
                    session=s, prompt=f"problem {uid}")
            for uid, rows in groups.items() for s, (text, reward, acc) in enumerate(rows)]


def test_f_grpo_through_v1_compute_advantage(transfer_queue, composed_config, tokenizer):
    # shaped rewards: the correct answer in group g0 row 1 scores 0.2 (overlong penalty), acc says correct
    groups = {
        "g0": [("answer is 7", 1.0, 1), ("so answer is 7", 0.2, 1), ("answer is 9", -1.0, 0), ("count", -1.0, 0)],
        "g1": [("case one", -1.0, 0), ("case two", -1.0, 0), ("answer is 7", 1.0, 1)],
        "g2": [("answer is 9", -1.0, 0)],  # singleton group
        "g3": [("answer is 7", 1.0, 1), ("answer is 7", 1.0, 1)],  # all correct
    }
    meta = put_rollouts(transfer_queue, _rollouts(tokenizer, groups), rng=np.random.default_rng(0))
    config = composed_config(["algorithm.adv_estimator=f_grpo", "algorithm.focal.gamma=1.0"])
    trainer = v1_trainer(config, tokenizer)
    metrics: dict = {}
    trainer._compute_advantage(meta, metrics)

    adv = first_token_advantages(transfer_queue, meta)  # one scalar broadcast per token
    # independent expectation, in the batch's key order
    lookup = {f"{u}_{s}_0": (u, r, a) for u, rows in groups.items() for s, (_, r, a) in enumerate(rows)}
    uids = [lookup[k][0] for k in meta.keys]
    ref = reference_advantages(
        [lookup[k][1] for k in meta.keys], np.array(uids, dtype=object), [True] * len(uids), gamma=1.0,
        correct=[lookup[k][2] for k in meta.keys],
    )
    assert adv == pytest.approx(ref, abs=1e-5)
    # diagnostics reached the step metrics
    assert metrics["focal/groups"] == 4
    assert metrics["focal/frac_all_correct"] == pytest.approx(0.25)
    assert metrics["focal/frac_all_wrong"] == pytest.approx(0.25)  # the singleton wrong group
    assert metrics["focal/acc_from_extra_frac"] == 1.0
    # g0: p̂=2/4 -> 0.5 ; g1: 1/3 -> 2/3 (both active)
    assert metrics["focal/weight_mean_active"] == pytest.approx((0.5 + 2 / 3) / 2)
    assert trainer.config.trainer.v1.trainer_mode == "sync"  # the hooked class never changes the mode it was given


def test_builtin_estimator_passes_through_untouched(transfer_queue, composed_config, tokenizer):
    groups = {"h0": [("answer is 7", 1.0, 1), ("answer is 9", 0.0, 0), ("count", 0.0, 0)]}
    meta = put_rollouts(transfer_queue, _rollouts(tokenizer, groups), rng=np.random.default_rng(1))
    trainer = v1_trainer(composed_config(["algorithm.adv_estimator=grpo"]), tokenizer)
    metrics: dict = {}
    trainer._compute_advantage(meta, metrics)
    assert not any(k.startswith(("focal/", "verl_focal/")) for k in metrics)
    assert first_token_advantages(transfer_queue, meta) == pytest.approx(
        reference_advantages([1.0, 0.0, 0.0], np.array(["h0"] * 3, dtype=object), [True] * 3), abs=1e-5)


def test_one_transferqueue_read_gives_every_per_row_field(transfer_queue, composed_config, tokenizer):
    """``tq_rows``: uids, reward extras and problems row-aligned; responses read and decoded on demand."""
    from verl_focal.step.rows import context_from_rows
    from verl_focal.step.tq_rows import tq_rows

    groups = {"t0": [("case one", 1.0, 1), ("complement count", 1.0, 1)], "t1": [("answer is 9", 0.0, 0)]}
    meta = put_rollouts(transfer_queue, _rollouts(tokenizer, groups), rng=np.random.default_rng(2))
    needs = frozenset({"acc", "responses", "problems", "score"})
    ctx = context_from_rows(tq_rows(meta, needs, "acc", tokenizer), needs)
    expected = {f"{u}_{s}_0": (u, t, a, r) for u, rows in groups.items() for s, (t, r, a) in enumerate(rows)}
    assert list(ctx.uids) == [expected[k][0] for k in meta.keys]
    assert ctx.responses == [expected[k][1] for k in meta.keys]
    assert ctx.problems == [f"problem {expected[k][0]}" for k in meta.keys]
    assert ctx.acc.tolist() == [float(expected[k][2]) for k in meta.keys]
    assert [float(x) for x in ctx.extras["score"]] == [expected[k][3] for k in meta.keys]
