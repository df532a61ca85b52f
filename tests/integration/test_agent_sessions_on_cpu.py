"""Multi-output agent sessions through the v1 trainer's real ``_compute_advantage`` and TransferQueue.

A multi-turn agent loop may return several outputs per session; verl writes each under
``{uid}_{session}_{index}`` and copies the final output's reward and reward extras onto the
earlier ones (``agent_loop_tq._agent_loop_postprocess``); the rows here are written the same way.
The documented rule (step/sessions.py, docs/methods.md §1): every estimator of ours sees
each session once, through its final output, and every output of the session gets that
session's advantage.  Checked per estimator against the same estimator on a batch of the final
outputs alone.  Only the trainer's GPU-bound ``__init__`` is skipped and its actor worker group
faked at the GPU boundary (tests/verl_harness.py); verl's old-log-prob pass and advantage step run.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import verl  # noqa: F401
from test_cue_v1_hook_on_cpu import cue_corpus, tokenizer  # noqa: F401  (fixture)

from verl_harness import ActorWorkerGroup, Rollout, put_rollouts, read_advantages, v1_trainer

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
    """The sessions' outputs as verl writes them, and each output's response log-probs (for the worker group)."""
    from verl_focal.partition.cues import signature

    rollouts, log_probs = [], {}
    for s, (uid, text, acc, n_out, lp) in enumerate(sessions):
        info = {"acc": acc, "score": acc, "cue_sig": signature(text)}  # the final output's extras, on every output
        texts = ([EARLIER] * (n_out - 1) if multi else []) + [text]
        for i, t in enumerate(texts):
            r = Rollout(uid, tok(t)["input_ids"], acc, info, session=s + offset, index=i, prompt=uid,
                        prompt_ids=[0, 1])
            final = i == len(texts) - 1
            log_probs[r.key] = [lp[0] if final else -3.0] * len(r.response_ids)
            rollouts.append(r)
    return put_rollouts(tq, rollouts, rng=rng), log_probs


def _advantages(tq, trainer, meta_and_lp):
    """One step as verl's trainer runs it: the old-log-prob pass (the step seam's prefetch starts there for each
    of our estimators: the TransferQueue read of the small columns over every output, and for the cue estimators
    the decoding), then the advantage step."""
    meta, log_probs = meta_and_lp
    trainer.actor_rollout_wg = ActorWorkerGroup(tq, log_probs)
    metrics: dict = {}
    trainer._compute_old_log_prob(meta, metrics)
    trainer._compute_advantage(meta, metrics)
    return read_advantages(tq, meta), metrics


@pytest.mark.parametrize("estimator,extra", [
    ("f_grpo", ["algorithm.focal.gamma=0.5"]),
    ("cue_grpo", ["algorithm.cue.source=text"]),
    ("f_cue_grpo", ["algorithm.focal.gamma=0.5"]),
    ("passk_grpo", ["algorithm.passk.k=2"]),
    ("unlikely_grpo", ["algorithm.unlikely.beta=0.5"]),
    ("maxrl", []),
    ("ds_grpo", ["algorithm.ds_grpo.correct_coef=0.2"]),
])
def test_each_session_counts_once_and_all_its_outputs_get_its_advantage(
    transfer_queue, composed_config, tokenizer, estimator, extra  # noqa: F811
):
    config = composed_config([f"algorithm.adv_estimator={estimator}",
                              "actor_rollout_ref.rollout.calculate_log_probs=false", *extra])
    trainer = v1_trainer(config, tokenizer)
    sessions = _sessions()
    assert any(s[3] > 1 for s in sessions) and any(s[3] == 1 for s in sessions)
    # the background partition covers every output; the final-output rule must partition the finals again
    multi, metrics = _advantages(transfer_queue, trainer, _put(transfer_queue, tokenizer, sessions, True, 0,
                                                               np.random.default_rng(1)))
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
