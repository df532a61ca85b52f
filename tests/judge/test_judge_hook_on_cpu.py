"""A training step's advantage computation with the judge partitioner, through the trainer hook.

verl's real ``ray_trainer.compute_advantage`` (legacy trainer path, wrapped by
``install_legacy_hook``) runs on a real DataProto whose responses are decoded by
a tiny word-level tokenizer built here; the hook builds the AdvantageContext, runs
the estimator's ``prepare`` step (the judge, over HTTP to the loopback scripted
server), then verl dispatches to the registered estimator.  For each judge
behaviour (behaves / slow / garbage / down) the step must complete and its
metrics must say what happened.

Nothing is faked: the only stand-in is the judge model itself (the scripted server).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

verl = pytest.importorskip("verl")

from omegaconf import OmegaConf  # noqa: E402
from verl import DataProto  # noqa: E402

from verl_focal.integration.context import current_context  # noqa: E402
from verl_focal.integration.registration import register_estimator  # noqa: E402
from verl_focal.partition.judge import shared_judge  # noqa: E402

VOCAB = ["[PAD]", "[UNK]", "use", "the", "quadratic", "formula", "factor", "polynomial", "apply", "wrong", "guess",
         "it"]
L_RESP = 6
ESTIMATOR = "_judge_hook_probe"
SEEN: dict = {}


def tokenizer():
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import WhitespaceSplit
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="[UNK]"))
    tok.pre_tokenizer = WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]")


def prepare_with_judge(ctx, algorithm_config) -> None:
    """Partition each group's correct rollouts with the (shared) judge; fill cluster labels and metrics."""
    judge = shared_judge(algorithm_config.get("cue"))
    groups, rows = [], []
    for uid in dict.fromkeys(ctx.uids.tolist()):
        idx = [i for i in range(len(ctx)) if ctx.uids[i] == uid and ctx.acc[i] == 1.0]
        rows.append(idx)
        groups.append((ctx.problems[idx[0]] if idx else None, [ctx.responses[i] for i in idx]))
    labels = np.full(len(ctx), -1, dtype=np.int64)
    for idx, lab in zip(rows, judge.partition_groups(groups)):
        labels[idx] = lab
    ctx.cluster_labels = labels
    ctx.metrics.update(judge.pop_metrics())


@register_estimator(ESTIMATOR, needs=frozenset({"acc", "responses", "problems"}), prepare=prepare_with_judge)
def _probe_estimator(token_level_rewards, response_mask, config=None, index=None, **kw):
    """Plain group-mean-centred reward; records what the hook handed over."""
    ctx = current_context()
    ctx.check_alignment(index)
    SEEN["labels"] = ctx.cluster_labels.copy()
    SEEN["responses"] = list(ctx.responses)
    scores = token_level_rewards.sum(-1)
    uids = np.asarray(index, dtype=object)
    adv = torch.zeros_like(scores)
    for u in set(uids.tolist()):
        m = torch.as_tensor(uids == u)
        adv[m] = scores[m] - scores[m].mean()
    adv = adv[:, None] * response_mask
    return adv, adv


# group 0: three correct (formula, factor, formula) + one wrong; group 1: two correct (both factor)
RESPONSES = ["use the quadratic formula", "factor the polynomial", "apply the quadratic formula", "wrong guess",
             "factor it", "factor the polynomial"]
ACC = [1.0, 1.0, 1.0, 0.0, 1.0, 1.0]
UIDS = ["g0"] * 4 + ["g1"] * 2


def batch(tok, case: str) -> DataProto:
    ids = torch.full((len(RESPONSES), L_RESP), tok.pad_token_id, dtype=torch.long)
    mask = torch.zeros((len(RESPONSES), L_RESP), dtype=torch.float32)
    for i, r in enumerate(RESPONSES):
        t = tok(r, add_special_tokens=False)["input_ids"]
        ids[i, : len(t)] = torch.tensor(t)
        mask[i, : len(t)] = 1
    rewards = torch.zeros_like(mask)
    last = mask.sum(-1).long() - 1
    rewards[torch.arange(len(RESPONSES)), last] = torch.tensor(ACC)
    raw = np.empty(len(RESPONSES), dtype=object)
    raw[:] = [[{"role": "user", "content": f"Solve it. [[{case}_{u}]]"}] for u in UIDS]  # the server's script tag
    return DataProto.from_dict(
        tensors={"responses": ids, "response_mask": mask, "token_level_rewards": rewards},
        non_tensors={"uid": np.array(UIDS, dtype=object), "acc": np.array(ACC, dtype=object), "raw_prompt": raw},
    )


def algo_config(base_url: str, **judge) -> object:
    j = {"base_url": base_url, "model": "judge-model", "fallback": "singleton", "timeout_s": 0.5,
         "max_retries": 0, **judge}
    return OmegaConf.create({"adv_estimator": ESTIMATOR, "norm_adv_by_std_in_grpo": True,
                             "cue": {"partitioner": "judge", "judge": j}})


@pytest.fixture(scope="module")
def hooked():
    from verl.trainer.ppo import ray_trainer

    from verl_focal.integration.trainer import install_legacy_hook

    tok = tokenizer()
    install_legacy_hook(tokenizer_factory=lambda: tok)
    return ray_trainer, tok


def step(hooked, cfg, case):
    ray_trainer, tok = hooked
    SEEN.clear()
    out = ray_trainer.compute_advantage(batch(tok, case), adv_estimator=ESTIMATOR, config=cfg)
    metrics = out.meta_info["verl_focal_metrics"]
    assert torch.isfinite(out.batch["advantages"]).all()
    return out, metrics


GOOD_G0 = {"groups": [{"label": "formula", "members": [1, 3]}, {"label": "factoring", "members": [2]}]}
GOOD_G1 = {"groups": [{"label": "factoring", "members": [1, 2]}]}
SCRIPTS = {
    "ok": (("json", GOOD_G0), ("json", GOOD_G1)),
    "slow": (("sleep", 3.0, ("json", GOOD_G0)),) * 2,
    "junk": (("text", "I think they are all clever. {maybe: yes}"),) * 2,
}


@pytest.mark.parametrize("case, reason", [("ok", None), ("slow", "timeout"), ("junk", "malformed"), ("down", "connect")])
def test_step_completes_and_metrics_say_what_happened(hooked, judge_server, closed_port_url, case, reason):
    for uid, act in zip(("g0", "g1"), SCRIPTS.get(case, ())):
        judge_server.script(f"{case}_{uid}", act)
    cfg = algo_config(closed_port_url if case == "down" else judge_server.base_url)
    out, m = step(hooked, cfg, case)
    assert SEEN["responses"] == RESPONSES  # decoded by the hook through the tokenizer
    labels = SEEN["labels"].tolist()
    assert labels[3] == -1  # the wrong rollout is not partitioned
    assert m["judge/groups"] == 2
    if reason is None:
        assert m["judge/fallback_rate"] == 0 and m["judge/requests"] == 2
        assert labels == [0, 1, 0, -1, 0, 0]
        assert "judge/latency_p50" in m
    else:
        assert m["judge/fallback_rate"] == 1.0 and m[f"judge/fallback/{reason}"] == 2
        assert labels == [0, 1, 2, -1, 0, 1]  # the singleton fallback
    assert m["judge/wall_s"] < 2.5
    assert "verl_focal/prepare_s" in m
    shared_judge(cfg.cue).close()
