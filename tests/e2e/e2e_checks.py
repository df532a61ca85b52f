"""Assertions shared by the e2e tests (metrics as verl's file logger wrote them, one dict per step)."""

from __future__ import annotations

import math


def assert_cue_from_signatures(steps: list[dict]) -> None:
    """``cue_grpo`` with reward-side signatures (``reward_kwargs.cue_set``): every partitioned group was
    clustered from the reward's ``cue_sig`` (none from text, nothing decoded), the hook's prefetch was
    joined, the estimator used the hook's partition unchanged, the diagnostics are finite and in range,
    and at least one group was partitioned over the run."""
    partitioned = 0.0
    for m in steps:
        cue = {k: v for k, v in m.items() if k.startswith("cue/")}
        assert all(math.isfinite(v) for v in cue.values()), cue
        # The hook's prepare step partitioned from `acc`; the estimator used it unchanged.
        assert m["cue/groups_repartitioned"] == 0.0, cue
        g = m["cue/groups_partitioned"]
        partitioned += g
        assert m["cue/groups_from_signatures"] == g and m["cue/groups_from_text"] == 0.0, cue
        # with signatures the hook read and decoded no response; its background prefetch was joined
        assert m["verl_focal/decoded_rows"] == 0.0 and m["verl_focal/prefetched"] == 1.0, m
        if g > 0:
            assert m["cue/clusters_per_group"] >= 1.0
            assert 0.0 <= m["cue/frac_groups_multi_cluster"] <= 1.0
            # algorithm.cue.clip = [0.3, 3.0] (packaged default)
            assert 0.3 - 1e-9 <= m["cue/w_min"] <= m["cue/w_mean"] <= m["cue/w_max"] <= 3.0 + 1e-9
    assert partitioned >= 1, "no group with >= 2 correct answers in two steps"
