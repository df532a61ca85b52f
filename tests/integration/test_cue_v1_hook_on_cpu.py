"""cue_grpo / f_cue_grpo through the v1 trainer's real ``_compute_advantage`` and our hook,
with a real TransferQueue (the same setup as test_v1_hook_transferqueue_on_cpu.py).

Rollouts are the cue test corpus, tokenised with a small byte-level BPE (exact round
trip), written as verl's agent loop writes them; the reward extras carry ``acc`` and,
in one test, the ``cue_sig`` that ``verl_focal.reward.compute_score`` would add.
Only the trainer's GPU-bound ``__init__`` is skipped (object built with ``__new__``).
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import verl  # noqa: F401

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "partition"))
import cue_corpus  # noqa: E402


@pytest.fixture(scope="module")
def tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(cue_corpus.all_texts(), trainers.BpeTrainer(
        vocab_size=600, special_tokens=["<pad>", "<eos>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>")


def _put(tq, tokenizer, rows, with_sig, rng):
    from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics, AgentLoopOutput
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    from verl_focal.partition.cues import signature

    keys, fields = [], []
    for k, (uid, text, correct, _) in enumerate(rows):
        if uid == "pad":
            continue  # TransferQueue batches carry no padding rows
        ids = tokenizer(text)["input_ids"]
        assert tokenizer.decode(ids) == text
        info = {"acc": float(correct), "score": float(correct)}
        if with_sig:
            info["cue_sig"] = signature(text)
        out = AgentLoopOutput(prompt_ids=[0, 1], response_ids=ids, response_mask=[1] * len(ids),
                              reward_score=float(correct), num_turns=2, metrics=AgentLoopMetrics(),
                              extra_fields={"reward_extra_info": info})
        field = out.as_dict()
        field.update({"uid": uid, "raw_prompt": [{"role": "user", "content": uid}]})
        keys.append(f"{uid}_{k}_0")
        fields.append(field)
    order = rng.permutation(len(keys))
    keys = [keys[i] for i in order]
    return tq.kv_batch_put(keys=keys, partition_id="train",
                           fields=list_of_dict_to_tensordict([fields[i] for i in order])), keys


def _trainer(composed_config, tokenizer, overrides):
    from verl_focal.integration.trainer import hooked_trainer_cls

    trainer = object.__new__(hooked_trainer_cls("sync"))
    trainer.config = composed_config(overrides)
    trainer.tokenizer = tokenizer
    return trainer


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
