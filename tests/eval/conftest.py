"""Fixtures for the eval tests: a tiny local chat model (no hub) and a small eval parquet."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def build_tiny_model(path: Path, seed: int = 0) -> Path:
    """Byte-level BPE tokenizer + LlamaForCausalLM (hidden 64, 2 layers), saved to ``path``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<pad>", "<s>", "</s>", "<|user|>", "<|system|>", "<|assistant|>"]
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    corpus = [
        "What is 1 + 1? The answer is \\boxed{2}.",
        "Please reason step by step.",
        "x = 3, y = 4, so x + y = 7",
    ] * 20
    tok.train_from_iterator(corpus, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    fast.chat_template = CHAT_TEMPLATE
    path.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(path)
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=len(fast), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=256,
                      bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id)
    LlamaForCausalLM(cfg).save_pretrained(path)
    return path


def write_eval_parquet(path: Path, problems: list[tuple[str, str, str]]) -> Path:
    """problems: (data_source, question, answer) -> parquet in verl's RL schema."""
    import pandas as pd

    rows = []
    for i, (src, q, a) in enumerate(problems):
        rows.append({
            "data_source": src,
            "prompt": [{"role": "system", "content": "Please reason step by step."}, {"role": "user", "content": q}],
            "ability": "math",
            "reward_model": {"style": "rule", "ground_truth": a},
            "extra_info": {"index": i, "split": "test"},
        })
    pd.DataFrame(rows).to_parquet(path)
    return path


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """CPU tests share 2 cores with other jobs: intra-op threads only oversubscribe them (10x
    slower generation).  Applies only while an eval test runs, and only if torch is loaded."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture()
def parquet_writer():
    return write_eval_parquet


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0)


@pytest.fixture(scope="session")
def tiny_model_b(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny_b") / "model", seed=1)


@pytest.fixture()
def eval_parquet(tmp_path) -> Path:
    probs = [("verl_focal/aime24", f"What is {i} + {i}?", str(2 * i)) for i in range(3)]
    probs += [("verl_focal/gpqa_diamond", f"Pick the letter {c}.", c) for c in "AB"]
    return write_eval_parquet(tmp_path / "eval.parquet", probs)
