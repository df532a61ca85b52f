"""cue_grpo / f_cue_grpo through the v1 trainer's real ``_compute_advantage`` and our hook,
with a real TransferQueue (the same setup as test_v1_hook_transferqueue_on_cpu.py).

Rollouts are the cue test corpus, tokenised with a small byte-level BPE (exact round
trip), written as verl's agent loop writes them; the reward extras carry ``acc`` and,
in one test, the ``cue_sig`` that ``verl_focal.reward.compute_score`` would add.
Only the trainer's GPU-bound ``__init__`` is skipped (tests/verl_harness.py).
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import verl  # noqa: F401

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "partition"))
import cue_corpus  # noqa: E402

from verl_harness import Rollout, byte_level_tokenizer, put_rollouts, v1_trainer  # noqa: E402


@pytest.fixture(scope="module")
def tokenizer():
    return byte_level_tokenizer(cue_corpus.all_texts())


def _put(tq, tokenizer, rows, with_sig, rng):
    """The cue corpus rows (no padding rows: TransferQueue batches carry none) as verl writes them."""
    from verl_focal.partition.cues import signature

    rollouts = []
    for k, (uid, text, correct, _) in enumerate(rows):
        if uid == "pad":
            continue
        ids = tokenizer(text)["input_ids"]
        assert tokenizer.decode(ids) == text
        info = {"acc": float(correct), "score": float(correct)}
        if with_sig:
            info["cue_sig"] = signature(text)
        rollouts.append(Rollout(uid, ids, float(correct), info, session=k, prompt=uid, prompt_ids=[0, 1]))
    meta = put_rollouts(tq, rollouts, rng=rng)
    return meta, list(meta.keys)


def _trainer(composed_config, tokenizer, overrides):
    return v1_trainer(composed_config(overrides), tokenizer)


@pytest.mark.parametrize("estimator,with_sig", [("cue_grpo", True), ("f_cue_grpo", False)])
def test_cue_estimators_through_v1_hook(transfer_queue, composed_config, tokenizer, estimator, with_sig):
    rows = [r for r in cue_corpus.batch_rows() if r[0] != "pad"]
    meta, keys = _put(transfer_queue, tokenizer, rows, with_sig, np.random.default_rng(0))
    overrides = [f"algorithm.adv_estimator={estimator}", "algorithm.focal.gamma=0.5"]
    trainer = _trainer(composed_config, tokenizer, overrides)
    metrics: dict = {}
    trainer._compute_advantage(meta, metrics)
    got = transfer_queue.kv_batch_get(keys=meta.keys, partition_id="train", select_fields=["advantages"])
    adv = np.array([t[0].item() for t in got["advantages"].unbind()])
    ref = cue_corpus.reference_advantages(rows, gamma=0.5 if estimator == "f_cue_grpo" else None)
    by_key = {f"{r[0]}_{k}_0": ref[k] for k, r in enumerate(rows)}
    np.testing.assert_allclose(adv, [by_key[k] for k in meta.keys], atol=1e-5)
    n = len(cue_corpus.PROBLEMS)
    assert metrics["cue/groups_from_signatures" if with_sig else "cue/groups_from_text"] == n
    assert metrics["cue/frac_groups_multi_cluster"] == 1.0
    assert "cue/credit_size_slope" in metrics and "verl_focal/prepare_s" in metrics
