"""Rollouts through verl's own ``HFRollout`` (verl glue).

verl 0.9.1 still ships ``verl.workers.rollout.hf_rollout.HFRollout`` but its
base class declares async ``resume`` / ``update_weights`` / ``release`` as
abstract, so it cannot be constructed as shipped.
:class:`DemoHFRollout` supplies those three as no-ops -- the demo's policy
lives in this process, so there are no weights to move --, replaces the
constructor (whose ``super().__init__()`` call no longer matches the base), and leaves
generation (``generate_sequences``) to verl's code unchanged.  On the CPU it drops the one warning torch gives
each process there (verl opens ``torch.autocast`` for verl's device, "cuda" on a machine without a GPU, and torch
says it disables it: what a CPU run wants), which a demo worker would otherwise print among the progress lines.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch
from omegaconf import OmegaConf
from verl import DataProto
from verl.workers.rollout.hf_rollout import HFRollout

from verl_focal.lab.demo.model import RESPONSE_LEN

__all__ = ["DemoHFRollout", "make_rollout", "prompt_batch"]

#: torch's warning when verl's HFRollout opens a CUDA autocast on a machine without CUDA (torch/amp/autocast_mode.py)
CPU_AUTOCAST_WARNING = "CUDA is not available or torch_xla is imported"


class DemoHFRollout(HFRollout):
    """``HFRollout`` with the async weight-management hooks as no-ops (in-process policy).

    ``HFRollout.__init__`` calls ``BaseRollout.__init__()`` without the three
    arguments that 0.9.1's base now requires, so the constructor is replaced by
    the two assignments it was meant to make (``config`` stays a DictConfig,
    which is what ``HFRollout`` reads with ``.get``).
    """

    def __init__(self, module, config):  # noqa: D107 - see class docstring
        self.config = config
        self.module = module

    async def resume(self, tags: list[str]):  # noqa: D401 - nothing to resume in-process
        return None

    async def update_weights(self, weights, wire_format: str = "named_tensors", **kwargs):
        return None

    async def release(self):
        return None

    def generate_sequences(self, prompts: DataProto) -> DataProto:
        """verl's ``generate_sequences``; on the CPU without its autocast warning (module docstring)."""
        if torch.cuda.is_available():
            return super().generate_sequences(prompts)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=CPU_AUTOCAST_WARNING, category=UserWarning)
            return super().generate_sequences(prompts)


def make_rollout(model, temperature: float = 1.0, micro_batch_size: int = 4096) -> DemoHFRollout:
    """Build the rollout with verl's rollout keys (sampling at ``temperature``, top-p 1, top-k off)."""
    cfg = OmegaConf.create(
        {
            "do_sample": True,
            "temperature": float(temperature),
            "top_p": 1.0,
            "top_k": -1,
            "response_length": RESPONSE_LEN,
            "micro_batch_size": int(micro_batch_size),
            "val_kwargs": {"top_k": -1, "top_p": 1.0, "temperature": float(temperature)},
        }
    )
    return DemoHFRollout(module=model, config=cfg)


def prompt_batch(prompt_ids: torch.Tensor, uids: list[str], tokenizer) -> DataProto:
    """A verl ``DataProto`` of (already repeated) prompts, as the trainer hands them to the rollout.

    ``prompt_ids``: (n, prompt_len), all tokens real (no padding); the masks and positions are made on its device.
    """
    if prompt_ids.shape[0] != len(uids):
        raise ValueError(f"prompt_batch: {prompt_ids.shape[0]} prompts but {len(uids)} uids")
    attn = torch.ones_like(prompt_ids)
    pos = torch.arange(prompt_ids.shape[1], device=prompt_ids.device).unsqueeze(0).expand_as(prompt_ids).contiguous()
    return DataProto.from_dict(
        tensors={"input_ids": prompt_ids, "attention_mask": attn, "position_ids": pos},
        non_tensors={"uid": np.array(uids, dtype=object)},
        meta_info={"eos_token_id": tokenizer.eos_token_id, "pad_token_id": tokenizer.pad_token_id},
    )
