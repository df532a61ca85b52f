"""Running verl's own trainer methods on CPU: the one set-up the tests and bench/advantage_step.py share.

* :func:`start_transfer_queue` / :func:`stop_transfer_queue`: a real TransferQueue on a local Ray cluster;
* :class:`Rollout` and :func:`put_rollouts`: rows written as verl's agent loop writes them
  (``AgentLoopOutput.as_dict`` -> ``list_of_dict_to_tensordict`` -> ``kv_batch_put``, keys
  ``{uid}_{session}_{index}``, reward extras in ``extra_fields["reward_extra_info"]``);
* :func:`v1_trainer` and :func:`separated_trainer`: verl's trainer classes (ours hooked, or verl's stock
  one) built without their constructor, which starts GPU worker pools; the test sets the attributes
  the methods under test read;
* :class:`ActorWorkerGroup`: the GPU boundary of verl's old-log-prob pass, writing what the real workers
  write (``log_probs`` and ``entropy`` over prompt + response) for the batch's keys.

Everything else is verl's code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: the log-prob the fake worker group gives a response token that has no value of its own
DEFAULT_LOG_PROB = -1.0


def start_transfer_queue(config) -> bool:
    """``ray.init`` (unless running) and ``tq.init`` from a composed trainer ``config``; returns whether Ray
    was started here.  Ray gets 16 *logical* CPUs: TransferQueue's actors each ask for one and would wait
    forever on a 2-core machine; the config should hold one storage unit
    (``transfer_queue.backend.SimpleStorage.num_data_storage_units=1``)."""
    import ray
    import transfer_queue as tq
    from omegaconf import open_dict

    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=16, include_dashboard=False, log_to_driver=False)
    with open_dict(config):
        config.transfer_queue.enable = True
    tq.init(config.transfer_queue)
    return started


def stop_transfer_queue(started_ray: bool) -> None:
    import ray
    import transfer_queue as tq

    tq.close()
    if started_ray:
        ray.shutdown()


@dataclass
class Rollout:
    """One output of an agent session, as the agent loop hands it to TransferQueue."""

    uid: str
    response_ids: list[int]
    reward: float
    extras: dict = field(default_factory=dict)  #: the reward extras (``acc``, ``cue_sig``, ...)
    session: int = 0
    index: int = 0
    prompt: str | None = None  #: the user message of ``raw_prompt`` (none when None)
    prompt_ids: list[int] = field(default_factory=lambda: [2, 3])
    response_mask: list[int] | None = None  #: all ones when None
    rollout_log_probs: list[float] | None = None  #: the rollout engine's (``calculate_log_probs``)

    @property
    def key(self) -> str:
        return f"{self.uid}_{self.session}_{self.index}"


def put_rollouts(tq, rollouts: list[Rollout], partition: str = "train", rng=None):
    """Write ``rollouts`` (in ``rng``'s random order when given: batches need not be grouped); return the
    ``KVBatchMeta``."""
    from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics, AgentLoopOutput
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    order = rng.permutation(len(rollouts)) if rng is not None else np.arange(len(rollouts))
    keys, fields = [], []
    for i in order.tolist():
        r = rollouts[i]
        out = AgentLoopOutput(
            prompt_ids=r.prompt_ids, response_ids=r.response_ids,
            response_mask=r.response_mask or [1] * len(r.response_ids), response_logprobs=r.rollout_log_probs,
            reward_score=float(r.reward), num_turns=2 * (r.index + 1), metrics=AgentLoopMetrics(),
            extra_fields={"reward_extra_info": dict(r.extras)},
        )
        row = out.as_dict()
        row["uid"] = r.uid
        if r.prompt is not None:
            row["raw_prompt"] = [{"role": "user", "content": r.prompt}]
        keys.append(r.key)
        fields.append(row)
    return tq.kv_batch_put(keys=keys, partition_id=partition, fields=list_of_dict_to_tensordict(fields))


def read_advantages(tq, meta) -> dict[str, Any]:
    """Each row's ``advantages`` (a 1-D tensor over its response tokens), by key."""
    got = tq.kv_batch_get(keys=meta.keys, partition_id=meta.partition_id, select_fields=["advantages"])
    return dict(zip(meta.keys, got["advantages"].unbind()))


def first_token_advantages(tq, meta) -> list[float]:
    """The advantage on each row's first response token, in the batch's key order."""
    adv = read_advantages(tq, meta)
    return [adv[k][0].item() for k in meta.keys]


class ActorWorkerGroup:
    """verl's actor worker group at the GPU boundary of ``_compute_old_log_prob``: writes ``log_probs`` and
    ``entropy`` over prompt + response for the batch's keys, a response token's log-prob one position left of
    it (as verl's ``response_from_nested`` reads them).  ``log_probs``: the response tokens' values by key
    (missing keys get :data:`DEFAULT_LOG_PROB`).  ``calls`` counts the passes."""

    def __init__(self, tq, log_probs: dict[str, list[float]] | None = None) -> None:
        self.tq, self.log_probs, self.calls = tq, dict(log_probs or {}), 0

    def compute_log_prob(self, batch):
        import torch
        from tensordict import TensorDict

        self.calls += 1
        got = self.tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id,
                                   select_fields=["prompts", "responses"])
        full, ent = [], []
        for key, p, r in zip(batch.keys, got["prompts"].unbind(), got["responses"].unbind()):
            lp = torch.tensor(self.log_probs.get(key, [DEFAULT_LOG_PROB] * len(r)), dtype=torch.float32)
            full.append(torch.cat([torch.full((len(p) - 1,), -9.0), lp, torch.tensor([-9.0])]))
            ent.append(torch.ones(len(p) + len(r)))
        fields = TensorDict({"log_probs": torch.nested.as_nested_tensor(full, layout=torch.jagged),
                             "entropy": torch.nested.as_nested_tensor(ent, layout=torch.jagged)},
                            batch_size=len(batch.keys))
        self.tq.kv_batch_put(keys=batch.keys, partition_id=batch.partition_id, fields=fields)
        return batch

    compute_ref_log_prob = compute_log_prob


def v1_trainer(config, tokenizer=None, worker=None, stock: bool = False):
    """verl's v1 ``sync`` trainer -- our hooked ``focal_sync`` one, or verl's own with ``stock`` -- built
    without its constructor, with what ``_compute_old_log_prob``, ``_compute_advantage`` and
    ``_val_metrics_update`` read: ``config``, ``tokenizer`` and the actor worker group."""
    from verl.trainer.ppo.v1.trainer_base import get_trainer_cls

    from verl_focal.integration.hooks.trainer import hooked_trainer_cls

    trainer = object.__new__(get_trainer_cls("sync") if stock else hooked_trainer_cls("sync"))
    trainer.config, trainer.tokenizer = config, tokenizer
    trainer.actor_rollout_wg = worker
    trainer.ref_policy_wg, trainer.ref_in_actor = worker, False
    return trainer


def separated_trainer(kind: str, config, tokenizer, reward_tensor, reward_extras: dict):
    """verl's one-step-off (``kind="one_step_off"``) or fully-async trainer built without its constructor,
    with the state its ``_fit_compute_log_prob`` / ``_fit_compute_advantage`` read after ``_fit_compute_reward``."""
    if kind == "one_step_off":
        from verl.experimental.one_step_off_policy.ray_trainer import OneStepOffRayTrainer as cls
    else:
        from verl.experimental.fully_async_policy.fully_async_trainer import FullyAsyncTrainer

        cls = FullyAsyncTrainer.__ray_actor_class__  # a Ray actor class: the trainer's own class behind it
    trainer = object.__new__(cls)
    trainer.config, trainer.tokenizer = config, tokenizer
    trainer.metrics, trainer.timing_raw = {}, {}
    trainer.reward_tensor, trainer.reward_extra_infos_dict = reward_tensor, reward_extras
    return trainer


def word_tokenizer(words: list[str]):
    """A word-level fast tokenizer over ``words`` (``words[0]`` pads, ``words[1]`` ends)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token=words[0]))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=words[0], eos_token=words[1])


def byte_level_tokenizer(texts: list[str], vocab_size: int = 600):
    """A byte-level BPE trained on ``texts`` (exact round trip of any text)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["<pad>", "<eos>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>")
