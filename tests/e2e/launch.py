"""Build and run verl's trainer on CPU with the test-only backend.

``base_overrides(assets, out_dir)`` is the CPU recipe: Hydra overrides that make verl
0.9.1's real ``main_ppo`` (v1 trainer, TransferQueue, agent loop, reward loop, FSDP2
actor) run with a tiny model on a laptop-class CPU.  ``run_trainer`` starts the entry
point as a subprocess with the environment the backend needs in every Ray process.

Usage (by hand)::

    PYTHONPATH=$PWD python tests/e2e/launch.py /tmp/e2e_run verl.trainer.main_ppo \
        algorithm.adv_estimator=grpo
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def base_overrides(assets: dict[str, str], out_dir: str, steps: int = 2) -> list[str]:
    """Hydra overrides for a tiny CPU run of ``steps`` training steps (see docs/e2e.md)."""
    model = assets["model"]
    return [
        # data: 4 prompts x 4 rollouts per step
        f"data.train_files={assets['train']}",
        f"data.val_files={assets['val']}",
        "data.train_batch_size=4",
        "data.max_prompt_length=32",
        "data.max_response_length=12",
        "data.dataloader_num_workers=0",
        "data.shuffle=false",
        # model: plain SDPA attention, no padding removal (flash-attn only), no compile
        f"actor_rollout_ref.model.path={model}",
        "actor_rollout_ref.model.use_remove_padding=false",
        "actor_rollout_ref.model.enable_gradient_checkpointing=false",
        "+actor_rollout_ref.model.override_config.attn_implementation=sdpa",
        # actor: FSDP2 on one CPU "device", fp32
        "actor_rollout_ref.actor.strategy=fsdp2",
        "actor_rollout_ref.actor.fsdp_config.dtype=float32",
        "actor_rollout_ref.actor.use_torch_compile=false",
        "actor_rollout_ref.actor.ppo_mini_batch_size=4",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=16",
        "actor_rollout_ref.actor.use_kl_loss=false",
        "actor_rollout_ref.actor.optim.lr=1e-2",
        "actor_rollout_ref.actor.checkpoint.save_contents=[model]",
        # rollout: the test-only transformers backend
        "actor_rollout_ref.rollout.name=hf_cpu",
        "actor_rollout_ref.rollout.n=4",
        "actor_rollout_ref.rollout.tensor_model_parallel_size=1",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=16",
        "actor_rollout_ref.rollout.agent.num_workers=1",
        "actor_rollout_ref.rollout.free_cache_engine=false",
        "actor_rollout_ref.rollout.enforce_eager=true",
        "actor_rollout_ref.rollout.seed=0",
        # reward: our function, one reward-loop worker
        f"reward.custom_reward_function.path={HERE / 'reward_fn.py'}",
        "reward.custom_reward_function.name=compute_score",
        "reward.num_workers=1",
        "algorithm.use_kl_in_reward=false",
        # trainer: one logical GPU on one node, console + file logging
        "trainer.device=cpu",
        "trainer.n_gpus_per_node=1",
        "trainer.nnodes=1",
        f"trainer.total_training_steps={steps}",
        "trainer.total_epochs=1",
        "trainer.val_before_train=false",
        "trainer.test_freq=-1",
        "trainer.save_freq=-1",
        "trainer.logger=[console,file]",
        "trainer.project_name=e2e",
        "trainer.experiment_name=cpu",
        f"trainer.default_local_dir={out_dir}/ckpt",
        # Ray / TransferQueue sized for a 2-core box
        "ray_kwargs.ray_init.num_cpus=16",
        "+ray_kwargs.ray_init.num_gpus=1",
        "+ray_kwargs.ray_init.include_dashboard=false",
        "transfer_queue.backend.SimpleStorage.num_data_storage_units=1",
    ]


def separated_overrides(trainer: str, steps: int = 2, batch: int = 4) -> list[str]:
    """What ``--trainer one_step_off`` / ``fully_async`` add to :func:`base_overrides`: the rollout gets
    its own pool (one more logical GPU) and the weights move through the test-only ``cpu_store``
    checkpoint engine (``verl_cpu_backend/checkpoint.py``); verl's default there, nccl, needs GPUs.

    fully-async also needs: ``data.train_batch_size=0`` (its rollouter feeds prompts one by one; a
    step trains on ``ppo_mini_batch_size`` = ``batch`` of them), ``steps + 1`` steps' worth of prompts
    (``rollout.total_rollout_steps``; in our runs verl 0.9.1's fully-async trainer did not log its last
    step's metrics), a weight sync after every step, and Ray CPUs for its rollouter and trainer actors
    (10 logical CPUs each).
    """
    out = [
        "--trainer",
        trainer,
        "rollout.nnodes=1",
        "rollout.n_gpus_per_node=1",
        "ray_kwargs.ray_init.num_gpus=2",  # one logical GPU for the actor's pool, one for the rollout's
        "actor_rollout_ref.rollout.checkpoint_engine.backend=cpu_store",
    ]
    if trainer == "fully_async":
        out += [
            "data.train_batch_size=0",
            f"rollout.total_rollout_steps={(steps + 1) * batch}",
            "async_training.trigger_parameter_sync_step=1",
            "ray_kwargs.ray_init.num_cpus=40",
        ]
    return out


def backend_env(extra_pythonpath: list[str] | None = None) -> dict[str, str]:
    """Environment for the driver; Ray workers of the local cluster inherit it."""
    env = dict(os.environ)
    paths = [str(HERE), str(REPO), *(extra_pythonpath or [])]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["VERL_PLATFORM"] = "cpu"
    mods = [m for m in env.get("VERL_USE_EXTERNAL_MODULES", "").split(",") if m]
    if "verl_cpu_backend" not in mods:
        mods.insert(0, "verl_cpu_backend")
    env["VERL_USE_EXTERNAL_MODULES"] = ",".join(mods)
    # verl's EngineRegistry keys engines by (device, vendor) and registers FSDP only for
    # cuda/npu; these documented overrides (EngineRegistry.get_engine_cls) pick the FSDP
    # engine, which itself places tensors on get_device_name() == "cpu".
    env["VERL_ENGINE_DEVICE"] = "cuda"
    env["VERL_ENGINE_VENDOR"] = "nvidia"
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env.setdefault("RAY_DEDUP_LOGS", "0")
    env.setdefault("HYDRA_FULL_ERROR", "1")
    return env


def run_trainer(module: str, overrides: list[str], out_dir: Path, timeout: float = 900) -> tuple[int, float]:
    """Run ``python -m module overrides...`` with its outputs under ``out_dir``.

    ``out_dir/train.log``: stdout+stderr; ``out_dir/metrics.jsonl``: verl's file logger
    (one ``{"step", "data"}`` line per step); ``out_dir/rollout_stats/``: the rollout
    server's weight-update records.  Returns (exit code, seconds).
    """
    out_dir = Path(out_dir)
    (out_dir / "rollout_stats").mkdir(parents=True, exist_ok=True)
    env = backend_env()
    env["VERL_FILE_LOGGER_PATH"] = str(out_dir / "metrics.jsonl")
    env["VERL_CPU_BACKEND_STATS_DIR"] = str(out_dir / "rollout_stats")
    cmd = [sys.executable, "-m", module, *overrides]
    t0 = time.monotonic()
    with open(out_dir / "train.log", "w") as log:
        log.write(" ".join(cmd) + "\n")
        log.flush()
        proc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, timeout=timeout, cwd=out_dir)
    return proc.returncode, time.monotonic() - t0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    from tiny_assets import build_all

    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    assets = build_all(out / "assets")
    module = sys.argv[2] if len(sys.argv) > 2 else "verl.trainer.main_ppo"
    rc, secs = run_trainer(module, base_overrides(assets, str(out)) + sys.argv[3:], out)
    print(f"rc={rc} seconds={secs:.1f} log={out / 'train.log'}")
    sys.exit(rc)
