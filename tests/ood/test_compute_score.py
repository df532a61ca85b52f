"""IFEval and SynLogic responses through verl_focal.reward.compute_score (verl's entry point)."""

from __future__ import annotations

import concurrent.futures as cf
import json

import pytest

from verl_focal.ood import ood_kind
from verl_focal.reward import compute_score

IFEVAL_GT = json.dumps({"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}], "prompt": "p"})
SUDOKU_META = {"original_sudoku": [[0] * 9 for _ in range(9)]}
SUDOKU = [[(r * 3 + r // 3 + c) % 9 + 1 for c in range(9)] for r in range(9)]
SYN_GT = json.dumps({"task": "sudoku", "answer": None, "metadata": SUDOKU_META})
MATH_KEYS = set(compute_score("verl_focal/math500", "\\boxed{2}", "2"))


@pytest.mark.parametrize("name, kind", [
    ("verl_focal/ifeval", "ifeval"), ("ifeval", "ifeval"), ("verl_focal/synlogic", "synlogic"),
    ("synlogic/sudoku", "synlogic"), ("verl_focal/synlogic/sudoku", "synlogic"),
    ("verl_focal/math500", None), ("ifeval_x", None), ("synlogicx", None), (None, None),
])
def test_routing_names(name, kind):
    assert ood_kind(name) == kind


def test_ifeval_through_compute_score_same_keys_as_math():
    ok = compute_score("verl_focal/ifeval", "no commas here", IFEVAL_GT)
    bad = compute_score("verl_focal/ifeval", "a, b", IFEVAL_GT)
    assert set(ok) == set(bad) == MATH_KEYS
    assert (ok["score"], ok["acc"], ok["pred"], ok["verify_timeout"]) == (1.0, 1.0, "strict 1/1", 0.0)
    assert (bad["score"], bad["acc"]) == (0.0, 0.0)


def test_synlogic_through_compute_score():
    ok = compute_score("verl_focal/synlogic", f"```python\n{SUDOKU}\n```", SYN_GT)
    assert set(ok) == MATH_KEYS and ok["score"] == 1.0
    task_named = json.dumps({"answer": "7", "metadata": {}})
    assert compute_score("verl_focal/synlogic/object_counting", "\\boxed{7}", task_named)["acc"] == 1.0


def test_synlogic_from_a_worker_thread_and_sympy_task_in_process():
    gt_op = json.dumps({"task": "operation", "answer": "\\frac{1}{2}", "metadata": {}})
    with cf.ThreadPoolExecutor(2) as ex:
        a = ex.submit(compute_score, "verl_focal/synlogic", f"```python\n{SUDOKU}\n```", SYN_GT).result()
        b = ex.submit(compute_score, "verl_focal/synlogic", "\\boxed{0.5}", gt_op).result()
        c = ex.submit(compute_score, "verl_focal/ifeval", "a, b", IFEVAL_GT).result()
    assert (a["acc"], b["acc"], c["acc"]) == (1.0, 1.0, 0.0)
    assert b["verify_timeout"] == 0.0


def test_timeout_in_main_thread_scores_zero_and_flags(monkeypatch):
    import time

    from verl_focal.ood import synlogic

    def slow(*a, **k):
        time.sleep(5)
        return 1.0, "x"

    monkeypatch.setattr(synlogic, "score", slow)
    out = compute_score("verl_focal/synlogic", "x", SYN_GT, timeout_s=0.2)
    assert (out["score"], out["verify_timeout"], out["pred"]) == (0.0, 1.0, "")


def test_bad_ground_truth_raises_clearly():
    from verl_focal.ood.synlogic import SynLogicGroundTruthError

    with pytest.raises(SynLogicGroundTruthError, match="not a SynLogic task"):
        compute_score("verl_focal/synlogic", "x", json.dumps({"task": "nope", "metadata": {}}))
