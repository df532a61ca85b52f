"""verl PR #7237's move of ``compute_advantage`` (tests/integration/moved_layout.py) on the installed verl: every
trainer family runs each of our estimators hooked, with p̂ from ``acc``; with the hook kept where 0.9.1 defines the
function, the families it misses are refused at start-up in one line naming the trainer and the verl version.
Never a silent fallback to the reward threshold, never a crash at the step."""

from __future__ import annotations

import importlib.metadata

import moved_layout
import pytest

CELLS = [(f, e) for f in moved_layout.FAMILIES for e in moved_layout.ESTIMATORS]
LABELS = {"v1": "the v1 PPOTrainer", "one_step_off": "the one-step-off trainer",
          "fully_async": "the fully-async trainer"}


@pytest.fixture(scope="module")
def following():
    return {(r["family"], r["estimator"]): r for r in moved_layout.run()}


@pytest.fixture(scope="module")
def not_following():
    return {(r["family"], r["estimator"]): r for r in moved_layout.run(follow=False)}


@pytest.mark.slow  # two fresh processes on a copy of verl, one with Ray and TransferQueue (about 1.5 min)
@pytest.mark.parametrize("family,estimator", CELLS)
def test_the_hook_follows_the_move_into_every_family(following, family, estimator):
    r = following[(family, estimator)]
    assert r["outcome"] == "hooked", r  # our wrapper's advantages (acc), not verl's function's (threshold)


@pytest.mark.slow
@pytest.mark.parametrize("family,estimator", CELLS)
def test_a_family_the_hook_misses_is_refused_in_one_line_at_start_up(not_following, family, estimator):
    r = not_following[(family, estimator)]
    if family == "legacy":  # fit calls ray_trainer's global, which the hook wraps
        assert r["outcome"] == "hooked", r
        return
    assert r["outcome"] == "refused", r
    msg = r["message"]
    assert "\n" not in msg and msg.startswith(f"algorithm.adv_estimator={estimator} ")
    assert LABELS[family] in msg and f"on verl {importlib.metadata.version('verl')}" in msg
    assert "verl.trainer.ppo.trainer_utils.compute_advantage" in msg
