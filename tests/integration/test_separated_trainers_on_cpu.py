"""verl's separated trainers (one-step-off, fully-async) with our estimators, on CPU.

What runs for real: verl's ``SeparateRayPPOTrainer._fit_compute_advantage`` as
``OneStepOffRayTrainer`` and ``FullyAsyncTrainer`` inherit it (reward extras merged into the
batch, KL/rollout-correction branches, verl's ``compute_advantage`` dispatch), with the hook the
plugin installed when ``verl.experimental.separation.ray_trainer`` was imported, on a real
``DataProto`` shaped as those trainers hold it at the advantage step, and each trainer's config
composed from verl's own YAML plus our sections (``--trainer one_step_off`` / ``fully_async``).

What is faked, and why: the trainer object is made without its constructor
(tests/verl_harness.py) and given only what ``_fit_compute_advantage`` reads (config, tokenizer, reward tensor and
extras, metrics): the constructor builds Ray worker groups, rollout replicas in separate pools
and a checkpoint engine, minutes of start-up per case.  That path runs for real in
``tests/e2e/test_separated_cpu.py``; here every estimator's advantages are checked value by value
on controlled batches.  The tokenizer is a stand-in that maps response ids to the corpus texts.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch
import verl  # noqa: F401
from test_cue_estimators import L, corpus_batch, expected
from verl import DataProto

import verl_focal.plugin  # noqa: F401  (registers the estimators; hooks the separated trainers on import)
from _reference_family import ds_grpo_rows_reference, maxrl_rows_reference, unlikely_rows_reference
from verl_focal.integration.startup.compose import compose_config
from verl_focal.partition.cues import signature
from verl_harness import separated_trainer

MICRO = [
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4",
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8",
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8",
]


def _trainer(kind: str, overrides: list[str], tokenizer, rewards, extras: dict):
    return separated_trainer(kind, compose_config([*overrides, *MICRO], trainer=kind), tokenizer, rewards,
                             {k: list(v) for k, v in extras.items()})


class _CorpusTokenizer:
    """Response ids are [corpus row, 0, 0, ...]; decoding returns that row's text."""

    def __init__(self, texts):
        self.texts = texts
        self.decoded = 0

    def batch_decode(self, ids, skip_special_tokens=True):
        self.decoded += len(ids)
        return [self.texts[int(i[0])] for i in ids]


def _cue_batch(rows):
    n = len(rows)
    rewards = torch.zeros(n, L)
    rewards[:, L - 1] = torch.as_tensor([float(r[2]) for r in rows])
    chats = np.empty(n, dtype=object)
    chats[:] = [[{"role": "user", "content": f"problem {r[0]}"}] for r in rows]
    data = DataProto.from_dict(
        tensors={
            "responses": torch.arange(n).unsqueeze(-1).repeat(1, L),
            "response_mask": torch.ones(n, L),
            "attention_mask": torch.ones(n, 3 + L),
            "prompts": torch.ones(n, 3, dtype=torch.long),
        },
        non_tensors={"uid": np.array([r[0] for r in rows], dtype=object), "raw_prompt": chats},
    )
    return data, rewards


@pytest.mark.parametrize("kind", ["one_step_off", "fully_async"])
@pytest.mark.parametrize("source", ["signature", "text"])
def test_cue_grpo_gets_acc_and_clusters_in_the_separated_trainers(kind, source):
    rows = [r for r in corpus_batch() if r[0] != "pad"]
    data, rewards = _cue_batch(rows)
    extras = {"acc": [float(r[2]) for r in rows]}
    if source == "signature":
        extras["cue_sig"] = [signature(r[1]) for r in rows]
    tok = _CorpusTokenizer([r[1] for r in rows])
    trainer = _trainer(kind, ["algorithm.adv_estimator=cue_grpo", f"algorithm.cue.source={source}"], tok, rewards,
                       extras)
    t0 = time.perf_counter()
    out = trainer._fit_compute_advantage(data)
    wall = time.perf_counter() - t0
    got = out.batch["advantages"][:, -1].double().numpy()
    np.testing.assert_allclose(got, expected(rows), atol=1e-5)
    m = trainer.metrics
    # prepare partitioned by the `acc` extra and the estimator used its clusters as they were
    assert m["cue/groups_partitioned"] > 0 and m["cue/groups_repartitioned"] == 0.0
    assert 0.0 < m["verl_focal/prepare_s"] <= wall
    if source == "signature":
        assert m["cue/groups_from_signatures"] == m["cue/groups_partitioned"] and tok.decoded == 0
    else:
        assert m["cue/groups_from_text"] == m["cue/groups_partitioned"] and tok.decoded > 0


def _unlikely_batch():
    uid = np.array(["p"] * 4 + ["q"] * 4, dtype=object)
    acc = np.array([1, 1, 1, 0, 1, 1, 0, 0], dtype=float)
    bs, n_tok = 8, 5
    mask = torch.ones(bs, n_tok)
    mask[0, 3:] = 0.0
    rewards = torch.zeros(bs, n_tok)
    rewards[:, 0] = torch.as_tensor(acc, dtype=torch.float32)
    lp = -torch.arange(1, bs * n_tok + 1, dtype=torch.float32).reshape(bs, n_tok).flip(0) / 10 * mask
    data = DataProto.from_dict(
        tensors={
            "responses": torch.ones(bs, n_tok, dtype=torch.long),
            "response_mask": mask,
            "attention_mask": torch.cat([torch.ones(bs, 3), mask], dim=1),
            "prompts": torch.ones(bs, 3, dtype=torch.long),
            # bypass mode (the one-step-off default): verl's apply_bypass_mode copies the rollout
            # engine's log-probs into old_log_probs before the advantage step
            "rollout_log_probs": lp,
            "old_log_probs": lp.clone(),
        },
        non_tensors={"uid": uid},
    )
    return data, rewards, uid, acc, lp, mask


@pytest.mark.parametrize("kind", ["one_step_off", "fully_async"])
@pytest.mark.parametrize("likelihood", ["sum", "mean"])
def test_unlikely_grpo_ranks_by_the_rollout_log_probs_in_bypass_mode(kind, likelihood):
    data, rewards, uid, acc, lp, mask = _unlikely_batch()
    trainer = _trainer(kind, ["algorithm.adv_estimator=unlikely_grpo", "algorithm.unlikely.beta=0.5",
                              f"algorithm.unlikely.likelihood={likelihood}"], None, rewards, {"acc": acc.tolist()})
    assert trainer.config.algorithm.rollout_correction.bypass_mode is True or kind == "fully_async"
    out = trainer._fit_compute_advantage(data)
    lp_sum = (lp.double() * mask).sum(-1)
    score = lp_sum if likelihood == "sum" else lp_sum / mask.sum(-1)
    ref = unlikely_rows_reference(acc.tolist(), acc.tolist(), score.tolist(), uid, [1] * 8, 0.5)
    assert out.batch["advantages"][:, 0].tolist() == pytest.approx(ref, abs=1e-5)
    m = trainer.metrics
    # 5 correct rows by `acc` (the reward alone says the same here), ranked by the old log-probs
    assert m["unlikely/correct_rows"] == 5.0 and m["unlikely/nonfinite_logprob_rows"] == 0.0


@pytest.mark.parametrize("kind", ["one_step_off", "fully_async"])
def test_ds_grpo_smooths_by_the_rollout_log_probs_in_bypass_mode(kind):
    data, rewards, uid, acc, lp, mask = _unlikely_batch()
    trainer = _trainer(kind, ["algorithm.adv_estimator=ds_grpo", "algorithm.ds_grpo.correct_coef=0.2"], None,
                       rewards, {"acc": acc.tolist()})
    out = trainer._fit_compute_advantage(data)
    ref = ds_grpo_rows_reference(acc.tolist(), acc.tolist(), lp.tolist(), mask.tolist(), uid, [1] * 8, 0.2, 0.05)
    assert out.batch["advantages"][:, 0].tolist() == pytest.approx(ref, abs=1e-5)
    assert trainer.metrics["ds_grpo/nonfinite_logprob_rows"] == 0.0


def test_f_grpo_counts_correctness_from_acc_not_the_threshold():
    """DAPO-shaped rewards: a correct but overlong-penalised answer scores 0.1 (< threshold 0.5)."""
    from _reference import reference_advantages

    uid = np.array(["p"] * 4 + ["q"] * 4, dtype=object)
    acc = np.array([1, 1, 0, 0, 1, 0, 0, 0], dtype=float)
    score = np.array([0.1, 1.0, -1.0, -1.0, 1.0, -1.0, -1.0, -1.0])
    bs, n_tok = 8, 4
    rewards = torch.zeros(bs, n_tok)
    rewards[:, -1] = torch.as_tensor(score, dtype=torch.float32)
    data = DataProto.from_dict(
        tensors={"responses": torch.ones(bs, n_tok, dtype=torch.long), "response_mask": torch.ones(bs, n_tok),
                 "attention_mask": torch.ones(bs, 3 + n_tok), "prompts": torch.ones(bs, 3, dtype=torch.long)},
        non_tensors={"uid": uid},
    )
    trainer = _trainer("one_step_off", ["algorithm.adv_estimator=f_grpo", "algorithm.focal.gamma=0.5"], None, rewards,
                       {"acc": acc.tolist(), "score": score.tolist()})
    out = trainer._fit_compute_advantage(data)
    ref = reference_advantages(score.tolist(), uid, [True] * 8, gamma=0.5, correct=acc.tolist())
    wrong = reference_advantages(score.tolist(), uid, [True] * 8, gamma=0.5)  # p̂ from the threshold
    assert out.batch["advantages"][:, 0].tolist() == pytest.approx(ref, abs=1e-6)
    assert ref != pytest.approx(wrong, abs=1e-3)
    assert trainer.metrics["focal/acc_from_extra_frac"] == 1.0


@pytest.mark.parametrize("kind", ["one_step_off", "fully_async"])
def test_maxrl_reads_acc_not_the_shaped_reward_in_the_separated_trainers(kind):
    """DAPO-shaped rewards (a correct but penalised answer scores 0.1): MaxRL's c is `acc`."""
    uid = np.array(["p"] * 4 + ["q"] * 4, dtype=object)
    acc = np.array([1, 1, 0, 0, 1, 0, 0, 0], dtype=float)
    score = np.array([0.1, 1.0, -1.0, -1.0, 1.0, -1.0, -1.0, -1.0])
    rewards = torch.zeros(8, 4)
    rewards[:, -1] = torch.as_tensor(score, dtype=torch.float32)
    data = DataProto.from_dict(
        tensors={"responses": torch.ones(8, 4, dtype=torch.long), "response_mask": torch.ones(8, 4),
                 "attention_mask": torch.ones(8, 7), "prompts": torch.ones(8, 3, dtype=torch.long)},
        non_tensors={"uid": uid},
    )
    trainer = _trainer(kind, ["algorithm.adv_estimator=maxrl"], None, rewards,
                       {"acc": acc.tolist(), "score": score.tolist()})
    out = trainer._fit_compute_advantage(data)
    ref = maxrl_rows_reference(acc.tolist(), uid, [True] * 8)
    assert out.batch["advantages"][:, 0].tolist() == pytest.approx(ref, abs=1e-6)
    assert ref[4] == pytest.approx(3.0, rel=1e-5)


@pytest.mark.parametrize("kind", ["one_step_off", "fully_async"])
def test_separated_trainers_compose_with_the_values_their_trainers_require(kind):
    """verl's configs of these trainers inherit ``hybrid_engine: true`` (and, for fully-async,
    ``train_batch_size: 1024``), which their trainers assert against; our composition gives the
    working values, passes validation, and still lets an override through (to be refused)."""
    config = compose_config(MICRO, trainer=kind)
    assert config.actor_rollout_ref.hybrid_engine is False
    # fully-async's rollouter feeds prompts one at a time: data.train_batch_size must be 0 there
    assert config.data.train_batch_size == (0 if kind == "fully_async" else 1024)
    from verl_focal.integration.startup.validate import validate_all

    validate_all(config, kind)  # verl's own batch checks run on the batch a fully-async step trains on
    overridden = compose_config([*MICRO, "actor_rollout_ref.hybrid_engine=true"], trainer=kind)
    assert overridden.actor_rollout_ref.hybrid_engine is True
    assert compose_config(MICRO).actor_rollout_ref.hybrid_engine is True  # the synchronous trainer keeps verl's


class _FailOnceTokenizer(_CorpusTokenizer):
    def batch_decode(self, ids, skip_special_tokens=True):
        if not getattr(self, "failed", False):
            self.failed = True
            raise RuntimeError("tokenizer hiccup")
        return super().batch_decode(ids, skip_special_tokens)


@pytest.mark.parametrize("case", ["prefetched", "other_rows", "prefetch_failed"])
def test_cue_prefetch_starts_at_the_log_prob_pass_and_the_advantage_step_joins_it(case):
    """The hook wraps ``_fit_compute_log_prob`` (run right after the rewards are extracted): the cue
    estimator's prefetch -- texts decoded, strategy cues extracted -- runs there in the background and
    ``_fit_compute_advantage`` reuses it for the same rows.  Other rows, or a prefetch that raised, make
    the advantage step do the work itself; the advantages are the same in every case."""
    rows = [r for r in corpus_batch() if r[0] != "pad"]
    data, rewards = _cue_batch(rows)
    # bypass mode (the config default here): verl's _fit_compute_log_prob copies these into old_log_probs
    data.batch["rollout_log_probs"] = -torch.ones(len(rows), L)
    texts = [r[1] for r in rows]
    tok = _FailOnceTokenizer(texts) if case == "prefetch_failed" else _CorpusTokenizer(texts)
    trainer = _trainer("one_step_off", ["algorithm.adv_estimator=cue_grpo", "algorithm.cue.source=text"], tok,
                       rewards, {"acc": [float(r[2]) for r in rows]})
    batch = trainer._fit_compute_log_prob(data)
    assert "old_log_probs" in batch.batch.keys()  # verl's own pass ran
    if case == "other_rows":  # e.g. a batch the trainer filtered in between: the uids differ
        batch.non_tensor_batch["uid"] = np.array([f"{u}-x" for u in batch.non_tensor_batch["uid"]], dtype=object)
    t0 = time.perf_counter()
    out = trainer._fit_compute_advantage(batch)
    wall = time.perf_counter() - t0
    want = expected([(f"{r[0]}-x", *r[1:]) for r in rows] if case == "other_rows" else rows)
    np.testing.assert_allclose(out.batch["advantages"][:, -1].double().numpy(), want, atol=1e-5)
    m = trainer.metrics
    assert m["cue/groups_from_text"] == m["cue/groups_partitioned"] > 0
    if case == "prefetched":
        assert m["verl_focal/prefetched"] == 1.0 and m["verl_focal/prefetch_wait_s"] <= wall
        assert m["cue/groups_prefetched"] == m["cue/groups_partitioned"]  # cues extracted in the background
        assert tok.decoded == sum(1 for r in rows if r[2])  # each text decoded once, in the prefetch
    else:
        assert "verl_focal/prefetched" not in m and m.get("cue/groups_prefetched", 0.0) == 0.0
        assert m.get("verl_focal/prefetch_failed", 0.0) == (1.0 if case == "prefetch_failed" else 0.0)
    trainer.metrics = {}
    trainer._fit_compute_advantage(batch)  # the same rows again: the prefetch was joined once, then dropped
    assert "verl_focal/prefetched" not in trainer.metrics and "verl_focal/prefetch_failed" not in trainer.metrics
