"""unbiased_pass_at_k_metrics: the validation-metric adapter (pure numpy)."""

from __future__ import annotations

import math

import pytest

from verl_focal.validation import unbiased_pass_at_k_metrics


def test_values_by_source_and_prompt():
    # source A: prompt p1 4 samples 1 correct, p2 4 samples 3 correct; source B: p3 2 samples 0 correct
    uids = ["p1"] * 4 + ["p2"] * 4 + ["p3"] * 2
    accs = [1, 0, 0, 0, 1, 1, 0, 1, 0, 0]
    srcs = ["A"] * 8 + ["B"] * 2
    m = unbiased_pass_at_k_metrics(uids, accs, data_sources=srcs)
    p = lambda n, c, k: 1 - math.comb(n - c, k) / math.comb(n, k)  # noqa: E731
    assert m["val-aux/A/unbiased_pass@1"] == pytest.approx((1 / 4 + 3 / 4) / 2)
    assert m["val-aux/A/unbiased_pass@2"] == pytest.approx((p(4, 1, 2) + p(4, 3, 2)) / 2)
    assert m["val-aux/A/unbiased_pass@4"] == pytest.approx(1.0)
    assert "val-aux/A/unbiased_pass@8" not in m
    assert m["val-aux/B/unbiased_pass@2"] == 0.0 and "val-aux/B/unbiased_pass@4" not in m
    assert m["val-aux/A/unbiased_pass@k_prompts"] == 2.0


def test_default_source_explicit_ks_and_bad_rows():
    m = unbiased_pass_at_k_metrics(
        ["u", "u", "u", "v", "v", "v"], [1.0, None, 0.0, float("nan"), 1.0, 1.0], ks=[1, 2, 3]
    )
    assert m["val-aux/all/unbiased_pass@k_dropped_rows"] == 2.0
    # u: n=2 c=1; v: n=2 c=2 -> k=3 exceeds min n and is left out
    assert m["val-aux/all/unbiased_pass@1"] == pytest.approx((0.5 + 1.0) / 2)
    assert m["val-aux/all/unbiased_pass@2"] == pytest.approx((1.0 + 1.0) / 2)
    assert "val-aux/all/unbiased_pass@3" not in m


def test_misaligned_inputs_are_refused():
    with pytest.raises(ValueError, match="2 uids but 1 accs"):
        unbiased_pass_at_k_metrics(["a", "b"], [1.0])
