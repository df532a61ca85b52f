"""Overlap: the v1 hook starts the judge's requests before the old-log-prob pass.

A real TransferQueue holds the step's rollouts (written as verl's agent loop writes
them); the hooked trainer's ``_focal_prefetch`` (what ``_compute_old_log_prob`` calls
before verl's own, GPU-bound, log-prob pass) fires the judge requests; the advantage
computation then joins them instead of starting its own.  The judge is the scripted
loopback server of conftest.py, answering after a delay that stands in for the old-log-prob
time.
"""

from __future__ import annotations

import pytest
from test_judge_hook_on_cpu import GOOD, JUDGE_CLUSTERS, ROWS, expected_advantages, judge_overrides, tokenizer


def _put(tq, tok):
    from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics, AgentLoopOutput
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    keys, fields = [], []
    for i, (uid, text, correct) in enumerate(ROWS):
        ids = tok(text, add_special_tokens=False)["input_ids"]
        out = AgentLoopOutput(
            prompt_ids=[2], response_ids=ids, response_mask=[1] * len(ids), reward_score=float(correct),
            num_turns=2, metrics=AgentLoopMetrics(),
            extra_fields={"reward_extra_info": {"acc": float(correct)}},
        )
        field = out.as_dict()
        field.update({"uid": uid, "raw_prompt": [{"role": "user", "content": f"Solve x^2-3x+2=0. [[pf_{uid}]]"}]})
        keys.append(f"{uid}_{i}_0")
        fields.append(field)
    return tq.kv_batch_put(keys=keys, partition_id="train", fields=list_of_dict_to_tensordict(fields))


def test_prefetched_judge_requests_are_joined_at_advantage_time(transfer_queue, composed_config, judge_server):
    import verl_focal.partition.judge  # noqa: F401  (registers the partitioner)
    from verl_focal.integration.trainer import hooked_trainer_cls

    for u in GOOD:  # each request is held at the server until the "old-log-prob pass" is over
        judge_server.script(f"pf_{u}", ("gate", "pass_over", ("json", GOOD[u])))
    tok = tokenizer()
    meta = _put(transfer_queue, tok)
    trainer = object.__new__(hooked_trainer_cls("sync"))
    trainer.tokenizer = tok
    trainer.config = composed_config(judge_overrides(judge_server.base_url))
    trainer._focal_prefetch(meta)  # what _compute_old_log_prob does before verl's log-prob pass
    # it returned while every request is still held at the server: it did not wait for the judge
    assert judge_server.wait_until(lambda j: j.inflight == len(GOOD))
    judge_server.open_gate("pass_over")  # the old-log-prob pass ends
    assert judge_server.wait_until(lambda j: j.inflight == 0)
    metrics: dict = {}
    trainer._compute_advantage(meta, metrics)
    # one request per group, made by the prefetch; the advantage step joined them or found them cached
    assert sum(len(judge_server.requests_for(f"pf_{u}")) for u in GOOD) == len(GOOD)
    assert metrics["verl_focal/prefetched"] == 1.0
    assert metrics["judge/fallback_rate"] == 0.0
    assert metrics["judge/cache_hit_rate"] + metrics["judge/inflight_joins"] / len(GOOD) >= 1.0 - 1e-9
    got = transfer_queue.kv_batch_get(keys=meta.keys, partition_id="train", select_fields=["advantages"])
    adv = [t[0].item() for t in got["advantages"].unbind()]
    assert adv == pytest.approx(expected_advantages(JUDGE_CLUSTERS), abs=1e-5)


def test_judge_requests_start_when_a_group_finishes_generating(transfer_queue, composed_config, judge_server):
    """Reward time: verl's replay buffer polls TransferQueue for prompts that finished generating (their
    rewards are computed before their rows are written); after each poll the hook sends the new groups'
    requests, while other groups are still generating.  The batch later reaches the advantage step in
    another order (verl's _balance_batch reorders it): the judge sees each group in session order, so the
    pass-start prefetch and the advantage step make no second request."""
    from verl.trainer.ppo.v1.trainer_base import ReplayBuffer
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    import verl_focal.partition.judge  # noqa: F401  (registers the partitioner)
    from verl_focal.integration.trainer import hooked_trainer_cls

    uid_of = {"g0": "rt0", "g1": "rt1"}
    for u in GOOD:
        judge_server.script(f"rt_{uid_of[u]}", ("json", GOOD[u]))
    tok = tokenizer()
    trainer = object.__new__(hooked_trainer_cls("sync"))
    trainer.tokenizer = tok
    trainer.trainer_mode = "sync"
    trainer.config = composed_config(judge_overrides(judge_server.base_url))
    buffer = trainer._build_replay_buffer()  # verl's own, through the hook
    assert type(buffer) is ReplayBuffer

    def generate(group: str) -> list[str]:
        """The agent loop's writes for one finished prompt: its rows, then the prompt's status."""
        from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics, AgentLoopOutput

        uid, keys, fields = uid_of[group], [], []
        for i, (g, text, correct) in enumerate(ROWS):
            if g != group:
                continue
            ids = tok(text, add_special_tokens=False)["input_ids"]
            field = AgentLoopOutput(
                prompt_ids=[2], response_ids=ids, response_mask=[1] * len(ids), reward_score=float(correct),
                num_turns=2, metrics=AgentLoopMetrics(), extra_fields={"reward_extra_info": {"acc": float(correct)}},
            ).as_dict()
            field.update({"uid": uid, "raw_prompt": [{"role": "user", "content": f"Solve x^2-3x+2=0. [[rt_{uid}]]"}]})
            keys.append(f"{uid}_{i}_0")
            fields.append(field)
        transfer_queue.kv_batch_put(keys=keys, partition_id="train", fields=list_of_dict_to_tensordict(fields),
                                    tags=[{"status": "success"}] * len(keys))
        transfer_queue.kv_batch_put(keys=[uid], partition_id="train",
                                    tags=[{"is_prompt": True, "status": "finished", "global_steps": 0}])
        return keys

    transfer_queue.kv_batch_put(keys=[uid_of["g1"]], partition_id="train",
                                tags=[{"is_prompt": True, "status": "running", "global_steps": 0}])
    keys = generate("g0")
    buffer._sync_metadata_from_transfer_queue()  # verl's poll: g0 has finished, g1 is still generating
    assert judge_server.wait_until(lambda j: len(j.requests_for("rt_rt0")) == 1)
    assert judge_server.requests_for("rt_rt1") == []
    keys += generate("g1")
    buffer._sync_metadata_from_transfer_queue()
    assert judge_server.wait_until(lambda j: len(j.requests_for("rt_rt1")) == 1)
    buffer._sync_metadata_from_transfer_queue()  # nothing new finished: nothing sent again

    from transfer_queue.metadata import KVBatchMeta

    order = [5, 2, 0, 6, 3, 1, 4]  # the balanced batch's order
    meta = KVBatchMeta(keys=[keys[i] for i in order], tags=[{} for _ in order], partition_id="train")
    trainer._focal_prefetch(meta)  # what _compute_old_log_prob does first
    metrics: dict = {}
    trainer._compute_advantage(meta, metrics)
    assert [len(judge_server.requests_for(f"rt_{u}")) for u in uid_of.values()] == [1, 1]
    assert metrics["judge/fallback_rate"] == 0.0
    assert metrics["verl_focal/reward_time_groups"] == 2.0
    got = transfer_queue.kv_batch_get(keys=meta.keys, partition_id="train", select_fields=["advantages"])
    adv = [t[0].item() for t in got["advantages"].unbind()]
    assert adv == pytest.approx([expected_advantages(JUDGE_CLUSTERS)[i] for i in order], abs=1e-5)
    transfer_queue.kv_clear(keys=list(uid_of.values()), partition_id="train")  # as verl's sampling does
