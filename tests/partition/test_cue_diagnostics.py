"""Step diagnostics of the partition and credit (cue/* metrics)."""

from __future__ import annotations

import numpy as np
import pytest

from verl_focal.core.credit import credit_multipliers_batch
from verl_focal.partition.diagnostics import credit_diagnostics


def test_grpo_slope_is_one_and_counts():
    g = np.array([0] * 6 + [1] * 4 + [2] * 3)
    c = np.array([0, 0, 0, 1, 1, 2] + [0, 0, 0, 0] + [-1, -1, -1])
    d = credit_diagnostics(g, c, np.ones(len(g)))
    assert d["cue/groups_partitioned"] == 2  # group 2 has no partitioned row
    assert d["cue/clusters_per_group"] == pytest.approx((3 + 1) / 2)
    assert d["cue/frac_groups_multi_cluster"] == pytest.approx(0.5)
    assert d["cue/credit_size_slope"] == pytest.approx(1.0)
    assert d["cue/singleton_credit_share"] == pytest.approx(1 / 10)
    assert (d["cue/w_min"], d["cue/w_max"], d["cue/w_mean"]) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize("alpha", [0.5, 0.8, 1.0])
def test_raw_rule_slope_is_one_minus_alpha(alpha):
    g = np.zeros(10, dtype=int)
    c = np.array([0] * 6 + [1] * 3 + [2])
    w = credit_multipliers_batch(g, c, alpha=alpha, clip=None)
    d = credit_diagnostics(g, c, w)
    assert d["cue/credit_size_slope"] == pytest.approx(1 - alpha, abs=1e-9)
    # singleton share: w of the singleton / n+ ; w_single = 10 / (6^(1-a) + 3^(1-a) + 1)
    assert d["cue/singleton_credit_share"] == pytest.approx(1 / (6 ** (1 - alpha) + 3 ** (1 - alpha) + 1))


def test_slope_omitted_when_sizes_equal_and_empty_input():
    d = credit_diagnostics([0, 0, 0, 0], [0, 0, 1, 1], np.ones(4))
    assert "cue/credit_size_slope" not in d
    assert credit_diagnostics([0, 1], [-1, -1], [1.0, 1.0]) == {"cue/groups_partitioned": 0.0}
