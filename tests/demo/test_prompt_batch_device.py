"""The demo's rollout batch lives on the prompts' device (finding 5 of the GPU audit, the demo half).

``verl-focal demo --device cuda`` hands CUDA prompts to verl's ``HFRollout``, which passes every tensor of the
batch to ``generate``: a ``position_ids`` left on the CPU meets the CUDA hidden states in the rotary embedding.
The ``meta`` device stands in for CUDA here: nothing may land on the CPU.
"""

import torch
import verl  # noqa: F401  a hard dependency of the demo

from verl_focal.lab.demo.model import build_tokenizer
from verl_focal.lab.demo.rollout import prompt_batch


def test_every_tensor_of_the_prompt_batch_is_on_the_prompts_device():
    tok = build_tokenizer()
    ids = torch.zeros(4, 6, dtype=torch.long, device="meta")
    batch = prompt_batch(ids, [f"u{i}" for i in range(4)], tok).batch
    assert set(batch.keys()) == {"input_ids", "attention_mask", "position_ids"}
    assert {k: batch[k].device.type for k in batch.keys()} == dict.fromkeys(batch.keys(), "meta")
    assert batch["position_ids"].shape == (4, 6) and batch["position_ids"].dtype == torch.long


def test_position_ids_count_the_prompt_tokens_on_the_cpu():
    tok = build_tokenizer()
    batch = prompt_batch(torch.ones(3, 6, dtype=torch.long), ["a", "a", "b"], tok).batch
    assert batch["position_ids"].tolist() == [list(range(6))] * 3
    assert batch["attention_mask"].tolist() == [[1] * 6] * 3
