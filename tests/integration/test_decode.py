"""The hook's batch decoder gives exactly ``tokenizer.batch_decode(..., skip_special_tokens=True)``.

Real fast tokenizers built here: a byte-level BPE (the table path) trained on the cue test corpus
plus non-ASCII text, and a word-level one (no table: the tokenizer's own decode).  Ids are drawn
at random, so rows cut multi-byte characters and hold special tokens.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch

from verl_focal.step.columns import nested_rows
from verl_focal.step.decode import BatchDecoder, byte_level_table

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "partition"))
import cue_corpus  # noqa: E402

EXTRA = ["Soit x ∈ ℝ, alors x² ≥ 0 — égalité ssi x = 0.", "三角形の面積は 1/2·底辺·高さ。", "emoji 🙂 ok"]


def _byte_bpe():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(cue_corpus.all_texts() + EXTRA, trainers.BpeTrainer(
        vocab_size=700, special_tokens=["<pad>", "<eos>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>")
    fast.add_tokens(["<step>"])  # a non-special added token: kept by skip_special_tokens
    return fast


@pytest.fixture(scope="module")
def bpe():
    return _byte_bpe()


def test_table_path_equals_batch_decode_on_real_and_random_rows(bpe):
    dec = BatchDecoder(bpe)
    assert dec.fast
    real = [bpe(t, add_special_tokens=False)["input_ids"] for t in cue_corpus.all_texts()[:6] + EXTRA]
    rng = np.random.default_rng(0)
    noise = [rng.integers(0, len(bpe), size=int(n)) for n in rng.integers(0, 300, size=40)]  # cut UTF-8, specials
    rows = [np.asarray(r) for r in real] + noise
    assert dec(rows) == bpe.batch_decode([r.tolist() for r in rows], skip_special_tokens=True)
    assert dec(noise[:3]) == bpe.batch_decode([r.tolist() for r in noise[:3]], skip_special_tokens=True)
    assert dec.fast and dec.fallbacks == 0
    specials = [bpe.convert_tokens_to_ids("<pad>"), bpe.convert_tokens_to_ids("<step>")]
    assert dec([np.array(specials)]) == ["<step>"]


def test_a_table_that_disagrees_with_the_tokenizer_is_dropped_for_good(bpe):
    dec = BatchDecoder(bpe)
    ids = bpe("The answer is 110.", add_special_tokens=False)["input_ids"]
    dec.table[ids[0]] = b"WRONG"  # as if the table missed some decoder rule
    expected = bpe.batch_decode([ids], skip_special_tokens=True)
    assert dec([np.array(ids)]) == expected
    assert not dec.fast and dec.fallbacks == 1
    assert dec([np.array(ids)]) == expected


def test_other_tokenizers_use_their_own_decode():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<pad>", "case", "one", "two", "answer", "is", "7"]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    wl = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>")
    assert byte_level_table(wl) is None
    dec = BatchDecoder(wl)
    rows = [np.array([4, 5, 6]), np.array([1, 0, 2])]
    assert (
        dec(rows)
        == wl.batch_decode([r.tolist() for r in rows], skip_special_tokens=True)
        == ["answer is 7", "case one"]
    )


def test_nested_rows_views_a_jagged_column_row_by_row():
    col = torch.nested.as_nested_tensor([torch.tensor([1, 2, 3]), torch.tensor([4]), torch.tensor([5, 6])],
                                        layout=torch.jagged)
    assert [r.tolist() for r in nested_rows(col)] == [[1, 2, 3], [4], [5, 6]]
    assert [r.tolist() for r in nested_rows(torch.tensor([[1, 2], [3, 4]]))] == [[1, 2], [3, 4]]
    assert [r.tolist() for r in nested_rows([[7, 8], [9]])] == [[7, 8], [9]]
