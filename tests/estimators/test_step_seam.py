"""The one step seam (step/seam.py begin / finish) on a stand-in estimator: the prefetch is joined once for
the same rows, and a prefetch that fails to start, or fails, is counted and never stops the step."""

from types import SimpleNamespace

import numpy as np
import pytest

from verl_focal.estimators.context import AdvantageContext, current_context
from verl_focal.estimators.spec import EstimatorSpec
from verl_focal.step.seam import PENDING, begin, finish

SPEC = EstimatorSpec("stand_in", lambda *a, **k: None, needs=frozenset({"acc"}))
UIDS = ("a", "a", "b", "b")


def _build(step):
    return AdvantageContext(uids=np.array(UIDS, dtype=object), acc=np.array([1.0, 0.0, 1.0, 1.0]))


def _boom(*_):
    raise RuntimeError("boom")


@pytest.mark.parametrize("case", ["prefetched", "other_rows", "start_failed", "build_failed", "not_ours"])
def test_finish_joins_the_prefetch_once_and_counts_a_failure_in_one_place(case):
    owner, metrics = SimpleNamespace(), {}
    rows = _boom if case == "start_failed" else (lambda: UIDS)
    begin(owner, None if case == "not_ours" else SPEC, {}, rows, _boom if case == "build_failed" else _build)
    seen = []
    out = finish(SPEC, {}, _build, lambda ctx: seen.append(current_context() is ctx) or "out", metrics, owner,
                 UIDS[::-1] if case == "other_rows" else UIDS)
    assert out == "out" and seen == [True] and getattr(owner, PENDING) is None  # the contextvar carries ctx
    assert metrics.get("verl_focal/prefetched", 0.0) == (1.0 if case == "prefetched" else 0.0)
    assert metrics.get("verl_focal/prefetch_failed", 0.0) == (1.0 if case.endswith("_failed") else 0.0)
    assert metrics["verl_focal/acc_rows_frac"] == 1.0


def test_a_narrowed_context_leaves_what_the_prefetch_computed_for_all_rows_behind():
    ctx = _build(None)
    ctx.prefetched["cue:prefetched_labels"] = (np.zeros(4), {"cue/partitioned_in_prefetch": 1.0})
    sub = ctx.select(np.array([0, 2]))
    assert sub.prefetched == {} and list(sub.uids) == ["a", "b"] and sub.metrics is ctx.metrics
