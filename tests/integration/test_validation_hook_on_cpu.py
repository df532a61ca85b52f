"""Unbiased pass@k logged by the hooked v1 trainer next to verl's own validation metrics."""

from math import comb

import pytest
import verl  # noqa: F401

from verl_harness import v1_trainer


def test_hooked_trainer_adds_unbiased_pass_at_k(composed_config):
    trainer = v1_trainer(composed_config([]))
    # two prompts x 4 samples: c = 1 and c = 3
    uids = ["a"] * 4 + ["b"] * 4
    acc = [1, 0, 0, 0, 1, 1, 0, 1]
    sources = ["math"] * 8
    extras = {"reward": [float(x) for x in acc], "acc": acc}
    metrics = trainer._val_metrics_update(sources, uids, extras, [])
    # verl's own (biased) best@k is still there ...
    assert any(k.startswith("val-core/math/acc/") for k in metrics)
    # ... and ours, exactly 1 - C(n-c, k)/C(n, k) averaged over prompts
    for k in (1, 2, 4):
        expected = ((1 - comb(3, k) / comb(4, k)) + (1 - comb(1, k) / comb(4, k))) / 2
        assert metrics[f"val-aux/math/unbiased_pass@{k}"] == pytest.approx(expected)
