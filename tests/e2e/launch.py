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
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
#: ``data.max_response_length`` of :func:`base_overrides` (tests/e2e/partition_odds.py samples as many tokens)
MAX_RESPONSE_LENGTH = 12


def base_overrides(assets: dict[str, str], out_dir: str, steps: int = 2, device: str = "cpu") -> list[str]:
    """Hydra overrides for a tiny run of ``steps`` training steps (see docs/e2e.md); ``device="cuda"``: the same
    run with verl's workers on one GPU (``gpu/trainer.py``)."""
    model = assets["model"]
    return [
        # data: 4 prompts x 4 rollouts per step
        f"data.train_files={assets['train']}",
        f"data.val_files={assets['val']}",
        "data.train_batch_size=4",
        "data.max_prompt_length=32",
        f"data.max_response_length={MAX_RESPONSE_LENGTH}",
        "data.dataloader_num_workers=0",
        "data.shuffle=false",
        # model: plain SDPA attention, no padding removal (flash-attn only), no compile
        f"actor_rollout_ref.model.path={model}",
        "actor_rollout_ref.model.use_remove_padding=false",
        "actor_rollout_ref.model.enable_gradient_checkpointing=false",
        "+actor_rollout_ref.model.override_config.attn_implementation=sdpa",
        # actor: FSDP2 on one device (the CPU "device" of verl_cpu_backend, or one GPU), fp32
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
        # trainer: one (logical, on CPU) GPU on one node, console + file logging
        f"trainer.device={device}",
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


#: vLLM's KV cache in the CPU runs: 64 MiB (the tiny model needs 1 KiB a token), allocated and zeroed at the engine's
#: start.  vLLM's CPU build takes 4 GiB by default and its VLLM_CPU_KVCACHE_SPACE whole GiB only.
VLLM_KV_CACHE_BYTES = 64 << 20


def vllm_overrides() -> list[str]:
    """What a run through verl's own vLLM rollout (``vLLMHttpServer``, vLLM's CPU build) adds to
    :func:`base_overrides` (which already sets ``enforce_eager=true``, verl's CUDA-graph switch, and
    ``free_cache_engine=false``); see docs/e2e.md.

    - sleep mode off: it is vLLM's CUDA memory pool (cumem), which the CPU build refuses ("Sleep mode is
      not supported on current platform"); verl turns it on by default;
    - ``load_format=dummy`` (verl's default, spelled out): the engine starts from random weights, so
      only the weight sync can make its log-probs match the actor's;
    - fp32 on both sides: the engine's ``dtype`` (verl's rollout default is bfloat16) and the actor's
      compute dtype (FSDP's ``mixed_precision.param_dtype``, bf16 by default; its weights are fp32
      already), so the rollout log-probs equal the actor's recomputed ones up to fp32 noise, where
      bf16 on either side leaves differences of about 1e-2 in a token's log-prob;
    - a KV cache of :data:`VLLM_KV_CACHE_BYTES`, through verl's ``engine_kwargs.vllm`` (vLLM's own
      ``kv_cache_memory_bytes``): the engine zeroes it at start, and a 1 GiB cache cost each run's vLLM worker
      about 250,000 page faults more (docs/e2e.md, "Cost").
    """
    return [
        "actor_rollout_ref.rollout.name=vllm",
        "+actor_rollout_ref.rollout.enable_sleep_mode=false",
        "actor_rollout_ref.rollout.load_format=dummy",
        "actor_rollout_ref.rollout.dtype=float32",
        f"+actor_rollout_ref.rollout.engine_kwargs.vllm.kv_cache_memory_bytes={VLLM_KV_CACHE_BYTES}",
        "+actor_rollout_ref.actor.fsdp_config.mixed_precision={param_dtype:fp32,reduce_dtype:fp32,buffer_dtype:fp32}",
    ]


# Keys of actor_rollout_ref.rollout a recipe sets that say how large the run is, not how the engine
# behaves: they are not carried into the CPU runs (see recipe_engine_overrides).
ROLLOUT_SIZE_KEYS = ("name", "n", "tensor_model_parallel_size", "gpu_memory_utilization")
RECIPE_YAML = REPO / "verl_focal" / "config" / "recipe" / "deepscaler.yaml"


def _flatten(prefix: str, node) -> list[str]:
    if isinstance(node, dict):
        return [o for k, v in node.items() for o in _flatten(f"{prefix}.{k}", v)]
    value = "true" if node is True else "false" if node is False else "null" if node is None else str(node)
    return [f"{prefix}={value}"]


def recipe_engine_overrides(script: str = "cue_grpo.sh") -> list[str]:
    """The rollout-engine settings of a recipe, as overrides for a CPU run with vLLM.

    Every ``actor_rollout_ref.rollout.*`` key the recipe sets -- in its packaged base
    (``verl_focal/config/recipe/deepscaler.yaml``, which every recipe composes) and in the script's own
    overrides (``--print-overrides`` with ``ENGINE=vllm``) -- except :data:`ROLLOUT_SIZE_KEYS`, plus the
    script's LoRA keys (``actor_rollout_ref.model.lora_*``, ``target_modules``), which the engine
    settings of ``cue_grpo.sh`` (``load_format``, ``layered_summon``) go with.
    """
    import yaml

    base = yaml.safe_load(RECIPE_YAML.read_text())["actor_rollout_ref"]["rollout"]
    env = {**os.environ, "ENGINE": "vllm", "HOME": os.environ.get("HOME", "/tmp")}
    out = subprocess.run(["bash", str(REPO / "recipes" / "deepscaler" / script), "--print-overrides"], env=env,
                         capture_output=True, text=True, timeout=60, check=True).stdout.splitlines()
    model_keys = ("actor_rollout_ref.model.lora_", "actor_rollout_ref.model.target_modules=")
    own = [o for o in out if o.startswith(("actor_rollout_ref.rollout.", *model_keys))]
    return [o for o in [*_flatten("actor_rollout_ref.rollout", base), *own]
            if o.split("=", 1)[0].removeprefix("actor_rollout_ref.rollout.") not in ROLLOUT_SIZE_KEYS]


def backend_env(extra_pythonpath: list[str] | None = None, device: str = "cpu") -> dict[str, str]:
    """Environment for the driver; Ray workers of the local cluster inherit it.  ``device="cuda"``: verl's own
    platform (no ``VERL_PLATFORM``, so ``verl_cpu_backend`` loads only its rollout), and the rollout server
    required on the GPU (``verl_cpu_backend/rollout.py``)."""
    env = dict(os.environ)
    paths = [str(HERE), str(REPO), *(extra_pythonpath or [])]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    mods = [m for m in env.get("VERL_USE_EXTERNAL_MODULES", "").split(",") if m]
    if "verl_cpu_backend" not in mods:
        mods.insert(0, "verl_cpu_backend")
    env["VERL_USE_EXTERNAL_MODULES"] = ",".join(mods)
    if device == "cpu":
        env["VERL_PLATFORM"] = "cpu"
        # verl's EngineRegistry keys engines by (device, vendor) and registers FSDP only for
        # cuda/npu; these documented overrides (EngineRegistry.get_engine_cls) pick the FSDP
        # engine, which itself places tensors on get_device_name() == "cpu".
        env["VERL_ENGINE_DEVICE"] = "cuda"
        env["VERL_ENGINE_VENDOR"] = "nvidia"
    else:
        for key in ("VERL_PLATFORM", "VERL_ENGINE_DEVICE", "VERL_ENGINE_VENDOR"):
            env.pop(key, None)
        # Ray 2.60's default, pinned: an actor without a GPU (the rollout server) keeps CUDA_VISIBLE_DEVICES
        env["RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO"] = "0"
    env["VERL_CPU_BACKEND_ROLLOUT_DEVICE"] = device
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env.setdefault("RAY_DEDUP_LOGS", "0")
    env.setdefault("HYDRA_FULL_ERROR", "1")
    # read by vLLM's CPU build only (actor_rollout_ref.rollout.name=vllm): no pinning of its OpenMP threads to
    # cores that other processes share (its KV cache size: vllm_overrides)
    env.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
    # vLLM's CPU build would let this (whole GiB) override the engine's kv_cache_memory_bytes (vllm_overrides)
    env.pop("VLLM_CPU_KVCACHE_SPACE", None)
    return env


#: set in every process of one run (the driver's environment, which Ray's processes and theirs inherit): its value,
#: the run's output folder, finds what the run left behind (:func:`stop_leftovers`)
RUN_MARKER = "VERL_FOCAL_E2E_RUN"


def processes_marked(value: str) -> list[int]:
    """The processes (not this one) whose environment at start had ``RUN_MARKER=value``."""
    entry = f"{RUN_MARKER}={value}".encode()
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            environ = (proc / "environ").read_bytes()
        except OSError:  # gone meanwhile, or a kernel thread
            continue
        if entry in environ.split(b"\0"):
            pids.append(int(proc.name))
    return pids


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and has not exited (a zombie waiting for its parent has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def stop_leftovers(value: str, grace_s: float = 3.0) -> list[str]:
    """Stop the processes a finished run left running; return their command lines.

    When the driver exits, Ray stops its cluster, but the run's actors (seen: the TaskRunner, the reward and
    agent-loop workers, verl's ``GlobalRequestLoadBalancer``) can go on for a minute or more, reparented to init and
    busy, and would slow the next run.  SIGTERM, then SIGKILL what is left after ``grace_s``.
    """
    import signal

    names = {}
    for pid in processes_marked(value):
        try:
            names[pid] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            os.kill(pid, signal.SIGTERM)
        except OSError:  # gone meanwhile (ProcessLookupError included)
            names.pop(pid, None)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(_running(p) for p in names):
        time.sleep(0.1)
    for pid in names:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return [n.strip() for n in names.values()]


#: what :func:`run_trainer` writes in its folder and its readers take as this run's
RUN_OUTPUTS = ("train.log", "metrics.jsonl", "rollout_stats", "leftovers.txt")


def clear_outputs(out_dir: Path) -> None:
    """Remove :data:`RUN_OUTPUTS` from ``out_dir``: the files, and the records folder whole."""
    for name in RUN_OUTPUTS:
        path = Path(out_dir) / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def run_trainer(module: str, overrides: list[str], out_dir: Path, timeout: float = 900,
                extra_env: dict[str, str] | None = None, device: str = "cpu") -> tuple[int, float]:
    """Run ``python -m module overrides...`` with its outputs under ``out_dir``.

    ``out_dir/train.log``: stdout+stderr; ``out_dir/metrics.jsonl``: verl's file logger
    (one ``{"step", "data"}`` line per step); ``out_dir/rollout_stats/``: the weight-update
    records of the ``hf_cpu`` server (``server_<replica>.jsonl``) or of vLLM's worker processes
    (``vllm_worker_<pid>.jsonl``); ``out_dir/leftovers.txt``: the processes the run left running, which
    :func:`stop_leftovers` stopped (one command line each; empty when none).  ``extra_env`` is added to
    :func:`backend_env` of ``device``.  Returns (exit code, seconds).

    What an earlier run left in ``out_dir`` is removed first (:func:`clear_outputs`): the server appends its
    records, so a reused folder (the rehearsal's ``/tmp/rehearsal`` on a machine that ran it before) would show the
    earlier run's weight updates as this run's.
    """
    out_dir = Path(out_dir)
    clear_outputs(out_dir)
    (out_dir / "rollout_stats").mkdir(parents=True, exist_ok=True)
    env = {**backend_env(device=device), **(extra_env or {})}
    env["VERL_FILE_LOGGER_PATH"] = str(out_dir / "metrics.jsonl")
    env["VERL_CPU_BACKEND_STATS_DIR"] = str(out_dir / "rollout_stats")
    env[RUN_MARKER] = str(out_dir.resolve())
    cmd = [sys.executable, "-m", module, *overrides]
    t0 = time.monotonic()
    try:
        with open(out_dir / "train.log", "w") as log:
            log.write(" ".join(cmd) + "\n")
            log.flush()
            proc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, timeout=timeout, cwd=out_dir)
        seconds = time.monotonic() - t0
    finally:
        left = stop_leftovers(env[RUN_MARKER])
        (out_dir / "leftovers.txt").write_text("".join(f"{c}\n" for c in left))
    return proc.returncode, seconds


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
