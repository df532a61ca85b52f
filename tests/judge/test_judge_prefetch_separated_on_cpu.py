"""Overlap in the separated trainers: the judge's requests leave at ``_fit_compute_log_prob``.

verl's one-step-off trainer (the fully-async one inherits the same methods) extracts the rewards,
then runs ``_fit_compute_log_prob`` (the old-log-prob pass; the reference and critic passes
follow), then ``_fit_compute_advantage``.  The hook starts the cue estimator's prefetch -- here
the judge's requests -- when the log-prob step begins, and the advantage step joins them.  The
judge is conftest.py's scripted loopback server, holding every request until the test says the
pass is over.

Faked, and why: the trainer object is made without its constructor (tests/verl_harness.py, as in
tests/integration/test_separated_trainers_on_cpu.py; its constructor starts Ray worker pools),
and the old-log-prob pass is verl's bypass mode (the one-step-off default), which needs no worker.
"""

from __future__ import annotations

import pytest
import torch
from test_judge_hook_on_cpu import (
    GOOD,
    JUDGE_CLUSTERS,
    ROWS,
    batch,
    expected_advantages,
    judge_overrides,
    tokenizer,
)

from verl_harness import separated_trainer


def test_separated_trainer_sends_the_judge_requests_at_the_log_prob_pass(judge_server):
    import verl_focal.partition.judge  # noqa: F401  (registers the partitioner)
    import verl_focal.plugin  # noqa: F401  (hooks the separated trainers when their module is imported)
    from verl_focal.integration.startup.compose import compose_config

    for u in GOOD:  # each request is held at the server until the "old-log-prob pass" is over
        judge_server.script(f"sep_{u}", ("gate", "sep_pass_over", ("json", GOOD[u])))
    tok = tokenizer()
    data = batch(tok, "sep")
    rewards = data.batch.pop("token_level_rewards")
    data.batch["rollout_log_probs"] = -torch.ones_like(rewards)  # bypass mode copies these to old_log_probs
    config = compose_config(
        [*judge_overrides(judge_server.base_url), "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4"],
        trainer="one_step_off",
    )
    trainer = separated_trainer("one_step_off", config, tok, rewards, {"acc": [float(r[2]) for r in ROWS]})

    out = trainer._fit_compute_log_prob(data)
    # it returned while every request is still held at the server: it did not wait for the judge
    assert judge_server.wait_until(lambda j: j.inflight == len(GOOD))
    judge_server.open_gate("sep_pass_over")  # the passes after it end
    out = trainer._fit_compute_advantage(out)
    m = trainer.metrics
    # one request per group, made by the prefetch; the advantage step joined them or found them cached
    assert sum(len(judge_server.requests_for(f"sep_{u}")) for u in GOOD) == len(GOOD)
    assert m["verl_focal/prefetched"] == 1.0 and m["judge/fallback_rate"] == 0.0
    # a row's advantage on its last response token (the same on every response token)
    last = [out.batch["advantages"][i][out.batch["response_mask"][i].bool()][-1].item() for i in range(len(ROWS))]
    assert last == pytest.approx(expected_advantages(JUDGE_CLUSTERS), abs=1e-5)
