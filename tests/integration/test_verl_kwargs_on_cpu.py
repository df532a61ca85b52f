"""A verl that passes the batch to estimators (``non_tensor_batch=``, ``batch=`` keyword arguments, as
upstream verl PR #7473 proposes) needs no hook: our estimators read ``acc``, ``cue_sig`` and the old
log-probs from those arguments and give the hook's advantages."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import verl  # noqa: F401
from omegaconf import OmegaConf
from tensordict import TensorDict
from verl.trainer.ppo import core_algos

import verl_focal.plugin  # noqa: F401
from _reference import reference_advantages
from _reference_family import unlikely_rows_reference
from verl_focal.integration.context import use_context
from verl_focal.integration.rows import build_context
from verl_focal.partition.cues import signature


def _batch():
    uid = np.array(["p"] * 4 + ["q"] * 4, dtype=object)
    acc = np.array([1, 1, 0, 0, 1, 1, 1, 0], dtype=float)
    score = np.array([0.1, 1.0, -1.0, -1.0, 1.0, 1.0, 0.2, -1.0])  # acc and the threshold disagree on rows 0, 6
    bs, n_tok = 8, 4
    mask = torch.ones(bs, n_tok)
    rewards = torch.zeros(bs, n_tok)
    rewards[:, -1] = torch.as_tensor(score, dtype=torch.float32)
    lp = -torch.arange(1, bs * n_tok + 1, dtype=torch.float32).reshape(bs, n_tok).flip(0) / 10
    return uid, acc, score, rewards, mask, lp


def test_f_grpo_reads_acc_from_non_tensor_batch():
    uid, acc, score, rewards, mask, _ = _batch()
    fn = core_algos.get_adv_estimator_fn("f_grpo")
    algo = OmegaConf.create({"focal": {"gamma": 0.5}})
    adv, _ = fn(token_level_rewards=rewards, response_mask=mask, config=algo, index=uid,
                non_tensor_batch={"uid": uid, "acc": acc}, batch=TensorDict({"response_mask": mask}, batch_size=8))
    ref = reference_advantages(score.tolist(), uid, [True] * 8, gamma=0.5, correct=acc.tolist())
    assert adv[:, 0].tolist() == pytest.approx(ref, abs=1e-6)
    without, _ = fn(token_level_rewards=rewards, response_mask=mask, config=algo, index=uid)  # threshold
    assert without[:, 0].tolist() != pytest.approx(ref, abs=1e-3)


def test_unlikely_grpo_reads_old_log_probs_from_batch():
    uid, acc, _score, rewards, mask, lp = _batch()
    rewards[:, -1] = torch.as_tensor(acc, dtype=torch.float32)
    fn = core_algos.get_adv_estimator_fn("unlikely_grpo")
    algo = OmegaConf.create({"unlikely": {"beta": 0.5}})
    adv, _ = fn(token_level_rewards=rewards, response_mask=mask, config=algo, index=uid,
                non_tensor_batch={"uid": uid, "acc": acc},
                batch=TensorDict({"old_log_probs": lp, "response_mask": mask}, batch_size=8))
    ref = unlikely_rows_reference(acc.tolist(), acc.tolist(), lp.double().sum(-1).tolist(), uid, [1] * 8, 0.5)
    assert adv[:, 0].tolist() == pytest.approx(ref, abs=1e-5)


def test_cue_grpo_from_signatures_equals_the_hooks_result():
    texts = ["Case 1: x = 2. By symmetry the answer is 4.", "Substitute y = 3, then factor.",
             "Case 2: x = 3. Casework gives 4.", "wrong", "Draw a diagram.", "Use induction on n.",
             "Induction: base case n=1.", "nope"]
    uid, acc, _score, rewards, mask, _ = _batch()
    rewards[:, -1] = torch.as_tensor(acc, dtype=torch.float32)
    sig = np.array([signature(t) for t in texts], dtype=object)
    fn = core_algos.get_adv_estimator_fn("cue_grpo")
    algo = OmegaConf.create({"cue": {"source": "signature", "alpha": 1.0, "clip": None}})
    adv, _ = fn(token_level_rewards=rewards, response_mask=mask, config=algo, index=uid,
                non_tensor_batch={"uid": uid, "acc": acc, "cue_sig": sig})
    ctx = build_context(uid, frozenset({"acc", "cue_sig"}), [{"acc": a, "cue_sig": s} for a, s in zip(acc, sig)])
    with use_context(ctx):
        hooked, _ = fn(token_level_rewards=rewards, response_mask=mask, config=algo, index=uid)
    assert torch.allclose(adv, hooked, atol=1e-6)
    plain = core_algos.get_adv_estimator_fn("grpo")(token_level_rewards=rewards, response_mask=mask, index=uid)[0]
    assert not torch.allclose(adv, plain.to(adv.dtype), atol=1e-4)  # the clusters changed the credit
