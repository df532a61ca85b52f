"""Every estimator's whole step on tensors that stand for the GPU, through each trainer family's row source.

The first GPU run (issue 55; /work/shared/spec/gpu-runs) failed where no CPU test looked: with no
``raw_prompt`` column the legacy rows decoded the DataProto's device ``prompts`` with ``np.asarray`` of each
row.  Here every tensor of the batch is a :class:`~_device_proxy.OnDevice`, which refuses ``numpy()``,
``np.asarray``, ``tolist()`` and ``item()`` until ``.cpu()`` (tests/_device_proxy.py): the GPU is faked at the
one boundary it changes, and the proxy fails the way CUDA does.  Each case runs twice, on plain CPU tensors and
on the proxy, and must give the same advantages and metrics, with the advantages still "on the device".

Row sources: the legacy trainer's DataProto through verl's hooked ``compute_advantage`` (the hook builds the
rows itself); verl's separated trainer's real ``_fit_compute_advantage``; the v1 trainer's TransferQueue rows
(``tq_rows``, its TransferQueue read faked with device columns) through the step seam's prefetch and join,
with single- and multi-output agent sessions.  Each with and without ``raw_prompt``, and for the cue
estimators every partitioner source: strategy cues from text, the ``cue_sig`` column, the judge (its
client faked: it records the problems and texts it is handed) and a control (``random``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import verl  # noqa: F401
from omegaconf import OmegaConf
from verl import DataProto
from verl.trainer.ppo import ray_trainer

import verl_focal.plugin  # noqa: F401  (registers the estimators; hooks compute_advantage)
from _device_proxy import OnDevice, factories, on_device, plain
from verl_focal.estimators import all_specs
from verl_focal.integration.hooks.dataproto_hook import ON_DEVICE
from verl_focal.integration.registration import get_spec
from verl_focal.partition.base import Partitioner
from verl_focal.partition.cues import signature
from verl_harness import byte_level_tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "partition"))
import cue_corpus  # noqa: E402

CUE = ("cue_grpo", "f_cue_grpo")
SOURCES = {"text": {"source": "text"}, "cue_sig": {"source": "signature"}, "judge": {"partitioner": "judge"},
           "control": {"partitioner": "random", "source": "text"}}
PROMPT_LEN = 16
#: the prefixes of our step metrics (verl's own are not compared)
OURS = ("verl_focal/", "focal/", "cue/", "passk/", "unlikely/", "maxrl/", "ds_grpo/")


def _cases():
    for spec in all_specs():
        for raw_prompt in (True, False):
            for source in (SOURCES if spec.name in CUE else ["-"]):
                yield pytest.param(spec.name, raw_prompt, source,
                                   id=f"{spec.name}-{source}-{'raw_prompt' if raw_prompt else 'prompts'}")


@pytest.fixture(scope="module")
def tokenizer():
    problems = [f"problem {p['id']}" for p in cue_corpus.PROBLEMS]
    return byte_level_tokenizer(cue_corpus.all_texts() + problems + cue_corpus.WRONG)


class FakeJudge(Partitioner):
    """The judge at its client: clusters a group by each text's first word, and records every
    ``(problem, texts)`` it is handed (in ``prefetch`` and ``partition_groups``)."""

    name = "judge"

    def __init__(self) -> None:
        self.seen: list[tuple] = []

    def partition(self, texts, problem=None):
        return self.partition_groups([(problem, texts)])[0]

    def partition_groups(self, groups):
        out = []
        for problem, texts in groups:
            self.seen.append((problem, tuple(texts)))
            firsts = [t.split()[0] if t.split() else "" for t in texts]
            out.append([firsts.index(f) for f in firsts])
        return out

    def prefetch(self, groups):
        self.seen.extend((p, tuple(t)) for p, t in groups)


@pytest.fixture
def fake_judge(monkeypatch):
    from verl_focal.partition import factory

    judges: list[FakeJudge] = []

    def recipe(cue):
        judges.append(FakeJudge())
        return {"fake": len(judges)}, lambda: judges[-1]

    monkeypatch.setattr(factory, "_judge_recipe", recipe)
    monkeypatch.setattr(factory, "_CACHE", {})  # no partitioner of another test
    return judges


def _algo(name: str, source: str):
    return OmegaConf.create({"adv_estimator": name, "norm_adv_by_std_in_grpo": True, "focal": {"gamma": 1.0},
                             "passk": {"k": 2}, "cue": {"alpha": 0.8, **SOURCES.get(source, {})}})


def _rows(seed: int):
    """The cue corpus (uneven groups: 2 wrong answers each, plus a padding row), shuffled."""
    rows = cue_corpus.batch_rows()
    order = np.random.default_rng(seed).permutation(len(rows))
    return [rows[i] for i in order]


def _batch(tok, rows, raw_prompt: bool, with_sig: bool):
    """The DataProto a trainer holds at the advantage step: left-padded prompts, right-padded responses."""
    n = len(rows)
    resp = [tok(r[1])["input_ids"] for r in rows]
    length = max(len(r) for r in resp) + 1
    prompts = torch.zeros(n, PROMPT_LEN, dtype=torch.long)
    responses = torch.zeros(n, length, dtype=torch.long)
    mask = torch.zeros(n, length, dtype=torch.long)
    rewards = torch.zeros(n, length)
    for i, r in enumerate(rows):
        p = tok(f"problem {r[0]}")["input_ids"]
        assert len(p) <= PROMPT_LEN
        prompts[i, PROMPT_LEN - len(p):] = torch.as_tensor(p)
        if r[0] != "pad":
            responses[i, :len(resp[i])] = torch.as_tensor(resp[i])
            mask[i, :len(resp[i])] = 1
            rewards[i, len(resp[i]) - 1] = r[2]
    old_lp = torch.as_tensor(np.random.default_rng(n).uniform(-2.0, -0.01, mask.shape), dtype=torch.float32) * mask
    ntb = {"uid": np.array([r[0] for r in rows], dtype=object), "acc": np.array([r[2] for r in rows], dtype=object)}
    if with_sig:
        ntb["cue_sig"] = np.array([signature(r[1]) for r in rows], dtype=object)
    if raw_prompt:
        chats = np.empty(n, dtype=object)
        chats[:] = [[{"role": "user", "content": f"problem {r[0]}"}] for r in rows]
        ntb["raw_prompt"] = chats
    tensors = {"prompts": prompts, "responses": responses, "response_mask": mask, "token_level_rewards": rewards,
               "old_log_probs": old_lp, "attention_mask": torch.cat([(prompts != 0).long(), mask], dim=1)}
    return tensors, ntb


def _dataproto(tensors, ntb, device: bool):
    wrap = on_device if device else (lambda t: t)
    return DataProto.from_dict(tensors={k: wrap(v.clone()) for k, v in tensors.items()},
                               non_tensors={k: v.copy() for k, v in ntb.items()})


def _same(plain_out: dict, device_out: dict) -> None:
    """Same advantages, returns and metrics (but timings); the device run's outputs still on the device."""
    for key in ("advantages", "returns"):
        assert type(device_out[key]) is OnDevice, key
        assert torch.equal(plain(device_out[key]), plain_out[key]), key
    # where the batch lay (1 on the device, 0 on the host) differs by design; the rest must not (but timings)
    assert (device_out["metrics"][ON_DEVICE], plain_out["metrics"][ON_DEVICE]) == (1.0, 0.0)
    skip = {k for k in plain_out["metrics"] if k.endswith("_s")} | {ON_DEVICE}
    assert {k: v for k, v in device_out["metrics"].items() if k not in skip} == \
        {k: v for k, v in plain_out["metrics"].items() if k not in skip}
    assert plain_out["metrics"]["verl_focal/acc_rows_frac"] == 1.0
    assert "verl_focal/prefetch_failed" not in device_out["metrics"]


def _judge_saw(judges, raw_prompt):
    """The fake judge was handed the problem statements as text, from ``raw_prompt`` or decoded."""
    seen = [p for j in judges for p, _ in j.seen]
    assert seen and all(p in {f"problem {q['id']}" for q in cue_corpus.PROBLEMS} for p in seen), seen[:3]


# ------------------------------------------------------------------------------------------ legacy trainer
@pytest.mark.parametrize(("name", "raw_prompt", "source"), list(_cases()))
def test_legacy_dataproto_step_on_the_device(name, raw_prompt, source, tokenizer, legacy_hook, fake_judge):
    """verl's legacy ``RayPPOTrainer.fit`` calls the hooked ``compute_advantage`` on its DataProto; the hook
    builds the rows (dataproto_rows), decodes what it needs, and runs the estimator."""
    from verl_focal.integration.hooks.dataproto_hook import METRICS_KEY

    legacy_hook(tokenizer)
    tensors, ntb = _batch(tokenizer, _rows(1), raw_prompt, with_sig=source == "cue_sig")
    algo = _algo(name, source)
    outs = {}
    for device in (False, True):
        data = _dataproto(tensors, ntb, device)
        with factories():
            out = ray_trainer.compute_advantage(data, name, config=algo)
        outs[device] = {"advantages": out.batch["advantages"], "returns": out.batch["returns"],
                        "metrics": out.meta_info[METRICS_KEY]}
    _same(outs[False], outs[True])
    if source == "judge":
        _judge_saw(fake_judge, raw_prompt)


# ---------------------------------------------------------------------------------------- separated trainers
@pytest.mark.parametrize(("name", "raw_prompt", "source"),
                         [c for c in _cases() if c.values[2] in ("-", "text", "judge")])
def test_separated_trainer_step_on_the_device(name, raw_prompt, source, tokenizer, fake_judge):
    """verl's ``SeparateRayPPOTrainer._fit_compute_advantage`` (one-step-off; fully-async inherits it), with
    the reward tensor and extras as ``_fit_compute_reward`` leaves them."""
    from verl_focal.integration.startup.compose import compose_config
    from verl_harness import separated_trainer

    tensors, ntb = _batch(tokenizer, _rows(2), raw_prompt, with_sig=False)
    extras = {"acc": [float(a) for a in ntb.pop("acc")]}
    rewards = tensors.pop("token_level_rewards")
    overrides = [f"algorithm.adv_estimator={name}", "algorithm.focal.gamma=1.0", "algorithm.passk.k=2",
                 *(f"algorithm.cue.{k}={v}" for k, v in SOURCES.get(source, {}).items()),
                 "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4",
                 "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8",
                 "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8"]
    config = compose_config(overrides, trainer="one_step_off")
    outs = {}
    for device in (False, True):
        trainer = separated_trainer("one_step_off", config, tokenizer,
                                    on_device(rewards.clone()) if device else rewards.clone(), extras)
        with factories():
            out = trainer._fit_compute_advantage(_dataproto(tensors, ntb, device))
        outs[device] = {"advantages": out.batch["advantages"], "returns": out.batch["returns"],
                        "metrics": {k: v for k, v in trainer.metrics.items() if k.startswith(OURS)}}
    _same(outs[False], outs[True])
    if source == "judge":
        _judge_saw(fake_judge, raw_prompt)


# --------------------------------------------------------------------------- v1 trainer: TransferQueue rows
def _v1_keys(rows, multi: bool):
    """``{uid}_{session}_{index}``; with ``multi`` every third session has an earlier output (a copy of its
    final row, as verl copies the final output's reward extras onto the earlier ones)."""
    keys, order = [], []
    for s, r in enumerate(rows):
        if multi and s % 3 == 0:
            keys.append(f"{r[0]}_{s}_0")
            order.append(s)
            keys.append(f"{r[0]}_{s}_1")
        else:
            keys.append(f"{r[0]}_{s}_0")
        order.append(s)
    return keys, np.array(order)


class _FakeTransferQueue:
    """``kv_batch_get`` of TransferQueue at its storage boundary, answering with ``columns`` (one row per key);
    tensors come back as they were stored (here: standing for the device, the strictest case)."""

    def __init__(self, keys, columns):
        self.pos = {k: i for i, k in enumerate(keys)}
        self.columns = columns

    def kv_batch_get(self, keys, partition_id, select_fields):
        idx = [self.pos[k] for k in keys]
        out = {}
        for f in select_fields:
            col = self.columns[f]
            if isinstance(col, torch.Tensor):
                out[f] = col[torch.as_tensor(idx, device=col.device)]
            else:
                out[f] = [col[i] for i in idx]
        return out


@pytest.mark.parametrize("multi", [False, True], ids=["single-output", "agent-sessions"])
@pytest.mark.parametrize(("name", "raw_prompt", "source"), [c for c in _cases() if c.values[1]])
def test_v1_transferqueue_step_on_the_device(name, raw_prompt, source, multi, tokenizer, fake_judge, monkeypatch):
    """The v1 hook's adapter (``FocalHookMixin._focal_context``: tq_rows, the sessions' final outputs) under the
    step seam as the hooked trainer runs it: ``begin`` at the old-log-prob pass (the prefetch thread), ``finish``
    at the advantage step around verl's ``compute_advantage`` on the step's DataProto.  The v1 rows always carry
    ``raw_prompt``: verl's agent loop reads it for every sample (verl 0.9.1
    experimental/agent_loop/single_turn_agent_loop.py:41, tool_agent_loop.py:132) and stores it (agent_loop.py:730)."""
    import verl_focal.step.tq_rows as tq_rows_mod
    from verl_focal.integration.hooks.trainer import FocalHookMixin
    from verl_focal.step.seam import begin, finish

    rows = _rows(3)
    keys, order = _v1_keys(rows, multi)
    tensors, ntb = _batch(tokenizer, [rows[i] for i in order], raw_prompt, with_sig=source == "cue_sig")
    algo = _algo(name, source)
    spec = get_spec(name)
    outs = {}
    for device in (False, True):
        wrap = on_device if device else (lambda t: t)
        extra = [{"reward_extra_info": {k: ntb[k][i] for k in ("acc", "cue_sig") if k in ntb}}
                 for i in range(len(keys))]
        columns = {"uid": list(ntb["uid"]), "extra_fields": extra, "responses": wrap(tensors["responses"].clone())}
        if raw_prompt:
            columns["raw_prompt"] = list(ntb["raw_prompt"])
        monkeypatch.setattr(tq_rows_mod, "tq", _FakeTransferQueue(keys, columns))
        trainer = SimpleNamespace(tokenizer=tokenizer)
        batch = SimpleNamespace(keys=keys, partition_id="train")
        data = _dataproto(tensors, {"uid": ntb["uid"]}, device)
        metrics: dict = {}

        def build(step, trainer=trainer, batch=batch):
            return FocalHookMixin._focal_context(trainer, batch, step)

        with factories():
            begin(trainer, spec, algo, lambda: tuple(keys), build)
            out = finish(spec, algo, build, lambda ctx, data=data: ray_trainer.compute_advantage(data, name,
                                                                                                  config=algo),
                         metrics, trainer, tuple(keys))
        assert metrics["verl_focal/prefetched"] == 1.0
        outs[device] = {"advantages": out.batch["advantages"], "returns": out.batch["returns"], "metrics": metrics}
    _same(outs[False], outs[True])
    if multi:
        assert outs[True]["metrics"]["verl_focal/sessions"] < len(keys)
    if source == "judge":
        _judge_saw(fake_judge, raw_prompt)


# ------------------------------------------------------------------------------------------- the proxy itself
def test_the_proxy_refuses_every_host_read_until_cpu_and_follows_torch_ops():
    x = on_device(torch.arange(6).reshape(2, 3))
    for read in (x.numpy, x.tolist, lambda: x[0, 0].item(), lambda: np.asarray(x), lambda: np.asarray(x[0]),
                 lambda: [np.asarray(r) for r in x]):  # the last: iterating rows into NumPy (the H200's failure)
        with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
            read()
    assert type(x * 2 + 1) is OnDevice and type(x[1]) is OnDevice and x.device != torch.device("cpu")
    with factories():
        assert type(torch.zeros(2, device=x.device)) is OnDevice and type(torch.arange(2).to(x.device)) is OnDevice
        assert type(torch.zeros(2)) is torch.Tensor  # without device=: the factory probe's bug, a host tensor
    for host in (x.cpu(), x.to("cpu"), x.to(torch.device("cpu"))):
        assert type(host) is torch.Tensor and host.numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    assert int(x.sum()) == 15 and bool(x.any())  # scalar syncs, as CUDA allows them


def test_the_decoder_takes_device_rows_to_the_host_itself(tokenizer):
    """What the H200 broke on: ``BatchDecoder`` took ``np.asarray`` of each device row of ``prompts``.  It now
    copies them to the host first (:func:`~verl_focal.step.decode.host_rows`), a 2-D tensor in one copy."""
    from verl_focal.step.decode import BatchDecoder

    prompts = on_device(torch.as_tensor([tokenizer("problem candies")["input_ids"]]))
    with pytest.raises(TypeError, match="cuda:0"):
        [np.asarray(r, dtype=np.int64) for r in prompts]  # the decoder's old first line
    assert BatchDecoder(tokenizer)(prompts) == BatchDecoder(tokenizer)(list(prompts)) == ["problem candies"]
