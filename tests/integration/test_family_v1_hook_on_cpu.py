"""passk_grpo / unlikely_grpo / maxrl / ds_grpo through the v1 trainer's real passes and a real TransferQueue.

Rollouts are written as verl's agent loop writes them; verl's own ``_compute_old_log_prob`` then
writes ``old_log_probs`` (the actor worker group is faked at the GPU boundary,
tests/verl_harness.py), or, in bypass mode, copies the rollout's.  verl's ``_compute_advantage``
reads them into the DataProto it hands ``compute_advantage``, where the hook reduces them: the hook
itself reads only the reward extras from TransferQueue.
"""

from __future__ import annotations

import numpy as np
import pytest
import verl  # noqa: F401

from _reference_family import (
    ds_grpo_rows_reference,
    maxrl_rows_reference,
    passk_rows_reference,
    unlikely_rows_reference,
)
from verl_harness import ActorWorkerGroup, Rollout, first_token_advantages, put_rollouts, v1_trainer

GROUPS = {
    # uid: (n_tokens, reward, acc, token log-probs); in g0, rows 0 and 3 swap ranks between sum and mean
    "g0": [(6, 1.0, 1, [-0.1] * 6), (2, 1.0, 1, [-2.0, -1.5]), (4, 0.0, 0, [-0.5] * 4), (2, 1.0, 1, [-0.25, -0.25])],
    "g1": [(2, 0.0, 0, [-1.0, -1.0]), (3, 1.0, 1, [-0.2, -0.4, -0.1]), (2, 1.0, 1, [-0.05, -0.05])],
    "g2": [(1, 1.0, 1, [-0.7])],  # singleton
}

# multi-turn rows: (response mask, reward, acc, the rollout's token log-probs); a tool-response token (mask 0)
# carries a log-prob of -5 that must not count: with it, b0's first row would rank below its second
BYPASS_GROUPS = {
    "b0": [([1, 1, 0, 0, 1], 1.0, 1, [-0.1, -0.1, -5.0, -5.0, -0.1]), ([1, 1, 1], 1.0, 1, [-0.2, -0.2, -0.2]),
           ([1, 1], 1.0, 1, [-0.5, -0.4]), ([1, 1, 1, 1], 0.0, 0, [-0.3] * 4)],
    "b1": [([1, 0, 1], 1.0, 1, [-0.6, -5.0, -0.6]), ([1], 0.0, 0, [-1.0]), ([1, 1], 1.0, 1, [-0.05, -0.1])],
}


def _spy_on_reads(monkeypatch) -> list[tuple]:
    """The ``select_fields`` of every TransferQueue read from now on (verl's and the hook's)."""
    import transfer_queue as tq

    reads: list[tuple] = []
    real_get = tq.kv_batch_get

    def spy(*args, **kwargs):
        reads.append(tuple(kwargs.get("select_fields") or ()))
        return real_get(*args, **kwargs)

    monkeypatch.setattr(tq, "kv_batch_get", spy)
    return reads


def _hook_reads(reads: list[tuple]) -> list[tuple]:
    """The reads that are not verl's own (verl's pass reads log_probs / rollout_log_probs, its advantage step
    rm_scores, the fake worker group prompts)."""
    verls = {"log_probs", "rollout_log_probs", "rm_scores", "prompts"}
    return [r for r in reads if not verls & set(r)]


def _put(tq, rng):
    rollouts = [Rollout(u, list(range(4, 4 + n)), reward, {"acc": float(acc)}, session=s)
                for u, rows in GROUPS.items() for s, (n, reward, acc, _) in enumerate(rows)]
    return put_rollouts(tq, rollouts, rng=rng)


def _expected_rows(meta):
    lookup = {f"{u}_{s}_0": (u,) + row for u, rows in GROUPS.items() for s, row in enumerate(rows)}
    return [lookup[k] for k in meta.keys]


@pytest.mark.parametrize("likelihood", ["sum", "mean"])
def test_unlikely_grpo_ranks_by_the_old_log_probs_of_verls_pass(transfer_queue, composed_config, monkeypatch,
                                                                likelihood):
    """verl's real ``_compute_old_log_prob`` writes old_log_probs; the hook reduces them from the DataProto
    verl's ``_compute_advantage`` builds, and reads nothing of them itself."""
    meta = _put(transfer_queue, np.random.default_rng(0))
    worker = ActorWorkerGroup(transfer_queue, {f"{u}_{s}_0": row[3] for u, rows in GROUPS.items()
                                                for s, row in enumerate(rows)})
    config = composed_config(["algorithm.adv_estimator=unlikely_grpo", "algorithm.unlikely.beta=0.5",
                              f"algorithm.unlikely.likelihood={likelihood}",
                              "actor_rollout_ref.rollout.calculate_log_probs=false"])
    trainer = v1_trainer(config, worker=worker)
    reads = _spy_on_reads(monkeypatch)
    metrics: dict = {}
    trainer._compute_old_log_prob(meta, metrics)
    assert worker.calls == 1 and "actor/entropy" in metrics  # verl's own pass ran
    trainer._compute_advantage(meta, metrics)
    assert _hook_reads(reads) == [("uid", "extra_fields")], reads  # one read: the reward extras
    rows = _expected_rows(meta)
    loglik = [sum(r[4]) / (len(r[4]) if likelihood == "mean" else 1) for r in rows]
    ref = unlikely_rows_reference([r[2] for r in rows], [r[3] for r in rows], loglik,
                                  np.array([r[0] for r in rows], dtype=object), [1] * len(rows), 0.5)
    assert first_token_advantages(transfer_queue, meta) == pytest.approx(ref, abs=1e-5)
    assert metrics["unlikely/correct_rows"] == 6.0
    assert metrics["verl_focal/old_log_prob_rows_frac"] == 1.0 and metrics["verl_focal/acc_rows_frac"] == 1.0


def test_passk_grpo_through_v1_compute_advantage(transfer_queue, composed_config):
    meta = put_rollouts(transfer_queue, [Rollout(u, list(range(4, 4 + n)), reward, {"acc": float(acc)}, session=s)
                                         for u, rows in GROUPS.items() if u != "g2"
                                         for s, (n, reward, acc, _) in enumerate(rows)],
                        rng=np.random.default_rng(1))
    trainer = v1_trainer(composed_config(["algorithm.adv_estimator=passk_grpo", "algorithm.passk.k=2"]))
    metrics: dict = {}
    trainer._compute_advantage(meta, metrics)
    rows = _expected_rows(meta)
    ref = passk_rows_reference([r[3] for r in rows], np.array([r[0] for r in rows], dtype=object), [1] * len(rows), 2)
    assert first_token_advantages(transfer_queue, meta) == pytest.approx(ref, abs=1e-5)
    assert metrics["passk/groups"] == 2.0


@pytest.mark.parametrize("likelihood", ["sum", "mean"])
def test_unlikely_grpo_in_bypass_mode_ranks_by_the_rollouts_log_probs(transfer_queue, composed_config, monkeypatch,
                                                                      likelihood):
    """verl's bypass mode copies the rollout's log-probs into old_log_probs (no worker pass); the hook reduces
    them under the response mask (tool-response tokens out) from the DataProto, reading nothing of them."""
    rollouts = [Rollout(u, list(range(4, 4 + len(mask))), reward, {"acc": float(acc)}, session=s,
                        response_mask=mask, rollout_log_probs=lp)
                for u, rows in BYPASS_GROUPS.items() for s, (mask, reward, acc, lp) in enumerate(rows)]
    meta = put_rollouts(transfer_queue, rollouts, rng=np.random.default_rng(4))
    config = composed_config(["algorithm.adv_estimator=unlikely_grpo", "algorithm.unlikely.beta=0.5",
                              f"algorithm.unlikely.likelihood={likelihood}",
                              "actor_rollout_ref.rollout.calculate_log_probs=true",
                              "algorithm.rollout_correction.bypass_mode=true"])
    trainer = v1_trainer(config)  # bypass mode calls no worker group
    reads = _spy_on_reads(monkeypatch)
    metrics: dict = {}
    trainer._compute_old_log_prob(meta, metrics)
    assert ("rollout_log_probs",) in reads and "actor/entropy" not in metrics  # verl's bypass branch ran
    trainer._compute_advantage(meta, metrics)
    assert _hook_reads(reads) == [("uid", "extra_fields")], reads
    lookup = {f"{u}_{s}_0": (u,) + row for u, rows in BYPASS_GROUPS.items() for s, row in enumerate(rows)}
    rows = [lookup[k] for k in meta.keys]
    loglik = []
    for _, mask, _, _, lp in rows:
        kept = [x for x, m in zip(lp, mask) if m]
        loglik.append(sum(kept) / (len(kept) if likelihood == "mean" else 1))
    ref = unlikely_rows_reference([r[2] for r in rows], [r[3] for r in rows], loglik,
                                  np.array([r[0] for r in rows], dtype=object), [1] * len(rows), 0.5)
    assert first_token_advantages(transfer_queue, meta) == pytest.approx(ref, abs=1e-5)
    assert len(set(np.round(ref, 6))) > 2  # the ranks changed the advantages (not plain GRPO)


def test_ds_grpo_smooths_by_the_old_log_probs_of_verls_pass(transfer_queue, composed_config, monkeypatch):
    """As unlikely_grpo: verl's own old-log-prob pass, the hook reduces them from verl's DataProto."""
    meta = _put(transfer_queue, np.random.default_rng(2))
    worker = ActorWorkerGroup(transfer_queue, {f"{u}_{s}_0": row[3] for u, rows in GROUPS.items()
                                                for s, row in enumerate(rows)})
    config = composed_config(["algorithm.adv_estimator=ds_grpo", "algorithm.ds_grpo.correct_coef=0.2",
                              "algorithm.ds_grpo.incorrect_coef=0.1",
                              "actor_rollout_ref.rollout.calculate_log_probs=false"])
    trainer = v1_trainer(config, worker=worker)
    reads = _spy_on_reads(monkeypatch)
    metrics: dict = {}
    trainer._compute_old_log_prob(meta, metrics)
    assert worker.calls == 1
    trainer._compute_advantage(meta, metrics)
    assert _hook_reads(reads) == [("uid", "extra_fields")], reads
    rows = _expected_rows(meta)
    ref = ds_grpo_rows_reference([r[2] for r in rows], [r[3] for r in rows], [r[4] for r in rows],
                                 [[1] * len(r[4]) for r in rows], np.array([r[0] for r in rows], dtype=object),
                                 [1] * len(rows), 0.2, 0.1)
    assert first_token_advantages(transfer_queue, meta) == pytest.approx(ref, abs=1e-5)
    assert metrics["ds_grpo/singleton_groups"] == 1.0 and metrics["verl_focal/old_log_prob_rows_frac"] == 1.0


def test_ds_grpo_in_bypass_mode_smooths_by_the_rollouts_log_probs(transfer_queue, composed_config, monkeypatch):
    """Bypass mode: the rollout's log-probs, under the response mask (tool-response tokens out)."""
    rollouts = [Rollout(u, list(range(4, 4 + len(mask))), reward, {"acc": float(acc)}, session=s,
                        response_mask=mask, rollout_log_probs=lp)
                for u, rows in BYPASS_GROUPS.items() for s, (mask, reward, acc, lp) in enumerate(rows)]
    meta = put_rollouts(transfer_queue, rollouts, rng=np.random.default_rng(5))
    config = composed_config(["algorithm.adv_estimator=ds_grpo", "algorithm.ds_grpo.correct_coef=0.3",
                              "actor_rollout_ref.rollout.calculate_log_probs=true",
                              "algorithm.rollout_correction.bypass_mode=true"])
    trainer = v1_trainer(config)
    reads = _spy_on_reads(monkeypatch)
    metrics: dict = {}
    trainer._compute_old_log_prob(meta, metrics)
    assert ("rollout_log_probs",) in reads and "actor/entropy" not in metrics
    trainer._compute_advantage(meta, metrics)
    lookup = {f"{u}_{s}_0": (u,) + row for u, rows in BYPASS_GROUPS.items() for s, row in enumerate(rows)}
    rows = [lookup[k] for k in meta.keys]
    ref = ds_grpo_rows_reference([r[2] for r in rows], [r[3] for r in rows], [r[4] for r in rows],
                                 [r[1] for r in rows], np.array([r[0] for r in rows], dtype=object),
                                 [1] * len(rows), 0.3, 0.05)
    assert first_token_advantages(transfer_queue, meta) == pytest.approx(ref, abs=1e-5)


def test_maxrl_through_v1_compute_advantage(transfer_queue, composed_config):
    meta = _put(transfer_queue, np.random.default_rng(3))
    trainer = v1_trainer(composed_config(["algorithm.adv_estimator=maxrl"]))
    metrics: dict = {}
    trainer._compute_advantage(meta, metrics)
    rows = _expected_rows(meta)
    ref = maxrl_rows_reference([r[3] for r in rows], np.array([r[0] for r in rows], dtype=object), [1] * len(rows))
    assert first_token_advantages(transfer_queue, meta) == pytest.approx(ref, abs=1e-5)
    assert metrics["maxrl/singleton_groups"] == 1.0 and metrics["maxrl/groups"] == 3.0
