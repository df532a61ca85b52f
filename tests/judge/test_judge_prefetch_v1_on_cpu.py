"""Overlap: the v1 hook starts the judge's requests before the old-log-prob pass.

A real TransferQueue holds the step's rollouts (written as verl's agent loop writes them); the
hooked trainer's ``_compute_old_log_prob`` starts the prefetch, which fires the judge requests,
then runs verl's own pass (its worker group faked at the GPU boundary, tests/verl_harness.py); the
advantage step joins the requests instead of starting its own.  The judge is the scripted loopback
server of conftest.py, holding every request until the test says the pass is over.
"""

from __future__ import annotations

import pytest
from test_judge_hook_on_cpu import GOOD, JUDGE_CLUSTERS, ROWS, expected_advantages, judge_overrides, tokenizer

from verl_harness import ActorWorkerGroup, Rollout, first_token_advantages, put_rollouts, v1_trainer


def _put(tq, tok):
    return put_rollouts(tq, [Rollout(uid, tok(text, add_special_tokens=False)["input_ids"], float(correct),
                                     {"acc": float(correct)}, session=i, prompt=f"Solve x^2-3x+2=0. [[pf_{uid}]]",
                                     prompt_ids=[2])
                             for i, (uid, text, correct) in enumerate(ROWS)])


def test_prefetched_judge_requests_are_joined_at_advantage_time(transfer_queue, composed_config, judge_server):
    import verl_focal.partition.judge  # noqa: F401  (registers the partitioner)

    for u in GOOD:  # each request is held at the server until the "old-log-prob pass" is over
        judge_server.script(f"pf_{u}", ("gate", "pass_over", ("json", GOOD[u])))
    tok = tokenizer()
    meta = _put(transfer_queue, tok)
    config = composed_config([*judge_overrides(judge_server.base_url),
                              "actor_rollout_ref.rollout.calculate_log_probs=false"])
    trainer = v1_trainer(config, tok, ActorWorkerGroup(transfer_queue))
    metrics: dict = {}
    trainer._compute_old_log_prob(meta, metrics)
    # verl's pass returned while every request is still held at the server: it did not wait for the judge
    assert judge_server.wait_until(lambda j: j.inflight == len(GOOD))
    judge_server.open_gate("pass_over")  # the passes that follow end
    trainer._compute_advantage(meta, metrics)
    # one request per group, made by the prefetch; the advantage step joined them or found them cached
    assert sum(len(judge_server.requests_for(f"pf_{u}")) for u in GOOD) == len(GOOD)
    assert metrics["verl_focal/prefetched"] == 1.0
    assert metrics["judge/fallback_rate"] == 0.0
    assert metrics["judge/cache_hit_rate"] + metrics["judge/inflight_joins"] / len(GOOD) >= 1.0 - 1e-9
    assert first_token_advantages(transfer_queue, meta) == pytest.approx(expected_advantages(JUDGE_CLUSTERS), abs=1e-5)
