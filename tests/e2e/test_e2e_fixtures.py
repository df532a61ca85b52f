"""Fast checks of the e2e fixtures themselves (no verl, no Ray): the reward and the tiny task.

The end-to-end assertions only mean something if the reward scores as documented and
an untrained model gets a mixed share of answers right (else every group is all-wrong,
every advantage is 0 and DAPO filtering never finishes a batch).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from reward_fn import compute_score, cue_signature  # noqa: E402


def test_reward_acc_is_answer_digit_present():
    hit = compute_score("e2e_tiny_arith", "The answer is 7.", "7")
    miss = compute_score("e2e_tiny_arith", "The answer is 8.", "7")
    assert hit == {"score": 1.0, "acc": 1.0, "pred": "7", "cue_sig": "digits+words+symbols"}
    assert miss["acc"] == 0.0 and miss["score"] == 0.0 and miss["pred"] == "8"
    empty = compute_score("e2e_tiny_arith", "", "3")
    assert empty == {"score": 0.0, "acc": 0.0, "pred": "", "cue_sig": "none"}


def test_reward_returns_the_same_keys_for_every_response():
    # verl's reward loop stacks extras per key: a missing key in one response breaks the batch.
    keys = {frozenset(compute_score("s", text, "5")) for text in ["5", "abc", "", "+?", "55 five"]}
    assert keys == {frozenset({"score", "acc", "pred", "cue_sig"})}


@pytest.mark.parametrize(
    "text,label",
    [("12", "digits"), ("mod", "words"), ("?", "symbols"), ("a1", "digits+words"), (" \n", "none")],
)
def test_cue_signature_classes(text, label):
    assert cue_signature(text) == label


def test_untrained_tiny_model_mixes_right_and_wrong(tmp_path):
    """Sampling the random tiny model on a prompt gives acc strictly between 0.1 and 0.9."""
    torch = pytest.importorskip("torch")
    from tiny_assets import build_all
    from transformers import AutoModelForCausalLM, AutoTokenizer

    paths = build_all(tmp_path, seed=0)
    tok = AutoTokenizer.from_pretrained(paths["model"])
    model = AutoModelForCausalLM.from_pretrained(paths["model"])
    # The chat template renders the message verbatim and opens an assistant turn.
    text = tok.apply_chat_template(
        [{"role": "user", "content": "What is 3 + 4 mod 10?"}], add_generation_prompt=True, tokenize=False
    )
    assert text == "<|user|>What is 3 + 4 mod 10?<|end|><|assistant|>"
    ids = tok(text, return_tensors="pt").input_ids
    torch.manual_seed(0)
    out = model.generate(ids.repeat(64, 1), do_sample=True, max_new_tokens=12, pad_token_id=tok.pad_token_id)
    responses = tok.batch_decode(out[:, ids.shape[1] :], skip_special_tokens=True)
    acc = sum(compute_score("s", r, "7")["acc"] for r in responses) / len(responses)
    assert 0.1 < acc < 0.9, acc
