"""End-to-end: verl 0.9.1's separated trainers on CPU with our estimators.

``python -m verl_focal.main_ppo --trainer one_step_off`` (``unlikely_grpo``) and
``--trainer fully_async`` (``cue_grpo``; ``cue_grpo`` in the one-step-off trainer runs through verl's
vLLM rollout, test_vllm_cpu.py): our pre-flight, then verl's own TaskRunner and trainer
of that kind -- actor and rollout in separate resource pools, generation overlapping training,
DataProto batches (no TransferQueue), the agent loop, the reward loop, the FSDP2 actor -- with
our hook reaching ``SeparateRayPPOTrainer._fit_compute_advantage`` through the plugin.

Test-only, at the GPU boundary (docs/e2e.md): the CPU platform, the ``hf_cpu`` rollout server
and the ``cpu_store`` checkpoint engine, which moves the actor's weights to the rollout pool
through a Ray actor where verl's default engine uses NCCL.

What is asserted:
- exit 0, consecutive training steps 1, 2, ... logged, a nonzero gradient in each;
- the weights reached the rollout on each trainer's schedule: one-step-off syncs at the start
  of each step, before that step's update (the rollout received the initial weights at step 1,
  moved ones at step 2: batch k + 1 is sampled one update behind); fully-async syncs after each
  update (every sync after the first carries moved weights); each sync came after at least one
  more batch of ``BATCH x N`` requests;
- the inputs reached the estimator: every row's ``acc`` from the reward extras
  (``verl_focal/acc_rows_frac == 1``); for ``cue_grpo`` every partitioned group was clustered
  from the reward's ``cue_sig``, no text was decoded, and the prefetch started at the log-prob
  step was joined (``verl_focal/prefetched == 1``); for ``unlikely_grpo`` every row's
  old log-prob arrived (``verl_focal/old_log_prob_rows_frac == 1``; in these trainers' bypass
  mode they are the rollout server's log-probs) and the unlikeliness factors lie in
  ``[1 - beta, 1]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from e2e_checks import assert_cue, assert_unlikely, run_and_read  # noqa: E402
from launch import base_overrides, separated_overrides  # noqa: E402
from tiny_assets import build_all  # noqa: E402

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1500)]

STEPS = 2
BATCH = 4  # base_overrides: data.train_batch_size (fully-async: actor.ppo_mini_batch_size)
N = 8  # rollouts per prompt: no group with >= 2 correct in both steps about once in 80,000 runs (partition_odds.py)
CUE = ["algorithm.adv_estimator=cue_grpo", "+reward.custom_reward_function.reward_kwargs.cue_set=math_v1"]


@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    return build_all(tmp_path_factory.mktemp("e2e_assets"), seed=0)


def _run_separated(tmp_path: Path, assets: dict, trainer: str, extra: list[str]) -> list[dict]:
    """Run ``trainer`` for STEPS steps; check exit, steps, gradients, weight syncs and ``acc``; return
    the training steps' metrics."""
    out = tmp_path / "run"
    overrides = [*base_overrides(assets, str(out), steps=STEPS), *separated_overrides(trainer, STEPS, BATCH),
                 f"actor_rollout_ref.rollout.n={N}", *extra]
    run = run_and_read(out, "verl_focal.main_ppo", overrides)
    lines, stats = run["lines"], run["stats"]
    steps = [d["data"] for d in lines if "training/global_step" in d["data"]]  # fully-async's rollouter logs too
    print(f"{trainer} {' '.join(extra)}: {run['seconds']:.0f}s")
    assert [int(m["training/global_step"]) for m in steps][:STEPS] == list(range(1, STEPS + 1)), lines
    for m in steps:
        assert m["actor/grad_norm"] > 0
        # every row's correctness came from the reward extras, none from the reward threshold
        assert m["verl_focal/acc_rows_frac"] == 1.0, m
    assert stats[0]["global_steps"] == 0 and stats[0]["l2_from_initial"] == 0.0, stats
    assert len(stats) >= STEPS + 1, stats
    if trainer == "one_step_off":  # synced before each step's update: one update behind
        assert [r["global_steps"] for r in stats] == [0, 1, 2], stats
        assert stats[1]["l2_from_initial"] == 0.0 and stats[2]["l2_from_initial"] > 1e-4, stats
    else:  # fully-async: synced after each update
        assert all(r["l2_from_initial"] > 1e-4 for r in stats[1:]), stats
    for before, after in zip(stats[:-1], stats[1:]):
        assert after["requests_before"] - before["requests_before"] >= BATCH * N, stats
    return steps


def test_unlikely_grpo_one_step_off(tmp_path, assets):
    """``unlikely_grpo`` ranks by the batch's old log-probs: in the one-step-off config's bypass mode
    (``algorithm.rollout_correction.bypass_mode=true``) those are the rollout server's own log-probs."""
    beta = 0.25
    steps = _run_separated(tmp_path, assets, "one_step_off",
                           ["algorithm.adv_estimator=unlikely_grpo", f"algorithm.unlikely.beta={beta}"])
    assert_unlikely(steps, beta)


def test_cue_grpo_fully_async(tmp_path, assets):
    """``cue_grpo`` in the fully-async trainer (its own trainer actor, apart from the TaskRunner)."""
    assert_cue(_run_separated(tmp_path, assets, "fully_async", CUE), "signatures")
