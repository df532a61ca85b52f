"""Tiny policy for the demo: a local character tokenizer and a small LlamaForCausalLM.

Nothing is downloaded.  The tokenizer is a ``tokenizers`` word-level model over
single characters, wrapped in ``transformers.PreTrainedTokenizerFast``; the
model is a freshly initialised ``LlamaForCausalLM`` (``model_type: llama``, a model type verl's
workers support).  :func:`sft` fits it to demonstrations
by teacher forcing (cross-entropy on the answer tokens only).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from verl_focal.lab.demo.task import Problem

__all__ = [
    "CHARS",
    "build_tokenizer",
    "ModelSpec",
    "build_model",
    "encode_prompts",
    "encode_pairs",
    "sequence_logprob",
    "sft",
    "PROMPT_LEN",
    "RESPONSE_LEN",
]

CHARS = "0123456789abcdef+-*TD="
PROMPT_LEN = 6  # <bos> + 5 prompt characters
RESPONSE_LEN = 4  # A op B <eos>


def build_tokenizer():
    """Character-level ``PreTrainedTokenizerFast``: ids 0 <pad>, 1 <bos>, 2 <eos>, then :data:`CHARS`."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<bos>": 1, "<eos>": 2}
    for c in CHARS:
        vocab[c] = len(vocab)
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", bos_token="<bos>", eos_token="<eos>", padding_side="left"
    )


@dataclass(frozen=True)
class ModelSpec:
    """Size of the tiny policy (defaults: ~0.1M parameters)."""

    hidden: int = 64
    layers: int = 2
    heads: int = 4
    intermediate: int = 256


def build_model(tokenizer, spec: ModelSpec, seed: int):
    """A freshly initialised ``LlamaForCausalLM`` (float32), seeded."""
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=spec.hidden,
        intermediate_size=spec.intermediate,
        num_hidden_layers=spec.layers,
        num_attention_heads=spec.heads,
        num_key_value_heads=spec.heads,
        max_position_embeddings=32,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model


#: per tokenizer, the ids of every text it has encoded: the demo encodes the same few thousand prompts and answers
#: tens of thousands of times per seed, and a call of the HF tokenizer costs ~0.1 ms (a quarter of an RL step's
#: CPU time); the ids are the tokenizer's own, so nothing a run computes changes
_ENCODED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _memo(tokenizer) -> dict[str, tuple[int, ...]]:
    """The ids memo of ``tokenizer`` (looked up once per batch: a weak-key lookup makes a weak reference)."""
    memo = _ENCODED.get(tokenizer)
    if memo is None:
        memo = _ENCODED[tokenizer] = {}
    return memo


def _ids(tokenizer, text: str, memo: dict[str, tuple[int, ...]] | None = None) -> list[int]:
    memo = _memo(tokenizer) if memo is None else memo
    ids = memo.get(text)
    if ids is None:
        ids = memo[text] = tuple(tokenizer(text, add_special_tokens=False)["input_ids"])
    return list(ids)


def encode_prompts(tokenizer, problems: Sequence[Problem]) -> torch.Tensor:
    """(n, PROMPT_LEN) long tensor ``<bos> T t D d =`` (all prompts have the same width: no padding)."""
    memo, bos = _memo(tokenizer), tokenizer.bos_token_id  # an HF special-token attribute costs ~4 µs a read
    rows = [[bos] + _ids(tokenizer, p.prompt, memo) for p in problems]
    if any(len(r) != PROMPT_LEN for r in rows):
        raise ValueError("a demo prompt did not encode to PROMPT_LEN tokens; the tokenizer and task disagree")
    return torch.tensor(rows, dtype=torch.long)


def encode_pairs(tokenizer, pairs: Sequence[tuple[Problem, str]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Teacher-forcing batch for (problem, answer) pairs.

    Returns ``input_ids`` (n, PROMPT_LEN + RESPONSE_LEN) and ``answer_mask`` (same
    shape, 1 on the answer tokens and the closing <eos>).  Answers must be 3
    characters (``A op B``).
    """
    prompts = encode_prompts(tokenizer, [p for p, _ in pairs])
    memo, eos = _memo(tokenizer), tokenizer.eos_token_id
    ans = []
    for _, a in pairs:
        ids = _ids(tokenizer, a, memo) + [eos]
        if len(ids) != RESPONSE_LEN:
            raise ValueError(f"answer {a!r} is not of the form 'A op B'")
        ans.append(ids)
    answers = torch.tensor(ans, dtype=torch.long)
    ids = torch.cat([prompts, answers], dim=1)
    mask = torch.zeros_like(ids)
    mask[:, PROMPT_LEN:] = 1
    return ids, mask


def sequence_logprob(model, input_ids: torch.Tensor, mask: torch.Tensor, chunk: int = 4096) -> torch.Tensor:
    """Σ_t log π(y_t | y_<t) over positions where ``mask`` is 1, per row (no grad)."""
    out = []
    dev = next(model.parameters()).device
    with torch.no_grad():
        for s in range(0, input_ids.shape[0], chunk):
            ids, m = input_ids[s : s + chunk].to(dev), mask[s : s + chunk].to(dev)
            logits = model(input_ids=ids).logits[:, :-1].float()
            lp = torch.log_softmax(logits, dim=-1).gather(-1, ids[:, 1:, None]).squeeze(-1)
            out.append((lp * m[:, 1:]).sum(-1).cpu())
    return torch.cat(out) if out else torch.zeros(0)


def sft(
    model, tokenizer, pairs: Sequence[tuple[Problem, str]], steps: int, batch: int, lr: float, seed: int, progress=None
) -> list[float]:
    """Supervised fine-tuning by teacher forcing; returns the loss per step.

    Loss: mean over answer tokens of −log π(y_t | prompt, y_<t) (AdamW, constant lr).
    """
    dev = next(model.parameters()).device
    ids, mask = encode_pairs(tokenizer, pairs)
    ids, mask = ids.to(dev), mask.to(dev)
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0, foreach=True)  # the default's bits, faster
    model.train()
    losses = []
    for _ in range(steps):
        idx = torch.randint(0, ids.shape[0], (batch,), generator=g)
        x, m = ids[idx.to(dev)], mask[idx.to(dev)]
        logits = model(input_ids=x).logits[:, :-1].float()
        nll = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1), reduction="none"
        )
        m1 = m[:, 1:].reshape(-1).float()
        loss = (nll * m1).sum() / m1.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        if progress is not None:
            progress.update(1)
    model.eval()
    return losses
