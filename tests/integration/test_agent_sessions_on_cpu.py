"""Multi-output agent sessions through the v1 trainer's real ``_compute_advantage`` and TransferQueue.

A multi-turn agent loop may return several outputs per session; verl writes each under
``{uid}_{session}_{index}`` and copies the final output's reward and reward extras onto the
earlier ones (``agent_loop_tq._agent_loop_postprocess``); the rows here are written the same way.
The documented rule (integration/sessions.py, docs/methods.md §1): every estimator of ours sees
each session once, through its final output, and every output of the session gets that
session's advantage.  Checked per estimator against the same estimator on a batch of the final
outputs alone.  Only the trainer's GPU-bound ``__init__`` is skipped (``object.__new__``).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import verl  # noqa: F401
from test_cue_v1_hook_on_cpu import cue_corpus, tokenizer  # noqa: F401  (fixture)

EARLIER = "Let me think about the first step before answering."


def _sessions():
    """(uid, final text, acc, n_outputs, final log-probs): cue-corpus finals; some sessions have 2-3 outputs."""
    rows = [r for r in cue_corpus.batch_rows() if r[0] != "pad"]
    out = []
    for k, (uid, text, correct, _) in enumerate(rows):
        n_out = 1 + (k % 3)  # 1, 2 or 3 outputs
        lp = [-0.1 * (1 + (k * 7) % 5)] * 3
        out.append((uid, text, float(correct), n_out, lp))
    return out


def _put(tq, tok, sessions, multi: bool, offset: int, rng):
    from tensordict import TensorDict
    from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics, AgentLoopOutput
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    from verl_focal.partition.cues import signature

    keys, fields, lps = [], [], []
    for s, (uid, text, acc, n_out, lp) in enumerate(sessions):
        info = {"acc": acc, "score": acc, "cue_sig": signature(text)}  # the final output's extras, on every output
        texts = ([EARLIER] * (n_out - 1) if multi else []) + [text]
        for i, t in enumerate(texts):
            ids = tok(t)["input_ids"]
            out = AgentLoopOutput(prompt_ids=[0, 1], response_ids=ids, response_mask=[1] * len(ids), reward_score=acc,
                                  num_turns=2 * (i + 1), metrics=AgentLoopMetrics(),
                                  extra_fields={"reward_extra_info": dict(info)})
            field = out.as_dict()
            field.update({"uid": uid, "raw_prompt": [{"role": "user", "content": uid}]})
            keys.append(f"{uid}_{s + offset}_{i}")
            fields.append(field)
            final = i == len(texts) - 1
            lps.append(torch.tensor(lp if final else [-3.0] * len(ids), dtype=torch.float32)[: len(ids)]
                       if not final else torch.full((len(ids),), lp[0]))
    order = rng.permutation(len(keys))
    keys = [keys[i] for i in order]
    meta = tq.kv_batch_put(keys=keys, partition_id="train",
                           fields=list_of_dict_to_tensordict([fields[i] for i in order]))
    nested = torch.nested.as_nested_tensor([lps[i] for i in order], layout=torch.jagged)
    tq.kv_batch_put(keys=keys, partition_id="train", fields=TensorDict({"old_log_probs": nested}, batch_size=len(keys)))
    return meta


def _advantages(tq, trainer, meta, prefetch=False):
    metrics: dict = {}
    if prefetch:  # what _compute_old_log_prob does first: the cue estimators partition in the background
        trainer._focal_prefetch(meta)
    trainer._compute_advantage(meta, metrics)
    got = tq.kv_batch_get(keys=meta.keys, partition_id="train", select_fields=["advantages"])
    return {k: t for k, t in zip(meta.keys, got["advantages"].unbind())}, metrics


@pytest.mark.parametrize("estimator,extra", [
    ("f_grpo", ["algorithm.focal.gamma=0.5"]),
    ("cue_grpo", ["algorithm.cue.source=text"]),
    ("f_cue_grpo", ["algorithm.focal.gamma=0.5"]),
    ("passk_grpo", ["algorithm.passk.k=2"]),
    ("unlikely_grpo", ["algorithm.unlikely.beta=0.5"]),
])
def test_each_session_counts_once_and_all_its_outputs_get_its_advantage(
    transfer_queue, composed_config, tokenizer, estimator, extra  # noqa: F811
):
    from verl_focal.integration.trainer import hooked_trainer_cls

    trainer = object.__new__(hooked_trainer_cls("sync"))
    trainer.config = composed_config([f"algorithm.adv_estimator={estimator}", *extra])
    trainer.tokenizer = tokenizer
    sessions = _sessions()
    assert any(s[3] > 1 for s in sessions) and any(s[3] == 1 for s in sessions)
    # the background partition covers every output; the final-output rule must partition the finals again
    multi, metrics = _advantages(transfer_queue, trainer, _put(transfer_queue, tokenizer, sessions, True, 0,
                                                               np.random.default_rng(1)), prefetch=True)
    single, _ = _advantages(transfer_queue, trainer, _put(transfer_queue, tokenizer, sessions, False, 1000,
                                                          np.random.default_rng(2)))
    for s, (uid, _text, _acc, n_out, _lp) in enumerate(sessions):
        want = single[f"{uid}_{s + 1000}_0"][0].item()
        for i in range(n_out):
            got = multi[f"{uid}_{s}_{i}"]
            assert torch.allclose(got, torch.full_like(got, want), atol=1e-5), (estimator, uid, s, i)
    assert metrics["verl_focal/sessions"] == len(sessions)
    assert metrics["verl_focal/session_outputs"] == sum(s[3] for s in sessions)
    # the rule matters here: with every output counted, some group's advantages would differ
    assert any(abs(single[f"{u}_{s + 1000}_0"][0].item()) > 1e-6 for s, (u, *_r) in enumerate(sessions))
