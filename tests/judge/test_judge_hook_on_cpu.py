"""A training step's advantage computation with ``cue_grpo`` + the judge partitioner, through the hook.

verl's real ``ray_trainer.compute_advantage`` (the legacy trainer's path, with the tokenizer our
legacy TaskRunner hands over) runs on a real DataProto whose responses are decoded by a tiny
word-level tokenizer built here.  The hook builds the AdvantageContext, runs
``cue_grpo``'s ``prepare`` step (which asks the judge, over HTTP, the loopback scripted
server of conftest.py), then verl dispatches to ``cue_grpo``.  For each judge behaviour
(behaves / slow / returns garbage / is down) the step completes, the advantages equal
the formula (GRPO × the credit multipliers of the judge's clusters, or of the fallback's),
and the step metrics say what happened.

Nothing is faked: the only stand-in is the judge model itself (the scripted server).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf
from verl import DataProto
from verl.trainer.ppo import ray_trainer

import verl_focal.plugin  # noqa: F401  (registers the estimators)
from verl_focal.integration.registration import get_spec
from verl_focal.partition.factory import partitioner_for

VOCAB = ["[PAD]", "[UNK]", "use", "the", "quadratic", "formula", "factor", "polynomial", "apply", "wrong", "guess",
         "it"]
L_RESP = 6

# g0: three correct (formula, factoring, formula) + one wrong; g1: two correct (factoring) + one wrong.
# Both groups are mixed with >= 2 correct, so cue_grpo partitions both.
ROWS = [  # (uid, response, correct)
    ("g0", "use the quadratic formula", 1), ("g0", "factor the polynomial", 1),
    ("g0", "apply the quadratic formula", 1), ("g0", "wrong guess", 0),
    ("g1", "factor it", 1), ("g1", "factor the polynomial", 1), ("g1", "wrong guess", 0),
]
GOOD = {
    "g0": {"groups": [{"label": "formula", "members": [1, 3]}, {"label": "factoring", "members": [2]}]},
    "g1": {"groups": [{"label": "factoring", "members": [1, 2]}]},
}
SCRIPTS = {
    "ok": {u: ("json", GOOD[u]) for u in GOOD},
    "slow": {u: ("gate", "slow_released", ("json", GOOD[u])) for u in GOOD},  # held until after the step
    "junk": {u: ("text", "They are all clever. {maybe: yes}") for u in GOOD},
}
# the judge's clusters (correct rows only) and the singleton fallback's
JUDGE_CLUSTERS = {0: "a", 1: "b", 2: "a", 4: "c", 5: "c"}
SINGLETONS = {0: "a", 1: "b", 2: "c", 4: "d", 5: "e"}


def judge_overrides(base_url: str) -> list[str]:
    """``cue_grpo`` with the judge partitioner at ``base_url``, α = 1 and no clip (what
    :func:`expected_advantages` computes), as Hydra overrides."""
    return [
        "algorithm.adv_estimator=cue_grpo",
        "algorithm.cue.partitioner=judge",
        "algorithm.cue.alpha=1.0",
        "algorithm.cue.clip=null",
        f"algorithm.cue.judge.base_url={base_url}",
        "algorithm.cue.judge.model=judge-model",
        "algorithm.cue.judge.timeout_s=30",
    ]


def tokenizer():
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import WhitespaceSplit
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="[UNK]"))
    tok.pre_tokenizer = WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]")


def batch(tok, case: str) -> DataProto:
    n = len(ROWS)
    ids = torch.full((n, L_RESP), tok.pad_token_id, dtype=torch.long)
    mask = torch.zeros((n, L_RESP), dtype=torch.float32)
    rewards = torch.zeros((n, L_RESP), dtype=torch.float32)
    for i, (_, text, correct) in enumerate(ROWS):
        t = tok(text, add_special_tokens=False)["input_ids"]
        ids[i, : len(t)] = torch.tensor(t)
        mask[i, : len(t)] = 1
        rewards[i, len(t) - 1] = float(correct)
    raw = np.empty(n, dtype=object)
    raw[:] = [[{"role": "user", "content": f"Solve x^2-3x+2=0. [[{case}_{u}]]"}] for u, _, _ in ROWS]  # script tag
    return DataProto.from_dict(
        tensors={"responses": ids, "response_mask": mask, "token_level_rewards": rewards},
        non_tensors={"uid": np.array([r[0] for r in ROWS], dtype=object),
                     "acc": np.array([float(r[2]) for r in ROWS], dtype=object), "raw_prompt": raw},
    )


def expected_advantages(clusters: dict[int, str], alpha: float = 1.0, eps: float = 1e-6) -> list[float]:
    """GRPO (unbiased std) × w_i = n₊·|C(i)|^-α / Σ_j |C(j)|^-α on correct rows (docs/methods.md §5, no clip)."""
    out = []
    for i, (uid, _, correct) in enumerate(ROWS):
        grp = [j for j, r in enumerate(ROWS) if r[0] == uid]
        r = [float(ROWS[j][2]) for j in grp]
        mean = sum(r) / len(r)
        std = (sum((x - mean) ** 2 for x in r) / (len(r) - 1)) ** 0.5
        a = (float(correct) - mean) / (std + eps)
        if correct:
            pos = [j for j in grp if ROWS[j][2]]
            size = {j: sum(clusters[k] == clusters[j] for k in pos) for j in pos}
            a *= len(pos) * size[i] ** -alpha / sum(size[j] ** -alpha for j in pos)
        out.append(a)
    return out


@pytest.fixture
def hooked(legacy_hook):
    return legacy_hook(tokenizer())


def test_cue_grpo_is_registered_with_a_prepare_step():
    spec = get_spec("cue_grpo")
    judge_cfg = OmegaConf.create({"cue": {"partitioner": "judge"}})
    assert spec is not None and spec.prepare is not None and spec.prefetch is not None
    assert {"responses", "problems"} <= spec.needs_for(judge_cfg)


@pytest.mark.parametrize("case, reason",
                         [("ok", None), ("slow", "timeout"), ("junk", "malformed"), ("down", "connect")])
def test_step_completes_and_metrics_say_what_happened(hooked, judge_server, closed_port_url, case, reason):
    for uid, act in SCRIPTS.get(case, {}).items():
        judge_server.script(f"{case}_{uid}", act)
    judge = {"base_url": closed_port_url if case == "down" else judge_server.base_url, "model": "judge-model",
             "fallback": "singleton", "timeout_s": 1.5, "max_retries": 0}
    cfg = OmegaConf.create({"adv_estimator": "cue_grpo", "norm_adv_by_std_in_grpo": True,
                            "cue": {"partitioner": "judge", "alpha": 1.0, "clip": None, "judge": judge}})
    out = ray_trainer.compute_advantage(batch(hooked, case), adv_estimator="cue_grpo", config=cfg)
    m = out.meta_info["verl_focal_metrics"]
    adv = out.batch["advantages"]
    last = out.batch["response_mask"].sum(-1).long() - 1
    got = adv[torch.arange(len(ROWS)), last].double().tolist()

    clusters = JUDGE_CLUSTERS if reason is None else SINGLETONS
    assert got == pytest.approx(expected_advantages(clusters), abs=1e-5)
    assert m["judge/groups"] == 2
    if reason is None:
        assert m["judge/fallback_rate"] == 0 and m["judge/requests"] == 2 and "judge/latency_p50" in m
        # the judge saw the decoded correct responses of each group, numbered from 1
        user = {e["tag"]: e["body"]["messages"][-1]["content"] for e in judge_server.log}
        assert "=== Solution 2 ===\nfactor the polynomial" in user["ok_g0"]
        assert "wrong guess" not in user["ok_g0"]
    else:
        assert m["judge/fallback_rate"] == 1.0 and m[f"judge/fallback/{reason}"] == 2
    if case == "slow":  # the step ended while the server still held both requests: only timeout_s could end it
        judge_server.open_gate("slow_released")
    partitioner_for(cfg.cue, "judge").close()
