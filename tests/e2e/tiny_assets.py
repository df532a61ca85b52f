"""Build a tiny local tokenizer, model and dataset for the CPU end-to-end runs.

Nothing is downloaded: the tokenizer is a byte-level BPE trained on a few generated
arithmetic lines, the model is a freshly initialised two-layer ``LlamaForCausalLM``
(hidden size 64) and the dataset is a parquet file in verl's RLHFDataset layout
(``data_source``, ``prompt`` as chat messages, ``reward_model.ground_truth``,
``extra_info``).

The answers are single digits and the training corpus is mostly digits, so an
untrained model already emits digits often: groups then mix right and wrong answers,
which is what the group-relative estimators need to produce non-zero advantages.

``model_type`` is ``llama`` on purpose: with ``qwen2`` transformers 5 swaps in its own
tokenizer class and the ids change.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

# A minimal chat template: every message is "<|role|>content<|end|>"; the generation
# prompt opens an assistant turn.  verl's continuous-token path renders assistant turns
# and the generation prompt separately, so both must be plain concatenations.
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
SPECIAL_TOKENS = ["<|pad|>", "<|bos|>", "<|end|>", "<|user|>", "<|assistant|>", "<|system|>"]
DATA_SOURCE = "e2e_tiny_arith"


def _corpus(rng: random.Random, n_lines: int) -> list[str]:
    lines = []
    for _ in range(n_lines):
        a, b = rng.randint(0, 9), rng.randint(0, 9)
        lines.append(f"What is {a} + {b} mod 10? The answer is {(a + b) % 10}.")
        lines.append(" ".join(str(rng.randint(0, 9)) for _ in range(8)))
    return lines


def build_tokenizer(out_dir: Path, seed: int = 0):
    """Train a byte-level BPE (96 tokens) and save it as a fast tokenizer.

    The alphabet is only the bytes seen in the corpus (no full 256-byte alphabet), so
    about a sixth of the vocabulary are digits and a random model names the right
    digit in a sizeable share of its answers.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    rng = random.Random(seed)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=96,
        special_tokens=SPECIAL_TOKENS,
        show_progress=False,
    )
    tok.train_from_iterator(_corpus(rng, 400), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<|bos|>",
        eos_token="<|end|>",
        pad_token="<|pad|>",
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out_dir)
    return fast


def build_model(out_dir: Path, tokenizer, seed: int = 0) -> None:
    """Save a randomly initialised 2-layer Llama (hidden 64) next to the tokenizer."""
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        # head size 32: vLLM's CPU attention supports 32 to 512 (vllm/v1/attention/backends/cpu_attn.py)
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=256,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
        torch_dtype="float32",
    )
    model = LlamaForCausalLM(config)
    model.save_pretrained(out_dir, safe_serialization=True)
    GenerationConfig(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    ).save_pretrained(out_dir)


def build_dataset(path: Path, n: int, seed: int, split: str) -> None:
    """Write ``n`` single-digit arithmetic prompts in verl's RLHFDataset parquet layout."""
    import pandas as pd

    rng = random.Random(seed)
    rows = []
    for i in range(n):
        a, b = rng.randint(0, 9), rng.randint(0, 9)
        answer = str((a + b) % 10)
        rows.append(
            {
                "data_source": DATA_SOURCE,
                "prompt": [{"role": "user", "content": f"What is {a} + {b} mod 10?"}],
                "ability": "math",
                "reward_model": {"style": "rule", "ground_truth": answer},
                "extra_info": {"split": split, "index": i},
            }
        )
    pd.DataFrame(rows).to_parquet(path)


def build_all(root: str | os.PathLike, seed: int = 0) -> dict[str, str]:
    """Build model, tokenizer, train and val parquet under ``root``; return their paths."""
    root = Path(root)
    model_dir = root / "tiny_llama"
    model_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(model_dir, seed=seed)
    build_model(model_dir, tokenizer, seed=seed)
    train, val = root / "train.parquet", root / "val.parquet"
    build_dataset(train, n=64, seed=seed + 1, split="train")
    build_dataset(val, n=8, seed=seed + 2, split="val")
    paths = {"model": str(model_dir), "train": str(train), "val": str(val)}
    (root / "assets.json").write_text(json.dumps(paths))
    return paths


if __name__ == "__main__":
    import sys

    print(json.dumps(build_all(sys.argv[1] if len(sys.argv) > 1 else "/tmp/e2e_assets")))
