"""passk_grpo / unlikely_grpo through the v1 trainer's real ``_compute_advantage`` and a real TransferQueue.

Rollouts are written as verl's agent loop writes them; ``old_log_probs`` is then
written the way verl's ``_compute_old_log_prob`` does (a jagged nested tensor
over each row's response tokens, ``kv_batch_put``).  Only the trainer's
GPU-bound ``__init__`` is skipped (object built with ``__new__``).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import verl  # noqa: F401

from _reference_family import passk_rows_reference, unlikely_rows_reference


def _spy_on_reads(monkeypatch) -> list[tuple]:
    """The ``select_fields`` of every TransferQueue read the hook makes from now on (the list grows)."""
    import verl_focal.integration.trainer as hook

    reads: list[tuple] = []
    real_get = hook.tq.kv_batch_get

    def spy(*args, **kwargs):
        reads.append(tuple(kwargs.get("select_fields") or ()))
        return real_get(*args, **kwargs)

    monkeypatch.setattr(hook.tq, "kv_batch_get", spy)
    return reads

def _put(tq, partition, groups, rng, with_old_log_probs=True):
    """groups: {uid: [(n_tokens, reward, acc, [token log-probs]), ...]} -> KVBatchMeta (shuffled keys)."""
    from tensordict import TensorDict
    from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics, AgentLoopOutput
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    keys, fields, lps = [], [], []
    for uid, rows in groups.items():
        for session, (n_tok, reward, acc, lp) in enumerate(rows):
            out = AgentLoopOutput(
                prompt_ids=[2, 3],
                response_ids=list(range(4, 4 + n_tok)),
                response_mask=[1] * n_tok,
                reward_score=float(reward),
                num_turns=2,
                metrics=AgentLoopMetrics(),
                extra_fields={"reward_extra_info": {"acc": float(acc)}},
            )
            field = out.as_dict()
            field.update({"uid": uid})
            keys.append(f"{uid}_{session}_0")
            fields.append(field)
            lps.append(torch.tensor(lp, dtype=torch.float32))
    order = rng.permutation(len(keys))
    keys = [keys[i] for i in order]
    meta = tq.kv_batch_put(
        keys=keys, partition_id=partition, fields=list_of_dict_to_tensordict([fields[i] for i in order])
    )
    if with_old_log_probs:
        nested = torch.nested.as_nested_tensor([lps[i] for i in order], layout=torch.jagged)
        tq.kv_batch_put(
            keys=keys, partition_id=partition, fields=TensorDict({"old_log_probs": nested}, batch_size=len(keys))
        )
    return meta


def _trainer(composed_config, overrides):
    from verl_focal.integration.trainer import hooked_trainer_cls

    trainer = object.__new__(hooked_trainer_cls("sync"))
    trainer.config = composed_config(overrides)
    trainer.tokenizer = None
    return trainer


GROUPS = {
    # uid: (n_tokens, reward, acc, token log-probs); in g0, rows 0 and 3 swap ranks between sum and mean
    "g0": [(6, 1.0, 1, [-0.1] * 6), (2, 1.0, 1, [-2.0, -1.5]), (4, 0.0, 0, [-0.5] * 4), (2, 1.0, 1, [-0.25, -0.25])],
    "g1": [(2, 0.0, 0, [-1.0, -1.0]), (3, 1.0, 1, [-0.2, -0.4, -0.1]), (2, 1.0, 1, [-0.05, -0.05])],
    "g2": [(1, 1.0, 1, [-0.7])],  # singleton
}


def _expected_rows(meta):
    lookup = {f"{u}_{s}_0": (u,) + row for u, rows in GROUPS.items() for s, row in enumerate(rows)}
    return [lookup[k] for k in meta.keys]


@pytest.mark.parametrize("likelihood", ["sum", "mean"])
def test_unlikely_grpo_through_v1_compute_advantage(transfer_queue, composed_config, likelihood):
    meta = _put(transfer_queue, "train", GROUPS, np.random.default_rng(0))
    trainer = _trainer(
        composed_config,
        [
            "algorithm.adv_estimator=unlikely_grpo",
            "algorithm.unlikely.beta=0.5",
            f"algorithm.unlikely.likelihood={likelihood}",
        ],
    )
    metrics: dict = {}
    trainer._compute_advantage(meta, metrics)
    got = transfer_queue.kv_batch_get(keys=meta.keys, partition_id="train", select_fields=["advantages"])
    adv = [t[0].item() for t in got["advantages"].unbind()]
    rows = _expected_rows(meta)
    loglik = [sum(r[4]) / (len(r[4]) if likelihood == "mean" else 1) for r in rows]
    ref = unlikely_rows_reference(
        [r[2] for r in rows],
        [r[3] for r in rows],
        loglik,
        np.array([r[0] for r in rows], dtype=object),
        [1] * len(rows),
        0.5,
    )
    assert adv == pytest.approx(ref, abs=1e-5)
    assert metrics["unlikely/correct_rows"] == 6.0
    assert "verl_focal/fetch_s" in metrics


def test_passk_grpo_through_v1_compute_advantage(transfer_queue, composed_config):
    meta = _put(transfer_queue, "train", {u: r for u, r in GROUPS.items() if u != "g2"}, np.random.default_rng(1))
    trainer = _trainer(composed_config, ["algorithm.adv_estimator=passk_grpo", "algorithm.passk.k=2"])
    metrics: dict = {}
    trainer._compute_advantage(meta, metrics)
    got = transfer_queue.kv_batch_get(keys=meta.keys, partition_id="train", select_fields=["advantages"])
    adv = [t[0].item() for t in got["advantages"].unbind()]
    rows = _expected_rows(meta)
    ref = passk_rows_reference([r[3] for r in rows], np.array([r[0] for r in rows], dtype=object), [1] * len(rows), 2)
    assert adv == pytest.approx(ref, abs=1e-5)
    assert metrics["passk/groups"] == 2.0


def test_hook_fetches_per_row_sequence_log_probs_aligned_with_uids(transfer_queue, composed_config):
    from verl_focal.integration.rows import OLD_LOG_PROB_SUM, OLD_LOG_PROB_TOKENS, OLD_LOG_PROBS
    from verl_focal.integration.trainer import FocalHookMixin

    meta = _put(transfer_queue, "train", GROUPS, np.random.default_rng(2))
    trainer = _trainer(composed_config, [])
    ctx = FocalHookMixin._focal_fetch_context(trainer, meta, frozenset({"acc", OLD_LOG_PROBS}))
    rows = _expected_rows(meta)
    assert list(ctx.uids) == [r[0] for r in rows]
    assert ctx.extras[OLD_LOG_PROB_SUM].tolist() == pytest.approx([sum(r[4]) for r in rows], abs=1e-6)
    assert ctx.extras[OLD_LOG_PROB_TOKENS].tolist() == [float(r[1]) for r in rows]
    # an estimator that does not need them does not pay for them
    ctx2 = FocalHookMixin._focal_fetch_context(trainer, meta, frozenset({"acc"}))
    assert OLD_LOG_PROB_SUM not in ctx2.extras


class _ActorWorkerGroup:
    """The GPU boundary: verl's actor worker group computes log-probs over prompt + response and writes
    ``log_probs`` and ``entropy`` for the batch's keys (a response token's log-prob one position left of
    it, as ``response_from_nested`` reads them).  Here the log-probs come from GROUPS."""

    def __init__(self, tq, lookup):
        self.tq, self.lookup = tq, lookup

    def compute_log_prob(self, batch):
        from tensordict import TensorDict

        full, ent = [], []
        for key in batch.keys:
            lp = torch.tensor(self.lookup[key], dtype=torch.float32)
            full.append(torch.cat([torch.tensor([-9.0]), lp, torch.tensor([-9.0])]))  # prompt of 2 tokens
            ent.append(torch.ones(len(lp) + 2))
        fields = TensorDict({"log_probs": torch.nested.as_nested_tensor(full, layout=torch.jagged),
                             "entropy": torch.nested.as_nested_tensor(ent, layout=torch.jagged)},
                            batch_size=len(batch.keys))
        self.tq.kv_batch_put(keys=batch.keys, partition_id=batch.partition_id, fields=fields)
        return batch


@pytest.mark.parametrize("likelihood", ["sum", "mean"])
def test_unlikely_grpo_reads_no_log_probs_back_after_verls_old_log_prob_pass(
    transfer_queue, composed_config, monkeypatch, likelihood
):
    """verl's real _compute_old_log_prob runs (only the worker group is faked); the hook reduces what it
    writes to one number per row, and the advantage step reads no old_log_probs back."""

    meta = _put(transfer_queue, "train", GROUPS, np.random.default_rng(3), with_old_log_probs=False)
    lookup = {f"{u}_{s}_0": row[3] for u, rows in GROUPS.items() for s, row in enumerate(rows)}
    trainer = _trainer(composed_config, ["algorithm.adv_estimator=unlikely_grpo", "algorithm.unlikely.beta=0.5",
                                         f"algorithm.unlikely.likelihood={likelihood}",
                                         "actor_rollout_ref.rollout.calculate_log_probs=false"])
    trainer.actor_rollout_wg = _ActorWorkerGroup(transfer_queue, lookup)
    reads = _spy_on_reads(monkeypatch)
    metrics: dict = {}
    trainer._compute_old_log_prob(meta, metrics)  # verl's pass, with the tap
    assert "actor/entropy" in metrics  # verl's own body ran
    trainer._compute_advantage(meta, metrics)
    # verl's own advantage step reads old_log_probs with rm_scores for every estimator; the hook adds no read
    ours = [r for r in reads if "rm_scores" not in r]
    assert ours and not any("old_log_probs" in r for r in ours), reads
    assert metrics["verl_focal/old_log_probs_read_back"] == 0.0
    got = transfer_queue.kv_batch_get(keys=meta.keys, partition_id="train", select_fields=["advantages"])
    adv = [t[0].item() for t in got["advantages"].unbind()]
    rows = _expected_rows(meta)
    loglik = [sum(r[4]) / (len(r[4]) if likelihood == "mean" else 1) for r in rows]
    ref = unlikely_rows_reference([r[2] for r in rows], [r[3] for r in rows], loglik,
                                  np.array([r[0] for r in rows], dtype=object), [1] * len(rows), 0.5)
    assert adv == pytest.approx(ref, abs=1e-5)


# multi-turn rows: (response mask, reward, acc, the rollout's token log-probs); a tool-response token (mask 0)
# carries a log-prob of -5 that must not count: with it, g0's first row would rank below its second
BYPASS_GROUPS = {
    "b0": [([1, 1, 0, 0, 1], 1.0, 1, [-0.1, -0.1, -5.0, -5.0, -0.1]), ([1, 1, 1], 1.0, 1, [-0.2, -0.2, -0.2]),
           ([1, 1], 1.0, 1, [-0.5, -0.4]), ([1, 1, 1, 1], 0.0, 0, [-0.3] * 4)],
    "b1": [([1, 0, 1], 1.0, 1, [-0.6, -5.0, -0.6]), ([1], 0.0, 0, [-1.0]), ([1, 1], 1.0, 1, [-0.05, -0.1])],
}


def _put_rollouts_with_log_probs(tq, partition, rng, prefix=""):
    """Rows as verl's agent loop writes them when the rollout returns its log-probs
    (``response_logprobs`` -> ``rollout_log_probs``), with tool-response tokens masked out."""
    from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics, AgentLoopOutput
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    keys, fields = [], []
    for uid, rows in BYPASS_GROUPS.items():
        for session, (mask, reward, acc, lp) in enumerate(rows):
            out = AgentLoopOutput(prompt_ids=[2, 3], response_ids=list(range(4, 4 + len(mask))), response_mask=mask,
                                  response_logprobs=lp, reward_score=float(reward), num_turns=4,
                                  metrics=AgentLoopMetrics(), extra_fields={"reward_extra_info": {"acc": float(acc)}})
            field = out.as_dict()
            field.update({"uid": prefix + uid})
            keys.append(f"{prefix}{uid}_{session}_0")
            fields.append(field)
    order = rng.permutation(len(keys))
    keys = [keys[i] for i in order]
    return tq.kv_batch_put(keys=keys, partition_id=partition,
                           fields=list_of_dict_to_tensordict([fields[i] for i in order]))


def _bypass_reference(meta, likelihood, prefix=""):
    lookup = {f"{prefix}{u}_{s}_0": (u,) + row for u, rows in BYPASS_GROUPS.items() for s, row in enumerate(rows)}
    rows = [lookup[k] for k in meta.keys]
    loglik = []
    for _, mask, _, _, lp in rows:
        kept = [x for x, m in zip(lp, mask) if m]
        loglik.append(sum(kept) / (len(kept) if likelihood == "mean" else 1))
    return unlikely_rows_reference([r[2] for r in rows], [r[3] for r in rows], loglik,
                                   np.array([r[0] for r in rows], dtype=object), [1] * len(rows), 0.5)


@pytest.mark.parametrize("likelihood", ["sum", "mean"])
def test_unlikely_grpo_in_bypass_mode_reads_no_log_probs_back(transfer_queue, composed_config, monkeypatch,
                                                                likelihood):
    """verl's real _compute_old_log_prob in bypass mode copies the rollout's log-probs to old_log_probs and
    reads no response_mask; the hook's tap reduces them in a thread that reads the mask itself.  The
    advantages equal the read-back path's and the independent reference over the masked tokens."""

    meta = _put_rollouts_with_log_probs(transfer_queue, "train", np.random.default_rng(4))
    trainer = _trainer(composed_config, ["algorithm.adv_estimator=unlikely_grpo", "algorithm.unlikely.beta=0.5",
                                         f"algorithm.unlikely.likelihood={likelihood}",
                                         "actor_rollout_ref.rollout.calculate_log_probs=true",
                                         "algorithm.rollout_correction.bypass_mode=true"])
    trainer.actor_rollout_wg = None  # bypass mode calls no worker group
    reads = _spy_on_reads(monkeypatch)
    metrics: dict = {}
    trainer._compute_old_log_prob(meta, metrics)
    assert reads[0] == ("rollout_log_probs",)  # verl's bypass branch ran
    assert "actor/entropy" not in metrics  # and not its worker pass
    trainer._compute_advantage(meta, metrics)
    ours = [r for r in reads[1:] if "rm_scores" not in r]  # verl's own advantage step reads old_log_probs
    assert ("response_mask",) in ours and not any("old_log_probs" in r for r in ours), reads
    assert metrics["verl_focal/old_log_probs_read_back"] == 0.0
    assert metrics["verl_focal/old_log_probs_wait_s"] >= 0.0

    def advantages():
        got = transfer_queue.kv_batch_get(keys=meta.keys, partition_id="train", select_fields=["advantages"])
        return [t[0].item() for t in got["advantages"].unbind()]

    tapped = advantages()
    # the read-back path on the same rows (no tap): the same advantages
    trainer._focal_old_lp = None
    metrics_back: dict = {}
    trainer._compute_advantage(meta, metrics_back)
    assert metrics_back["verl_focal/old_log_probs_read_back"] == 1.0
    assert advantages() == pytest.approx(tapped, abs=1e-7)

    ref = _bypass_reference(meta, likelihood)
    assert tapped == pytest.approx(ref, abs=1e-5)
    assert len(set(np.round(ref, 6))) > 2  # the ranks changed the advantages (not plain GRPO)


def test_unlikely_grpo_in_bypass_mode_reduces_the_log_probs_as_groups_finish(transfer_queue, composed_config,
                                                                            monkeypatch):
    """Bypass mode's old log-probs are the rollout's, written with the rollout: the hook reduces them when
    verl's replay buffer sees each group finished (reward time), so the old-log-prob pass and the advantage
    step read neither the log-probs nor the mask."""
    import threading

    from verl.trainer.ppo.v1.trainer_base import ReplayBuffer

    import verl_focal.integration.trainer as hook

    meta = _put_rollouts_with_log_probs(transfer_queue, "train", np.random.default_rng(5), prefix="rt")
    finished = {"is_prompt": True, "status": "finished", "global_steps": 0}
    transfer_queue.kv_batch_put(keys=[f"rt{u}" for u in BYPASS_GROUPS], partition_id="train",
                                tags=[finished] * len(BYPASS_GROUPS))
    trainer = _trainer(composed_config, ["algorithm.adv_estimator=unlikely_grpo", "algorithm.unlikely.beta=0.5",
                                         "algorithm.unlikely.likelihood=mean",
                                         "actor_rollout_ref.rollout.calculate_log_probs=true",
                                         "algorithm.rollout_correction.bypass_mode=true"])
    trainer.trainer_mode = "sync"
    trainer.actor_rollout_wg = None
    reads = []
    real_get = hook.tq.kv_batch_get

    def spy(*args, **kwargs):
        reads.append((threading.current_thread().name, tuple(kwargs.get("select_fields") or ())))
        return real_get(*args, **kwargs)

    monkeypatch.setattr(hook.tq, "kv_batch_get", spy)
    buffer = trainer._build_replay_buffer()
    assert type(buffer) is ReplayBuffer
    buffer._sync_metadata_from_transfer_queue()  # verl's poll: both groups have finished
    metrics: dict = {}
    trainer._compute_old_log_prob(meta, metrics)
    trainer._compute_advantage(meta, metrics)
    # read once, by the reward-time worker; the pass (rollout_log_probs only) and verl's advantage step
    # (old_log_probs with rm_scores) are verl's own reads
    assert ("verl-focal-reward-time", ("rollout_log_probs", "response_mask")) in reads, reads
    ours = [f for _, f in reads if "rm_scores" not in f and f != ("rollout_log_probs",)]
    assert ours.count(("rollout_log_probs", "response_mask")) == 1
    assert ("response_mask",) not in ours and not any("old_log_probs" in f for f in ours), reads
    assert metrics["verl_focal/old_log_probs_reward_time"] == 1.0
    assert metrics["verl_focal/old_log_probs_read_back"] == 0.0
    assert metrics["verl_focal/reward_time_groups"] == len(BYPASS_GROUPS)
    got = transfer_queue.kv_batch_get(keys=meta.keys, partition_id="train", select_fields=["advantages"])
    adv = [t[0].item() for t in got["advantages"].unbind()]
    assert adv == pytest.approx(_bypass_reference(meta, "mean", prefix="rt"), abs=1e-5)
    assert trainer._focal_rt_lp == {}  # taken out by the step that used them
    # as verl's replay buffer does when it samples the groups: no later poll sees them finished
    transfer_queue.kv_clear(keys=[f"rt{u}" for u in BYPASS_GROUPS], partition_id="train")
