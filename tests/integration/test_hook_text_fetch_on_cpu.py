"""What the v1 hook reads and decodes, and the timings it logs (real TransferQueue, real
``_compute_advantage``; the setup of test_cue_v1_hook_on_cpu.py).

With reward-side signatures no response is decoded; partitioning from text decodes only the
correct rollouts of mixed groups; every step logs ``verl_focal/fetch_s``, ``decode_s``,
``decoded_rows``, ``prepare_s`` and ``advantage_s``.
"""

from __future__ import annotations

import numpy as np
import test_cue_v1_hook_on_cpu
import verl  # noqa: F401
from test_cue_v1_hook_on_cpu import _put, _trainer, cue_corpus

tokenizer = test_cue_v1_hook_on_cpu.tokenizer  # the module-scoped fixture, shared by re-binding it here


def _rows():
    return [r for r in cue_corpus.batch_rows() if r[0] != "pad"]


def _advantages(tq, meta):
    got = tq.kv_batch_get(keys=meta.keys, partition_id="train", select_fields=["advantages"])
    return np.array([t[0].item() for t in got["advantages"].unbind()])


def _reference(rows, meta):
    ref = cue_corpus.reference_advantages(rows)
    by_key = {f"{r[0]}_{k}_0": ref[k] for k, r in enumerate(rows)}
    return [by_key[k] for k in meta.keys]


def test_with_signatures_no_response_is_fetched_or_decoded(transfer_queue, composed_config, tokenizer):
    rows = _rows()
    meta, _ = _put(transfer_queue, tokenizer, rows, True, np.random.default_rng(3))
    trainer = _trainer(composed_config, tokenizer, ["algorithm.adv_estimator=cue_grpo"])  # source=auto
    calls = []
    trainer.tokenizer = _CountingTokenizer(tokenizer, calls)
    metrics: dict = {}
    trainer._compute_advantage(meta, metrics)
    assert calls == []
    assert metrics["verl_focal/decoded_rows"] == 0.0 and metrics["verl_focal/decode_s"] == 0.0
    assert metrics["cue/groups_from_signatures"] == len(cue_corpus.PROBLEMS)
    for key in ("verl_focal/fetch_s", "verl_focal/prepare_s", "verl_focal/advantage_s"):
        assert metrics[key] > 0.0, key
    np.testing.assert_allclose(_advantages(transfer_queue, meta), _reference(rows, meta), atol=1e-5)


def test_from_text_only_correct_rows_of_mixed_groups_are_decoded_in_one_batch(
    transfer_queue, composed_config, tokenizer
):
    rows = _rows()
    meta, _ = _put(transfer_queue, tokenizer, rows, False, np.random.default_rng(4))
    trainer = _trainer(composed_config, tokenizer, ["algorithm.adv_estimator=cue_grpo"])
    calls = []
    trainer.tokenizer = _CountingTokenizer(tokenizer, calls)
    metrics: dict = {}
    trainer._compute_advantage(meta, metrics)
    n_correct = sum(1 for r in rows if r[2] > 0.5)  # every corpus group is mixed (2 wrong answers each)
    assert n_correct < len(rows)
    assert calls == [n_correct]  # one batch, only the correct rollouts
    assert metrics["verl_focal/decoded_rows"] == n_correct
    assert metrics["verl_focal/decode_s"] > 0.0
    assert metrics["cue/groups_from_text"] == len(cue_corpus.PROBLEMS)
    np.testing.assert_allclose(_advantages(transfer_queue, meta), _reference(rows, meta), atol=1e-5)


def test_f_grpo_logs_fetch_and_advantage_time_but_reads_no_text(transfer_queue, composed_config, tokenizer):
    meta, _ = _put(transfer_queue, tokenizer, _rows(), False, np.random.default_rng(5))
    trainer = _trainer(composed_config, tokenizer, ["algorithm.adv_estimator=f_grpo"])
    metrics: dict = {}
    trainer._compute_advantage(meta, metrics)
    assert metrics["verl_focal/fetch_s"] > 0.0 and metrics["verl_focal/advantage_s"] > 0.0
    assert (
        "verl_focal/decode_s" not in metrics and "verl_focal/prepare_s" not in metrics
    )  # nothing to decode or prepare


class _CountingTokenizer:
    """The real tokenizer; records the size of every batch_decode call.  It hides its Rust
    backend, so the hook's decoder uses batch_decode for every row (test_decode.py covers the
    byte-level fast path)."""

    def __init__(self, tok, calls):
        self._tok, self._calls = tok, calls

    def batch_decode(self, ids, **kw):
        self._calls.append(len(ids))
        return self._tok.batch_decode(ids, **kw)

    def __getattr__(self, name):
        if name == "backend_tokenizer":
            raise AttributeError(name)
        return getattr(self._tok, name)


def test_prefetch_runs_in_the_background_and_the_step_reuses_its_rows(transfer_queue, composed_config, tokenizer,
                                                                       monkeypatch):
    import verl_focal.integration.cue_hook as cue_hook

    rows = _rows()
    meta, _ = _put(transfer_queue, tokenizer, rows, False, np.random.default_rng(6))
    trainer = _trainer(composed_config, tokenizer, ["algorithm.adv_estimator=cue_grpo"])
    calls = []
    trainer.tokenizer = _CountingTokenizer(tokenizer, calls)
    trainer._focal_prefetch(meta)  # what _compute_old_log_prob does before verl's log-prob pass
    trainer._focal_prefetched.wait()  # the old-log-prob pass would run here
    assert calls == [sum(1 for r in rows if r[2] > 0.5)]  # decoded in the background
    partitioned = []
    real_partition_rows = cue_hook.partition_rows
    monkeypatch.setattr(cue_hook, "partition_rows",
                        lambda *a, **k: partitioned.append(1) or real_partition_rows(*a, **k))
    metrics: dict = {}
    trainer._compute_advantage(meta, metrics)
    assert len(calls) == 1  # nothing decoded again
    assert partitioned == []  # nor partitioned again: the background did it
    assert metrics["verl_focal/prefetched"] == 1.0
    assert 0.0 <= metrics["verl_focal/prefetch_wait_s"] < 0.5
    # the cue signatures were extracted and clustered in the background; the step only took the labels
    assert metrics["cue/partitioned_in_prefetch"] == 1.0
    assert metrics["cue/groups_prefetched"] == metrics["cue/groups_from_text"] > 0
    np.testing.assert_allclose(_advantages(transfer_queue, meta), _reference(rows, meta), atol=1e-5)


def test_a_failed_prefetch_is_counted_and_the_step_does_the_work(transfer_queue, composed_config, tokenizer):
    from verl_focal.integration.trainer import FocalHookMixin

    rows = _rows()
    meta, _ = _put(transfer_queue, tokenizer, rows, True, np.random.default_rng(7))
    trainer = _trainer(composed_config, tokenizer, ["algorithm.adv_estimator=f_cue_grpo"])
    attempts = []

    def flaky_fetch(batch, needs, acc_key=None):
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError("storage unit went away")
        return FocalHookMixin._focal_fetch_context(trainer, batch, needs, acc_key)

    trainer._focal_fetch_context = flaky_fetch
    trainer._focal_prefetch(meta)
    metrics: dict = {}
    trainer._compute_advantage(meta, metrics)
    assert len(attempts) == 2
    assert metrics["verl_focal/prefetch_failed"] == 1.0 and "verl_focal/prefetched" not in metrics
    ref = cue_corpus.reference_advantages(rows, gamma=0.5)
    by_key = {f"{r[0]}_{k}_0": ref[k] for k, r in enumerate(rows)}
    np.testing.assert_allclose(_advantages(transfer_queue, meta), [by_key[k] for k in meta.keys], atol=1e-5)


def test_the_algorithm_config_is_parsed_once_per_step(transfer_queue, composed_config, tokenizer, monkeypatch):
    """The hook parses ``algorithm`` once (at the old-log-prob pass) and hands the typed settings to
    needs, prefetch, prepare and the estimator; none of them parses it again."""
    from verl_focal.config import schema

    rows = _rows()
    meta, _ = _put(transfer_queue, tokenizer, rows, False, np.random.default_rng(8))
    for estimator in ("cue_grpo", "f_grpo"):
        trainer = _trainer(composed_config, tokenizer, [f"algorithm.adv_estimator={estimator}"])
        calls: list = []
        real = schema.validate_algorithm_config

        def counting(*a, calls=calls, real=real, **k):
            calls.append(1)
            return real(*a, **k)

        monkeypatch.setattr(schema, "validate_algorithm_config", counting)
        trainer._focal_prefetch(meta)  # what _compute_old_log_prob does
        metrics: dict = {}
        trainer._compute_advantage(meta, metrics)
        assert len(calls) == 1, estimator
        assert metrics["verl_focal/advantage_s"] >= 0.0
        monkeypatch.setattr(schema, "validate_algorithm_config", real)
