"""verl's real trainer with our hooks on one device: two training steps of ``python -m verl_focal.main_ppo``,
once with ``f_grpo`` and once with ``cue_grpo`` fed by the package's scorer (``gpu/run.sh`` part 5).

Each run is the CPU end-to-end run of ``tests/e2e`` (``launch.base_overrides``: Hydra, a real Ray, the v1
trainer, TransferQueue, the agent and reward loops, verl's FSDP2 actor, a tiny Llama made on the fly by
``tests/e2e/tiny_assets.py``) with ``--device`` deciding where verl's workers run:

- ``cuda``: verl's own nvidia platform and NCCL; the actor's FSDP2 worker holds the GPU, and the rollout server
  (the transformers stand-in ``hf_cpu`` of ``tests/e2e/verl_cpu_backend/rollout.py``: the GPU machine has no
  vLLM) generates on the same GPU;
- ``cpu``: the rehearsal, under the test-only CPU platform (``VERL_PLATFORM=cpu``), as ``make test-e2e`` runs.

What each run must show, read from verl's file logger (one JSON line per step) and the rollout server's
weight-update records, one PASS/FAIL line each (also in ``OUT/part5.json``):

- exit 0 after steps 1 and 2;
- our hooks live: ``focal/*`` (``f_grpo``) or ``cue/*`` (``cue_grpo``) diagnostics at each step,
  ``verl_focal/acc_rows_frac`` = 1 (every row's ``acc`` reached the estimator), the v1 trainer's prefetch joined
  (``verl_focal/prefetched`` = 1) and no fallback: no ``verl_focal/prefetch_failed``, and for ``cue_grpo`` every
  partitioned group clustered from the scorer's ``cue_sig`` with no response decoded;
- where things ran: the actor's peak device memory (verl's ``actor/perf/max_memory_allocated_gb``: above 0 on a GPU,
  0 under the CPU platform), the rollout server's device, and where verl handed ``compute_advantage`` the batch
  (``verl_focal/advantages_on_device``; docs/gpu.md's table says the host for verl 0.9.1's v1 trainer: the run
  checks that table on the real trainer);
- the weights trained and reached the rollout after each step.

Usage::

    python gpu/trainer.py --device cuda --out /tmp/smoke/trainer     # the GPU machine (gpu/run.sh)
    python gpu/trainer.py --device cpu --out /tmp/trainer            # the rehearsal (gpu/rehearse.sh)
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
E2E = ROOT / "tests" / "e2e"
sys.path.insert(0, str(E2E))

from e2e_checks import CUE_SCORER_N, assert_cue, run_and_read  # noqa: E402
from launch import base_overrides  # noqa: E402
from tiny_assets import build_all  # noqa: E402

from verl_focal.integration.hooks.dataproto_hook import ON_DEVICE  # noqa: E402  (imports no verl)

STEPS = 2
BATCH = 4  # launch.base_overrides: data.train_batch_size
#: verl 0.9.1's v1 trainer reads the batch from TransferQueue's host storage (docs/gpu.md): the hook's metric
#: ``ON_DEVICE`` must say the host
ADVANTAGES_ON_DEVICE = 0.0

ARMS = {
    # the e2e reward (tests/e2e/reward_fn.py): `acc` in the extras, right about a third of the time
    "f_grpo": ["algorithm.adv_estimator=f_grpo"],
    # the package's scorer in verl's reward loop, its `cue_sig` computed in the reward worker
    "cue_grpo": ["algorithm.adv_estimator=cue_grpo", f"actor_rollout_ref.rollout.n={CUE_SCORER_N}",
                 "reward.custom_reward_function.path=pkg://verl_focal.reward",
                 "+reward.custom_reward_function.reward_kwargs.cue_set=math_v1"],
}

#: both arms, both devices: the actor computes in fp32 as the rollout server does (FSDP's default is bf16), so
#: ``training/rollout_probs_diff_max`` measures the weight sync, not the precision
COMMON = ["+actor_rollout_ref.actor.fsdp_config.mixed_precision={param_dtype:fp32,reduce_dtype:fp32,buffer_dtype:fp32}",
          "trainer.project_name=gpu"]


def record(arm: str, name: str, ok: bool, detail: str) -> dict:
    """One check, as ``gpu/smoke.py`` writes them."""
    return {"part": "5", "check": f"{arm}.{name}", "ok": bool(ok), "detail": detail}


def show(checks: list[dict]) -> list[dict]:
    for c in checks:
        print(f"{'PASS' if c['ok'] else 'FAIL'} 5.{c['check']}: {c['detail']}", flush=True)
    return checks


def _all(steps: list[dict], key: str, want: float) -> tuple[bool, str]:
    got = [s.get(key) for s in steps]
    return bool(got) and all(g == want for g in got), f"{key} = {got}"


def judge(arm: str, run: dict, device: str) -> list[dict]:
    """The checks of the module docstring on one finished run (``e2e_checks.run_and_read``'s dict)."""
    checks: list[dict] = []

    def check(name: str, ok: bool, detail: str) -> None:
        checks.append(record(arm, name, ok, detail))

    trained = [s for s in run["lines"] if s["step"] > 0]  # step 0: a validation before training, when one runs
    steps = [s["data"] for s in trained]
    check("steps", [s["step"] for s in trained] == list(range(1, STEPS + 1)),
          f"steps {[s['step'] for s in run['lines']]} in {run['seconds']:.0f} s")
    prefix = "focal/" if arm == "f_grpo" else "cue/"
    check("diagnostics", bool(steps) and all(any(k.startswith(prefix) for k in m) for m in steps),
          f"{prefix}* at each step: {[sorted(k for k in m if k.startswith(prefix))[:4] for m in steps]}")
    if arm == "f_grpo":
        ok, detail = _all(steps, "focal/groups", float(BATCH))
        check("focal.groups", ok, detail)
        ok, detail = _all(steps, "focal/acc_from_extra_frac", 1.0)
        check("focal.acc_from_extra", ok, detail)
    for key, want in (("verl_focal/acc_rows_frac", 1.0), ("verl_focal/prefetched", 1.0),
                      (ON_DEVICE, ADVANTAGES_ON_DEVICE)):
        ok, detail = _all(steps, key, want)
        check(key.split("/")[1], ok, detail)
    failed = [m.get("verl_focal/prefetch_failed") for m in steps]
    check("no-fallback", not any(failed) and "prefetch for" not in run["log"],
          f"verl_focal/prefetch_failed = {failed}")
    if arm == "cue_grpo":
        try:
            assert_cue(steps, "signatures")
            ok, detail = True, (f"groups partitioned {[m['cue/groups_partitioned'] for m in steps]}, all from "
                                f"cue_sig, decoded rows {[m['verl_focal/decoded_rows'] for m in steps]}")
        except AssertionError as e:
            ok, detail = False, f"{e}"[:300]
        check("cue-from-signatures", ok, detail)
    peak = [m.get("actor/perf/max_memory_allocated_gb") for m in steps]
    on_gpu = bool(peak) and all(p is not None and p > 0 for p in peak)
    check("actor-device", on_gpu == (device == "cuda") and None not in peak,
          f"actor/perf/max_memory_allocated_gb = {peak}")
    servers = sorted({r.get("device", "?") for r in run["stats"]})
    check("rollout-device", servers == [("cuda:0" if device == "cuda" else "cpu")], f"server on {servers}")
    moved = [r["l2_from_initial"] for r in run["stats"]]
    grads = [m.get("actor/grad_norm") for m in steps]
    synced = len(moved) == STEPS + 1 and moved[0] == 0.0 and moved[-1] > 0 and any(g and g > 0 for g in grads)
    check("trained-and-synced", synced, f"server weights' L2 from initial {[f'{d:.3g}' for d in moved]}, "
          f"actor/grad_norm {grads}")
    diff = [m.get("training/rollout_probs_diff_max") for m in steps]
    check("rollout-logprobs", all(d is not None and math.isfinite(d) and d < 1e-2 for d in diff),
          f"training/rollout_probs_diff_max = {diff}")
    return checks


def environment(device: str) -> str:
    """One line: what this run runs on, and where Ray, verl and verl-focal were imported from."""
    import platform

    import ray
    import torch
    import verl

    import verl_focal

    gpu = torch.cuda.get_device_name(0) if device == "cuda" and torch.cuda.is_available() else "none"
    return (f"5.environment: Python {platform.python_version()}, torch {torch.__version__} (GPU: {gpu}), "
            f"Ray {ray.__version__} from {Path(ray.__file__).parent}, verl {verl.__version__}, "
            f"verl-focal from {Path(verl_focal.__file__).parent}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", choices=("cuda", "cpu"), required=True)
    ap.add_argument("--out", type=Path, required=True, help="folder for the runs' logs and part5.json")
    ap.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated, of {', '.join(ARMS)}")
    ap.add_argument("--timeout", type=float, default=220.0, help="seconds for each run (default 220)")
    args = ap.parse_args(argv)
    arms = [a for a in args.arms.split(",") if a]
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        ap.error(f"--arms: unknown {unknown}; choose from {', '.join(ARMS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    print(environment(args.device), flush=True)
    t0 = time.monotonic()
    checks: list[dict] = []
    assets = build_all(args.out / "assets", seed=0)
    for arm in arms:
        out = args.out / arm
        extra = [*ARMS[arm], *COMMON, f"trainer.experiment_name={arm}"]
        try:
            run = run_and_read(out, "verl_focal.main_ppo",
                               base_overrides(assets, str(out), steps=STEPS, device=args.device) + extra,
                               timeout=args.timeout, device=args.device)
        except Exception as e:  # noqa: BLE001 - one failed run is one FAIL; the other arm still runs
            checks += show([record(arm, "run", False, f"{type(e).__name__}: {e}"[-1500:])])
            continue
        print(f"5.{arm}: {run['seconds']:.0f} s (log {out / 'train.log'})", flush=True)
        checks += show(judge(arm, run, args.device))
    passed = sum(c["ok"] for c in checks)
    print(f"part 5: {time.monotonic() - t0:.1f} s\n{passed} of {len(checks)} checks passed", flush=True)
    (args.out / "part5.json").write_text(json.dumps({"device": args.device, "checks": checks}, indent=1))
    return 0 if checks and passed == len(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
