"""What the v1 hook reads and decodes, and the timings it logs (real TransferQueue, verl's real
``_compute_old_log_prob`` and ``_compute_advantage``; the setup of test_cue_v1_hook_on_cpu.py).

With reward-side signatures no response is decoded; partitioning from text decodes only the
correct rollouts of mixed groups, in the background prefetch started at the old-log-prob pass;
every step logs ``verl_focal/fetch_s``, ``decode_s``, ``decoded_rows``, ``prepare_s`` and
``advantage_s``, each a part of the step it was measured in.
"""

from __future__ import annotations

import time

import numpy as np
import test_cue_v1_hook_on_cpu
import verl  # noqa: F401
from test_cue_v1_hook_on_cpu import _put, _trainer, cue_corpus

from verl_harness import ActorWorkerGroup, first_token_advantages

tokenizer = test_cue_v1_hook_on_cpu.tokenizer  # the module-scoped fixture, shared by re-binding it here


def _rows():
    return [r for r in cue_corpus.batch_rows() if r[0] != "pad"]


def _reference(rows, meta, gamma=None):
    ref = cue_corpus.reference_advantages(rows, gamma=gamma)
    by_key = {f"{r[0]}_{k}_0": ref[k] for k, r in enumerate(rows)}
    return [by_key[k] for k in meta.keys]


def _step(tq, trainer, meta) -> tuple[dict, float, float]:
    """verl's old-log-prob pass (the hook's prefetch starts first), then the advantage step; the metrics and
    the wall time of each call."""
    trainer.actor_rollout_wg = ActorWorkerGroup(tq)
    trainer.config.actor_rollout_ref.rollout.calculate_log_probs = False  # the rollout returned no log-probs
    metrics: dict = {}
    t0 = time.perf_counter()
    trainer._compute_old_log_prob(meta, metrics)
    t1 = time.perf_counter()
    trainer._compute_advantage(meta, metrics)
    return metrics, t1 - t0, time.perf_counter() - t1


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


def test_with_signatures_no_response_is_fetched_or_decoded(transfer_queue, composed_config, tokenizer):
    rows = _rows()
    meta, _ = _put(transfer_queue, tokenizer, rows, True, np.random.default_rng(3))
    calls = []
    trainer = _trainer(composed_config, _CountingTokenizer(tokenizer, calls), ["algorithm.adv_estimator=cue_grpo"])
    metrics, _, adv_wall = _step(transfer_queue, trainer, meta)
    assert calls == []
    assert metrics["verl_focal/decoded_rows"] == 0.0 and metrics["verl_focal/decode_s"] == 0.0
    assert metrics["cue/groups_from_signatures"] == len(cue_corpus.PROBLEMS)
    for key in ("verl_focal/prepare_s", "verl_focal/advantage_s"):  # parts of the advantage step
        assert 0.0 < metrics[key] <= adv_wall, key
    np.testing.assert_allclose(first_token_advantages(transfer_queue, meta), _reference(rows, meta), atol=1e-5)


def test_from_text_only_correct_rows_are_decoded_in_one_batch_in_the_background(
    transfer_queue, composed_config, tokenizer, monkeypatch
):
    """The prefetch started at the old-log-prob pass reads, decodes and partitions; the advantage step only
    takes the labels: nothing is decoded or partitioned again."""
    import verl_focal.estimators.cue_step as cue_step

    rows = _rows()
    meta, _ = _put(transfer_queue, tokenizer, rows, False, np.random.default_rng(4))
    calls = []
    trainer = _trainer(composed_config, _CountingTokenizer(tokenizer, calls), ["algorithm.adv_estimator=cue_grpo"])
    partitioned = []
    real_partition_rows = cue_step.partition_rows
    monkeypatch.setattr(cue_step, "partition_rows",
                        lambda *a, **k: partitioned.append(1) or real_partition_rows(*a, **k))
    metrics, _, adv_wall = _step(transfer_queue, trainer, meta)
    n_correct = sum(1 for r in rows if r[2] > 0.5)  # every corpus group is mixed (2 wrong answers each)
    assert n_correct < len(rows)
    assert calls == [n_correct]  # one batch, only the correct rollouts
    assert partitioned == [1]  # once, in the prefetch
    assert metrics["verl_focal/decoded_rows"] == n_correct and metrics["verl_focal/decode_s"] > 0.0
    assert metrics["verl_focal/prefetched"] == 1.0 and metrics["verl_focal/prefetch_wait_s"] <= adv_wall
    assert metrics["cue/partitioned_in_prefetch"] == 1.0
    assert metrics["cue/groups_prefetched"] == metrics["cue/groups_from_text"] == len(cue_corpus.PROBLEMS)
    np.testing.assert_allclose(first_token_advantages(transfer_queue, meta), _reference(rows, meta), atol=1e-5)


def test_f_grpo_reads_no_text_and_its_reward_extras_in_the_background(transfer_queue, composed_config, tokenizer):
    meta, _ = _put(transfer_queue, tokenizer, _rows(), False, np.random.default_rng(5))
    trainer = _trainer(composed_config, tokenizer, ["algorithm.adv_estimator=f_grpo"])
    metrics, _, adv_wall = _step(transfer_queue, trainer, meta)
    assert 0.0 < metrics["verl_focal/advantage_s"] <= adv_wall
    assert metrics["verl_focal/prefetched"] == 1.0  # the TransferQueue read ran during verl's pass
    assert not {"verl_focal/decode_s", "verl_focal/prepare_s"} & set(metrics)  # nothing to decode or prepare


def test_a_failed_prefetch_is_counted_and_the_step_does_the_work(transfer_queue, composed_config, tokenizer,
                                                                 monkeypatch):
    import verl_focal.integration.hooks.trainer as hook

    rows = _rows()
    meta, _ = _put(transfer_queue, tokenizer, rows, True, np.random.default_rng(7))
    trainer = _trainer(composed_config, tokenizer, ["algorithm.adv_estimator=f_cue_grpo"])
    attempts = []
    real_rows = hook.tq_rows

    def flaky_rows(*args, **kwargs):
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError("storage unit went away")
        return real_rows(*args, **kwargs)

    monkeypatch.setattr(hook, "tq_rows", flaky_rows)
    metrics, _, _ = _step(transfer_queue, trainer, meta)
    assert len(attempts) == 2
    assert metrics["verl_focal/prefetch_failed"] == 1.0 and "verl_focal/prefetched" not in metrics
    np.testing.assert_allclose(first_token_advantages(transfer_queue, meta), _reference(rows, meta, gamma=0.5),
                               atol=1e-5)


def test_the_algorithm_config_is_parsed_once_per_step(transfer_queue, composed_config, tokenizer, monkeypatch):
    """The hook parses ``algorithm`` once per step (at the old-log-prob pass for an estimator with a prefetch,
    else at the advantage step) and hands the typed settings to needs, prefetch, prepare and the estimator."""
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
        _step(transfer_queue, trainer, meta)
        assert len(calls) == 1, estimator
        monkeypatch.setattr(schema, "validate_algorithm_config", real)
