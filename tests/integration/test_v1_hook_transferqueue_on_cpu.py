"""The v1 trainer's real ``_compute_advantage`` through our hook, with a real TransferQueue.

Rows are written to TransferQueue exactly as verl's agent loop writes them
(``AgentLoopOutput.as_dict`` -> ``list_of_dict_to_tensordict`` ->
``kv_batch_put`` with keys ``{uid}_{session}_{index}``); the reward extras sit
in ``extra_fields["reward_extra_info"]``.  Nothing is faked: only the trainer's
GPU-bound ``__init__`` (resource pools, workers) is skipped by building the
object with ``__new__`` and setting the two attributes ``_compute_advantage``
reads (``config``, ``tokenizer``).
"""

from __future__ import annotations

import numpy as np
import pytest
import verl  # noqa: F401

from _reference import reference_advantages


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<pad>", "<eos>", "case", "one", "two", "count", "complement", "answer", "is", "7", "9", "so"]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>")


def _put_rollouts(tq, tokenizer, partition, groups, rng):
    """groups: {uid: [(response_text, reward, acc), ...]}; returns KVBatchMeta."""
    from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics, AgentLoopOutput
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    keys, fields = [], []
    for uid, rows in groups.items():
        for session, (text, reward, acc) in enumerate(rows):
            ids = tokenizer(text)["input_ids"]
            out = AgentLoopOutput(
                prompt_ids=[2, 3],
                response_ids=ids,
                response_mask=[1] * len(ids),
                reward_score=float(reward),
                num_turns=2,
                metrics=AgentLoopMetrics(),
                extra_fields={"reward_extra_info": {"acc": float(acc), "score": float(reward)}},
            )
            field = out.as_dict()
            field.update({"uid": uid, "raw_prompt": [{"role": "user", "content": f"problem {uid}"}]})
            keys.append(f"{uid}_{session}_0")
            fields.append(field)
    order = rng.permutation(len(keys))  # TransferQueue batches need not be grouped
    keys = [keys[i] for i in order]
    fields = [fields[i] for i in order]
    return tq.kv_batch_put(keys=keys, partition_id=partition, fields=list_of_dict_to_tensordict(fields))


def _trainer(composed_config, tokenizer, overrides):
    from verl_focal.integration.trainer import hooked_trainer_cls

    cfg = composed_config(overrides)
    trainer = object.__new__(hooked_trainer_cls("sync"))
    trainer.config = cfg
    trainer.tokenizer = tokenizer
    return trainer


def test_f_grpo_through_v1_compute_advantage(transfer_queue, composed_config, tokenizer):
    rng = np.random.default_rng(0)
    # shaped rewards: the correct answer in group g0 row 1 scores 0.2 (overlong penalty), acc says correct
    groups = {
        "g0": [("answer is 7", 1.0, 1), ("so answer is 7", 0.2, 1), ("answer is 9", -1.0, 0), ("count", -1.0, 0)],
        "g1": [("case one", -1.0, 0), ("case two", -1.0, 0), ("answer is 7", 1.0, 1)],
        "g2": [("answer is 9", -1.0, 0)],  # singleton group
        "g3": [("answer is 7", 1.0, 1), ("answer is 7", 1.0, 1)],  # all correct
    }
    meta = _put_rollouts(transfer_queue, tokenizer, "train", groups, rng)
    trainer = _trainer(composed_config, tokenizer, ["algorithm.adv_estimator=f_grpo", "algorithm.focal.gamma=1.0"])
    metrics: dict = {}
    trainer._compute_advantage(meta, metrics)

    got = transfer_queue.kv_batch_get(keys=meta.keys, partition_id="train", select_fields=["advantages", "uid"])
    adv = [t[0].item() for t in got["advantages"].unbind()]  # nested, one scalar broadcast per token
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
    rng = np.random.default_rng(1)
    groups = {"h0": [("answer is 7", 1.0, 1), ("answer is 9", 0.0, 0), ("count", 0.0, 0)]}
    meta = _put_rollouts(transfer_queue, tokenizer, "train", groups, rng)
    trainer = _trainer(composed_config, tokenizer, ["algorithm.adv_estimator=grpo"])
    metrics: dict = {}
    trainer._compute_advantage(meta, metrics)
    assert not any(k.startswith("focal/") for k in metrics)


def test_hook_fetches_text_for_estimators_that_need_it(transfer_queue, composed_config, tokenizer):
    """The data path later estimators use: responses decoded and problems extracted, row-aligned."""
    from verl_focal.integration.trainer import FocalHookMixin

    rng = np.random.default_rng(2)
    groups = {"t0": [("case one", 1.0, 1), ("complement count", 1.0, 1)], "t1": [("answer is 9", 0.0, 0)]}
    meta = _put_rollouts(transfer_queue, tokenizer, "train", groups, rng)
    trainer = _trainer(composed_config, tokenizer, [])
    ctx = FocalHookMixin._focal_fetch_context(trainer, meta, frozenset({"acc", "responses", "problems", "score"}))
    expected = {f"{u}_{s}_0": (u, t, a, r) for u, rows in groups.items() for s, (t, r, a) in enumerate(rows)}
    assert list(ctx.uids) == [expected[k][0] for k in meta.keys]
    assert ctx.responses == [expected[k][1] for k in meta.keys]
    assert ctx.problems == [f"problem {expected[k][0]}" for k in meta.keys]
    assert ctx.acc.tolist() == [float(expected[k][2]) for k in meta.keys]
    assert [float(x) for x in ctx.extras["score"]] == [expected[k][3] for k in meta.keys]
