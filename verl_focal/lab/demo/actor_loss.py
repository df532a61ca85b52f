"""The control arms' actor loss through verl's own ``ppo_loss`` (verl glue).

verl's engine workers -- the actor of every recipe, e.g. ``recipes/deepscaler/grpo_entropy.sh`` and
``grpo_kl.sh`` -- compute the actor's loss with :func:`verl.workers.utils.losses.ppo_loss`:

    loss = pg_loss − entropy_coeff · agg_loss(H(π_θ(·| y_<t)))
                   + kl_loss_coef · agg_loss(kl_penalty(log π_θ(y_t), log π_ref(y_t), kl_loss_type))

with the policy loss of ``policy_loss.loss_mode`` (``vanilla``: PPO clip), verl's
``core_algos.agg_loss`` (token-mean here) and ``core_algos.kl_penalty`` (``low_var_kl``: Schulman's k3,
exp(ref − logp) − (ref − logp) − 1, clamped as verl clamps it).  This module builds verl's
``FSDPActorConfig`` from an arm's ``actor`` settings (the recipes' ``actor_rollout_ref.actor.*`` keys) and calls
that function on the demo's batch, laid out as the engine hands it over: per-token log-probs and entropies of
the whole packed sequences (no padding), which ``ppo_loss`` slices back to the response tokens itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from tensordict import TensorDict
from verl.utils.tensordict_utils import assign_non_tensor
from verl.utils.torch_functional import entropy_from_logits
from verl.workers.config import FSDPActorConfig
from verl.workers.utils.losses import ppo_loss

__all__ = ["uses_ppo_loss", "actor_config", "token_entropy", "actor_loss"]


def uses_ppo_loss(actor: Mapping[str, Any]) -> bool:
    """True when the arm's actor settings add a term to the policy loss (an entropy bonus or a KL loss)."""
    return float(actor.get("entropy_coeff", 0.0)) != 0.0 or bool(actor.get("use_kl_loss", False))


def actor_config(actor: Mapping[str, Any], n: int, clip_ratio: float) -> FSDPActorConfig:
    """verl's actor config for one demo update: PPO clip ``clip_ratio`` (both sides), token-mean aggregation, one
    micro-batch, and the arm's ``entropy_coeff`` / ``use_kl_loss`` / ``kl_loss_coef`` / ``kl_loss_type``
    (verl's defaults where the arm sets none: 0, false, 0.001, ``low_var_kl``)."""
    return FSDPActorConfig(
        strategy="fsdp", rollout_n=n, ppo_micro_batch_size_per_gpu=1, clip_ratio=clip_ratio,
        clip_ratio_low=clip_ratio, clip_ratio_high=clip_ratio, loss_agg_mode="token-mean",
        entropy_coeff=float(actor.get("entropy_coeff", 0.0)), use_kl_loss=bool(actor.get("use_kl_loss", False)),
        kl_loss_coef=float(actor.get("kl_loss_coef", 0.001)), kl_loss_type=str(actor.get("kl_loss_type", "low_var_kl")),
    )


def token_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Per-position entropy of softmax(``logits``) (..., V) -> (...), with verl's ``entropy_from_logits`` (the
    function verl's FSDP engine applies to the actor's logits when ``entropy_coeff`` ≠ 0); keeps the gradient."""
    return entropy_from_logits(logits.float())


def _packed(response_values: torch.Tensor, attention_mask: torch.Tensor, prompt_len: int) -> torch.Tensor:
    """(B, R) response-token values -> the engine's packed layout: one value per attended position of each
    sequence, concatenated, where position j holds the value for token j + 1 (so the response tokens' values sit
    at prompt_len − 1 .. end − 2); the other positions hold 0 and are never read."""
    b, seq = attention_mask.shape
    full = response_values.new_zeros(b, seq)
    full = torch.cat([full[:, : prompt_len - 1], response_values, full[:, prompt_len - 1 + response_values.shape[1]:]],
                     dim=1)
    return full[attention_mask.bool()]


def actor_loss(config: FSDPActorConfig, *, log_prob: torch.Tensor, entropy: torch.Tensor | None,
               old_log_prob: torch.Tensor, ref_log_prob: torch.Tensor | None, advantages: torch.Tensor,
               input_ids: torch.Tensor, attention_mask: torch.Tensor, prompt_len: int) -> tuple[torch.Tensor, dict]:
    """verl's ``ppo_loss`` on one batch of B sequences of ``prompt_len`` prompt and R response tokens.

    ``log_prob``, ``entropy``, ``old_log_prob``, ``ref_log_prob`` and ``advantages`` are (B, R) over the response
    tokens (``entropy`` and ``ref_log_prob`` may be None when the config does not use them); ``input_ids`` and
    ``attention_mask`` are (B, prompt_len + R).  Returns (loss, {metric: float}) with verl's metric names
    (``actor/pg_loss``, ``actor/entropy_loss``, ``kl_loss``, ...)."""
    response_mask = attention_mask[:, prompt_len:].float()
    tensors = {"prompts": input_ids[:, :prompt_len], "responses": input_ids[:, prompt_len:],
               "attention_mask": attention_mask, "response_mask": response_mask, "old_log_probs": old_log_prob,
               "advantages": advantages}
    if config.use_kl_loss:
        if ref_log_prob is None:
            raise ValueError("actor_loss: use_kl_loss needs the reference policy's log-probs (ref_log_prob)")
        tensors["ref_log_prob"] = ref_log_prob
    data = TensorDict(tensors, batch_size=[input_ids.shape[0]])
    # what verl's engine sets before the loss: one data-parallel rank, the batch's token count and size
    assign_non_tensor(data, dp_size=1, batch_num_tokens=int(response_mask.sum().item()),
                      global_batch_size=int(input_ids.shape[0]))
    output = {"log_probs": _packed(log_prob, attention_mask, prompt_len)}
    if config.entropy_coeff != 0:
        if entropy is None:
            raise ValueError("actor_loss: entropy_coeff != 0 needs the per-token entropies (entropy)")
        output["entropy"] = _packed(entropy, attention_mask, prompt_len)
    loss, metrics = ppo_loss(config, output, data)
    return loss, {k: float(v.aggregate() if hasattr(v, "aggregate") else v) for k, v in metrics.items()}
