"""End-to-end: verl 0.9.1's real trainer on CPU with our estimators, 2 training steps each.

Each test starts the real entry point as a subprocess (``python -m verl_focal.main_ppo``
or verl's stock ``python -m verl.trainer.main_ppo``): Hydra config, Ray, the v1 trainer,
TransferQueue, the agent loop, the reward loop, the FSDP2 actor and a rollout server.
The only test-only pieces are at the GPU boundary (``tests/e2e/verl_cpu_backend``: a CPU
platform and a transformers rollout server; see docs/e2e.md) and the tiny local model,
dataset and reward.

What is asserted, from verl's own file logger (one JSON line per step) and the rollout
server's weight-update records:
- the run exits 0 after exactly the requested steps;
- our diagnostics are present and in range, and the reward's ``cue_sig`` reached the
  estimator from TransferQueue;
- the actor's parameters changed and the rollout served the updated weights: the
  server received new weights after every step (L2 distance from the initial weights
  grows above 0), and verl's ``training/rollout_probs_diff_max`` (rollout log-probs vs
  the actor's recomputed ones) stays tiny;
- ``maxrl`` composes with DAPO's group filter and CISPO's loss, and ``ds_grpo`` reads every row's old
  log-prob from the actor's own pass (their diagnostics in range);
- through the stock entry point, ``+algorithm.focal.gamma`` reaches ``f_grpo``: with
  γ = 50 every focal weight is (1 − p̂)^50 ≤ 0.75^50, so all advantages collapse.

Each run takes about a minute on 2 idle cores (mostly process start-up: every Ray actor
imports verl).  All are marked ``e2e``: ``make test-e2e`` runs them, ``make test`` deselects them; the
stock-entry-point run is also marked ``slow``.  ``f_grpo`` with DAPO's ``filter_groups`` and CISPO runs through
verl's vLLM rollout instead (test_vllm_cpu.py, ``make test-vllm``): the same checks, with the
real engine.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from e2e_checks import (  # noqa: E402
    CUE_SCORER_N,
    MAXRL_DAPO_CISPO,
    assert_cue,
    assert_maxrl_dapo,
    assert_scorer_in_reward_loop,
    run_and_read,
)
from launch import base_overrides  # noqa: E402
from tiny_assets import build_all  # noqa: E402

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1500)]

STEPS = 2
ROLLOUT_N = 4  # base_overrides: actor_rollout_ref.rollout.n
BATCH = 4  # base_overrides: data.train_batch_size


@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    return build_all(tmp_path_factory.mktemp("e2e_assets"), seed=0)


def _run(tmp_path: Path, assets: dict, module: str, extra: list[str]) -> dict:
    out = tmp_path / "run"
    run = run_and_read(out, module, base_overrides(assets, str(out), steps=STEPS) + extra)
    print(f"{module} {' '.join(extra)}: {run['seconds']:.0f}s")
    # global step 0 is the validation before training, when one runs (trainer.val_before_train=true)
    return {**run, "steps": [s for s in run["lines"] if s["step"] > 0],
            "val": [s for s in run["lines"] if s["step"] == 0]}


def _assert_trained(run: dict, n: int = ROLLOUT_N, moved_expected: bool = True, every_step: bool = True) -> None:
    """Steps 1..STEPS logged; weights reached the rollout after each step (and moved).  ``every_step=False``: a
    nonzero gradient in at least one step, not in each (a step whose every group is all wrong has none)."""
    assert [s["step"] for s in run["steps"]] == list(range(1, STEPS + 1))
    # Update 1 is the initial sync (global step 0); one more after every training step.
    stats = run["stats"]
    assert len(stats) == STEPS + 1, stats
    assert stats[0]["global_steps"] == 0 and stats[0]["l2_from_initial"] == 0.0
    moved = [s["l2_from_initial"] for s in stats[1:]]
    if moved_expected:
        assert all(d > 1e-4 for d in moved), stats
        assert moved[-1] != moved[0], "weights did not change in the last step"
    # Every step sampled at least BATCH x n responses from the server.
    for before, after in zip(stats[:-1], stats[1:]):
        assert after["requests_before"] - before["requests_before"] >= BATCH * n
    for s in run["steps"]:
        m = s["data"]
        # rollout log-probs come from the server's copy of the weights; the actor recomputes
        # them with its own: equal up to float noise only if the sync delivered the weights.
        assert m["training/rollout_probs_diff_max"] < 1e-2, m["training/rollout_probs_diff_max"]
        if moved_expected and every_step:
            assert m["actor/grad_norm"] > 0
    if moved_expected and not every_step:
        assert any(s["data"]["actor/grad_norm"] > 0 for s in run["steps"]), run["steps"]


def test_cue_grpo_main_ppo(tmp_path, assets):
    """``python -m verl_focal.main_ppo algorithm.adv_estimator=cue_grpo``, cue signatures from the reward.

    The reward is the package's own scorer, ``pkg://verl_focal.reward``, in verl's real reward loop (its executor
    threads, its Ray actor; gpu-readiness T6). It grades the last number of a response (math-verify), which the
    tiny model gets right 5.7-8.4 % of the time on the two steps' prompts (``python tests/e2e/partition_odds.py``:
    512 samples each, the initial weights). Cue-GRPO partitions only groups with >= 2 correct answers, so the
    rollout count sets how often a run partitions nothing: with 16 rollouts a step had none 22-28 % of the time
    and both steps 6 % (a clean-clone run failed so); with 48, 0.1 % for step 1 and 4e-7 for both.
    The scorer computes each response's ``cue_sig`` in the reward worker (reward kwarg ``cue_set``); the
    estimator must partition from those signatures, i.e. the extra travelled reward worker -> TransferQueue ->
    hook -> estimator, and never from decoded text.
    """
    n = CUE_SCORER_N  # 48; the docstring: how often a run would partition no group
    run = _run(
        tmp_path,
        assets,
        "verl_focal.main_ppo",
        [
            "algorithm.adv_estimator=cue_grpo",
            f"actor_rollout_ref.rollout.n={n}",
            # Our own scorer in verl's real reward loop: called from the reward worker's executor threads, so
            # every maths check goes through the bounded process pool (verl_focal/pool.py), in a Ray actor
            # (gpu-readiness finding 4).  One pool process, so four calls at a time queue behind each other.
            "reward.custom_reward_function.path=pkg://verl_focal.reward",
            "+ray_kwargs.ray_init.runtime_env.env_vars.VERL_FOCAL_REWARD_WORKERS='1'",
            # a validation pass first (8 prompts x 1 sample): verl dumps each scored row with its reward extras
            "trainer.val_before_train=true",
            f"trainer.validation_data_dir={tmp_path / 'run' / 'val'}",
            # verl 0.9.1 passes custom_reward_function.reward_kwargs to compute_score
            # (reward.reward_kwargs only reaches the built-in dapo manager).
            "+reward.custom_reward_function.reward_kwargs.cue_set=math_v1",
            # Every Ray process skips verl's entry point (as in a `ray start` environment with this policy):
            # our TaskRunner arranges the hooks itself, and the entry point forwards VERL_USE_EXTERNAL_MODULES
            # to the job, so the run is hooked all the same (gpu-readiness finding 2).
            "+ray_kwargs.ray_init.runtime_env.env_vars.VERL_USE_EXTERNAL_PLUGINS=none",
        ],
    )
    # Our scorer is right 6-8 % of the time here (the docstring), and after the first update (lr 1e-2) a step can
    # find every group all wrong, with no advantage and no gradient (seen once with 16 rollouts in a full
    # `make test`): one step with a gradient.
    _assert_trained(run, n=n, every_step=False)
    assert_cue([s["data"] for s in run["steps"]], "signatures")
    assert_scorer_in_reward_loop(run, tmp_path / "run")


def test_maxrl_dapo_cispo_main_ppo(tmp_path, assets):
    """``maxrl`` with DAPO's group filter on ``acc`` and CISPO's loss (composed as ``f_grpo`` is), through the v1
    trainer.  ``ds_grpo``'s end-to-end run is the vLLM one in bypass mode (``make test-vllm``); its recomputed
    old log-probs go through the v1 trainer's real pass in tests/integration (one run fewer here: CI's time)."""
    run = _run(tmp_path, assets, "verl_focal.main_ppo", MAXRL_DAPO_CISPO)
    _assert_trained(run)
    assert "'loss_mode': 'cispo'" in run["log"]
    assert_maxrl_dapo([s["data"] for s in run["steps"]], n=ROLLOUT_N, batch=BATCH)


@pytest.mark.slow  # a second trainer start; the verl_focal run above is the minimum
def test_stock_main_ppo_reaches_f_grpo(tmp_path, assets):
    """verl's own ``python -m verl.trainer.main_ppo`` + ``+algorithm.focal.gamma``: f_grpo
    is found through the ``verl.plugins`` entry point and reads γ from ``config``.

    Without our hook there is no context (no ``acc`` extra, no diagnostics): the
    estimator falls back to reward > threshold for correctness.  γ = 50 makes every
    focal weight at most 0.75^50 ≈ 6e-7, so every advantage is ~0: if γ did not reach
    the estimator, GRPO's advantages (|A| up to sqrt(3) ≈ 1.7) would show instead.
    """
    run = _run(
        tmp_path,
        assets,
        "verl.trainer.main_ppo",
        ["algorithm.adv_estimator=f_grpo", "+algorithm.focal.gamma=50",
         # the stock entry point under a policy that skips our entry point in every Ray process: the line
         # docs/usage.md gives for it makes verl import the plugin by name (else: Unknown advantage estimator
         # at step 1, after a full rollout)
         "+ray_kwargs.ray_init.runtime_env.env_vars.VERL_USE_EXTERNAL_PLUGINS=none",
         "+ray_kwargs.ray_init.runtime_env.env_vars.VERL_USE_EXTERNAL_MODULES='verl_cpu_backend,verl_focal.plugin'"],
    )
    # Advantages ~0 (that is the point), so the weights may not move: check the sync only.
    _assert_trained(run, moved_expected=False)
    for s in run["steps"]:
        m = s["data"]
        assert not any(k.startswith("focal/") for k in m), "stock entry point has no hook, no diagnostics"
        assert abs(m["critic/advantages/max"]) < 1e-5 and abs(m["critic/advantages/min"]) < 1e-5, m
        assert 0.0 <= m["critic/score/mean"] <= 1.0
