"""The hook decodes response text only for the rows an estimator will read.

``text_rows`` predicts those rows (correct rows of mixed groups with >= 2 correct, minus groups
clustered from reward-side signatures); ``LazyTexts`` decodes them in one batch and any other row
on demand.  Plain Python data, no verl, no TransferQueue.
"""

from __future__ import annotations

import numpy as np
import pytest

from verl_focal.estimators.context import AdvantageContext, LazyTexts
from verl_focal.step.rows import text_rows

#           g0: 3 correct, 1 wrong (mixed)   g1: 1 correct   g2: all correct   g3: acc missing on one row
UIDS = ["g0", "g1", "g0", "g2", "g0", "g1", "g2", "g0", "g3", "g3"]
ACC = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, np.nan]


def _expected(uids, acc, sigs=None):
    """Independent loop version of the rule in text_rows' docstring."""
    out = []
    for i, u in enumerate(uids):
        members = [j for j, v in enumerate(uids) if v == u]
        if any(np.isnan(acc[j]) for j in members):
            pick = True
        else:
            pos = [j for j in members if acc[j] > 0.5]
            pick = acc[i] > 0.5 and len(pos) >= 2 and len(pos) < len(members)
            if pick and sigs is not None:
                pick = any(not (isinstance(sigs[j], str) and ":" in sigs[j]) for j in pos)
        out.append(pick)
    return out


def test_text_rows_are_correct_rows_of_mixed_groups_and_groups_without_acc():
    got = text_rows(np.array(UIDS, dtype=object), np.array(ACC))
    assert got.tolist() == _expected(UIDS, ACC)
    assert got.tolist() == [True, False, True, False, False, False, False, True, True, True]


def test_signed_groups_need_no_text_but_a_group_with_one_unsigned_row_does():
    sigs = ["math_v1:cw", None, "math_v1:", None, None, None, None, "math_v1:!timeout", None, None]
    assert text_rows(UIDS, np.array(ACC), sigs).tolist() == _expected(UIDS, ACC, sigs)
    assert not text_rows(UIDS, np.array(ACC), sigs)[[0, 2, 7]].any()  # g0 fully signed (a failure is a signature)
    sigs[2] = ""  # the reward's empty string after an error is not a signature: g0 needs its text
    assert text_rows(UIDS, np.array(ACC), sigs)[[0, 2, 7]].all()


def test_without_acc_every_row_may_be_read():
    assert text_rows(UIDS, None).all()


class _Source:
    def __init__(self, texts):
        self.texts = texts
        self.calls: list[list[int]] = []

    def fetch(self, rows):
        self.calls.append(rows.tolist())
        return [[ord(c) for c in self.texts[i]] for i in rows]

    @staticmethod
    def decode(ids):
        return ["".join(map(chr, x)) for x in ids]


def test_lazy_texts_preloads_in_one_batch_and_loads_the_rest_once_on_a_miss():
    texts = [f"text {i}" for i in range(6)]
    src = _Source(texts)
    lazy = LazyTexts(6, src.fetch, src.decode, preload=np.array([0, 1, 0, 1, 0, 0], dtype=bool))
    assert src.calls == [[1, 3]] and lazy.decoded_rows == 2
    assert lazy[1] == "text 1" and lazy[-3] == "text 3" and src.calls == [[1, 3]]  # no new fetch
    assert lazy[4] == "text 4"  # a miss loads every row not yet loaded, in one batch
    assert src.calls == [[1, 3], [0, 2, 4, 5]] and lazy.decoded_rows == 6 and lazy.batches == 2
    assert list(lazy) == texts and lazy == texts and lazy[1:3] == texts[1:3]
    assert len(src.calls) == 2
    with pytest.raises(IndexError, match="row 6 out of range for 6 rows"):
        lazy[6]


def test_lazy_texts_with_nothing_expected_decodes_nothing_until_read():
    src = _Source(["a", "b"])
    lazy = LazyTexts(2, src.fetch, src.decode, preload=np.zeros(2, dtype=bool))
    ctx = AdvantageContext(uids=["u", "u"], acc=[1.0, 0.0], responses=lazy)  # a context takes it as a row column
    assert src.calls == [] and lazy.decoded_rows == 0 and lazy.fetch_s == 0.0
    assert ctx.responses[0] == "a" and src.calls == [[0, 1]]


def test_lazy_texts_rejects_a_decoder_that_loses_rows():
    with pytest.raises(RuntimeError, match="decoding 2 rows gave 1 texts"):
        LazyTexts(2, lambda rows: [[1], [2]], lambda ids: ["x"], preload=np.ones(2, dtype=bool))
