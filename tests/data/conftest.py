"""A tiny tokenizer with a chat template, built here (no hub access on CI machines)."""

from __future__ import annotations

import pytest

# ChatML-like template; tests compute the rendered text themselves from this description:
# "<|im_start|>{role}\n{content}<|im_end|>\n" per message, then "<|im_start|>assistant\n".
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIALS = ["<|im_start|>", "<|im_end|>", "<|endoftext|>"]


def render(messages: list[dict]) -> str:
    """The template above, written out in Python."""
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages) + "<|im_start|>assistant\n"


@pytest.fixture(scope="session")
def render_chat():
    """The chat template written out in Python (for independent token counts)."""
    return render


@pytest.fixture(scope="session")
def tiny_tokenizer_dir(tmp_path_factory):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    corpus = [
        "Please reason step by step, and put your final answer within \\boxed{}.",
        "What is 1 + 1? Find the value of x such that x^2 = 4. Compute the sum of all integers.",
        "system user assistant problem answer triangle circle probability",
    ] * 20
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   additional_special_tokens=SPECIALS[:2])
    fast.chat_template = CHAT_TEMPLATE
    d = tmp_path_factory.mktemp("tiny_tok")
    fast.save_pretrained(str(d))
    return str(d)


@pytest.fixture(scope="session")
def raw_tokenizer(tiny_tokenizer_dir):
    """The saved `tokenizers` object, used to count tokens independently of the chat-template code."""
    from tokenizers import Tokenizer

    return Tokenizer.from_file(f"{tiny_tokenizer_dir}/tokenizer.json")
