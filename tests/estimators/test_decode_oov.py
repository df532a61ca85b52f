"""Token ids outside the tokenizer keep the fast decoder on (finding 7 of the GPU audit).

Engines with a padded vocabulary can sample ids ≥ ``len(tokenizer)`` (Qwen2.5: 152,064 logits for a
151,665-token tokenizer).  The tokenizer's own decoder skips an id it does not know; the byte table must give
that same text, and stay in use.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from verl_focal.step.decode import BatchDecoder
from verl_harness import byte_level_tokenizer

TEXTS = ["The answer is 110.", "Soit x ∈ ℝ, alors x² ≥ 0.", "三角形の面積は 1/2·底辺·高さ。", "emoji 🙂 ok"] * 10


@pytest.fixture(scope="module")
def tok():
    return byte_level_tokenizer(TEXTS, vocab_size=400)


def _rows(tok):
    n = len(tok)
    rows = [tok(t, add_special_tokens=False)["input_ids"] for t in TEXTS[:4]]
    rng = np.random.default_rng(0)
    noisy = []
    for r in rows:  # out-of-vocabulary ids at random places, inside multi-byte characters too
        r = list(r)
        for pos in sorted(rng.integers(0, len(r) + 1, size=3).tolist(), reverse=True):
            r.insert(pos, int(rng.choice([n, n + 3, n + 63])))
        noisy.append(r)
    return rows, noisy


def test_the_tokenizer_skips_an_id_it_does_not_know(tok):
    """What the fast path must match: ``batch_decode`` drops an out-of-vocabulary id and joins its neighbours'
    bytes, as if the id were not there."""
    rows, noisy = _rows(tok)
    assert any(i >= len(tok) for r in noisy for i in r)
    assert tok.batch_decode(noisy, skip_special_tokens=True) == tok.batch_decode(rows, skip_special_tokens=True)
    assert tok.batch_decode([[len(tok) + 3]], skip_special_tokens=True) == [""]


def test_out_of_vocabulary_ids_keep_the_fast_path(tok):
    rows, noisy = _rows(tok)
    dec = BatchDecoder(tok)
    assert dec.fast
    expected = tok.batch_decode(noisy, skip_special_tokens=True)
    assert dec([np.asarray(r) for r in noisy]) == expected
    assert dec([torch.tensor(r) for r in noisy[:2]]) == expected[:2]  # a later call: the sampled check again
    assert dec.fast and dec.fallbacks == 0
    assert dec.out_of_vocab == sum(i >= len(tok) for r in noisy + noisy[:2] for i in r)
    assert dec([np.array([len(tok) + 7])]) == [""]
