"""The pieces of the GPU trainer run (``gpu/trainer.py``, part 5 of ``gpu/run.sh``) that can fail without a GPU.

The run itself is rehearsed on the CPU by ``bash gpu/rehearse.sh`` (``make gpu-rehearsal``, which CI runs): the same
script, the same carried wheels and Ray, in a stand-in of the GPU machine's image.  Here:

- ``verl_cpu_backend`` on a GPU machine loads the rollout and not the CPU platform, whose process-group patch
  (gloo only) would hand FSDP's CUDA collectives to gloo; under ``VERL_PLATFORM=cpu`` it loads both;
- the rollout server refuses to start where it cannot use the device it must generate on, naming the variable
  that fixes it (on a GPU machine: a Ray actor with ``CUDA_VISIBLE_DEVICES`` emptied), instead of generating on
  the CPU;
- the run's judge passes a run that shows what the issue asks for, and fails each check on the run that lacks it.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "gpu"))

import trainer  # noqa: E402

PROBE = """
import os, sys
import verl_cpu_backend
import verl.utils.distributed as d
from verl.workers.rollout.base import _ROLLOUT_REGISTRY
print(getattr(d.initialize_global_process_group_ray, "_verl_cpu_backend", False),
      "verl_cpu_backend.platform" in sys.modules, ("hf_cpu", "async") in _ROLLOUT_REGISTRY)
from verl_cpu_backend.rollout import server_device
try:
    print(server_device())
except RuntimeError as e:
    print(e)
"""


def _probe(**env: str) -> list[str]:
    base = {k: v for k, v in os.environ.items()
            if k not in ("VERL_PLATFORM", "VERL_CPU_BACKEND_ROLLOUT_DEVICE", "CUDA_VISIBLE_DEVICES")}
    base["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests" / "e2e"), str(ROOT)])
    r = subprocess.run([sys.executable, "-c", PROBE], env={**base, **env}, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.strip().splitlines()


def test_backend_on_a_gpu_machine_loads_the_rollout_without_the_cpu_platform():
    # no VERL_PLATFORM: verl's own platform ("cuda" here, the nvidia fallback; this machine has no GPU)
    patched_platform_rollout, device = _probe()
    assert patched_platform_rollout == "False False True"
    assert device == ("hf_cpu rollout: the server must generate on 'cuda'; verl's device here is 'cuda', but torch "
                      "sees no GPU (CUDA_VISIBLE_DEVICES=None: set RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO=0, so that "
                      "Ray leaves it alone for an actor without a GPU)")


def test_backend_under_the_cpu_platform_patches_the_process_group_and_serves_on_cpu():
    assert _probe(VERL_PLATFORM="cpu") == ["True True True", "cpu"]
    assert _probe(VERL_PLATFORM="cpu", VERL_CPU_BACKEND_ROLLOUT_DEVICE="cpu")[1] == "cpu"
    refused = _probe(VERL_PLATFORM="cpu", VERL_CPU_BACKEND_ROLLOUT_DEVICE="cuda")[1]
    assert refused.startswith("hf_cpu rollout: the server must generate on 'cuda'; verl's device here is 'cpu' (")


def _step(step: int, device: str, arm: str) -> dict:
    data = {"verl_focal/acc_rows_frac": 1.0, "verl_focal/prefetched": 1.0, "verl_focal/advantages_on_device": 0.0,
            "actor/perf/max_memory_allocated_gb": 0.4 if device == "cuda" else 0.0, "actor/grad_norm": 0.5,
            "training/rollout_probs_diff_max": 1e-7}
    if arm == "f_grpo":
        data.update({"focal/groups": 4.0, "focal/acc_from_extra_frac": 1.0, "focal/frac_active": 0.5})
    else:
        data.update({"cue/groups_partitioned": 1.0, "cue/groups_from_signatures": 1.0, "cue/groups_from_text": 0.0,
                     "cue/groups_repartitioned": 0.0, "cue/clusters_per_group": 2.0,
                     "cue/frac_groups_multi_cluster": 1.0, "cue/w_min": 0.7, "cue/w_mean": 1.0, "cue/w_max": 2.2,
                     "verl_focal/decoded_rows": 0.0})
    return {"step": step, "data": data}


def _run(device: str, arm: str) -> dict:
    server = "cuda:0" if device == "cuda" else "cpu"
    return {"lines": [_step(1, device, arm), _step(2, device, arm)], "seconds": 60.0, "log": "",
            "stats": [{"device": server, "l2_from_initial": d} for d in (0.0, 3.0, 4.5)]}


def _failed(arm: str, run: dict, device: str) -> list[str]:
    return [c["check"] for c in trainer.judge(arm, run, device) if not c["ok"]]


@pytest.mark.parametrize("device", ["cuda", "cpu"])
@pytest.mark.parametrize("arm", ["f_grpo", "cue_grpo"])
def test_judge_passes_a_run_that_shows_the_hooks_live_on_the_device(arm, device):
    checks = trainer.judge(arm, _run(device, arm), device)
    assert len(checks) == (12 if arm == "f_grpo" else 11) and _failed(arm, _run(device, arm), device) == []


def _mutated(arm: str, device: str, edit) -> dict:
    run = copy.deepcopy(_run(device, arm))
    edit(run)
    return run


def _at_step(key: str, value):
    def edit(run):
        run["lines"][1]["data"][key] = value
    return edit


@pytest.mark.parametrize("arm", ["f_grpo", "cue_grpo"])
@pytest.mark.parametrize("edit, device, failing", [
    (_at_step("verl_focal/acc_rows_frac", 0.75), "cuda", "acc_rows_frac"),
    (_at_step("verl_focal/prefetch_failed", 1.0), "cuda", "no-fallback"),
    (_at_step("verl_focal/advantages_on_device", 1.0), "cuda", "advantages_on_device"),  # docs/gpu.md's table
    (_at_step("actor/perf/max_memory_allocated_gb", 0.0), "cuda", "actor-device"),  # the actor ran on the CPU
    (lambda run: run["stats"][1].update(device="cpu"), "cuda", "rollout-device"),
    (lambda run: [r.update(l2_from_initial=0.0) for r in run["stats"]], "cpu", "trained-and-synced"),
    (_at_step("training/rollout_probs_diff_max", 0.3), "cpu", "rollout-logprobs"),
    (lambda run: run["lines"].pop(), "cpu", "steps"),
])
def test_judge_fails_the_check_whose_evidence_is_missing(arm, edit, device, failing):
    assert _failed(arm, _mutated(arm, device, edit), device) == [f"{arm}.{failing}"]


def test_judge_fails_a_cue_run_that_decoded_text_and_a_focal_run_without_acc():
    text = _mutated("cue_grpo", "cpu", lambda run: [s["data"].update({"cue/groups_from_signatures": 0.0,
                                                                      "cue/groups_from_text": 1.0})
                                                    for s in run["lines"]])
    assert _failed("cue_grpo", text, "cpu") == ["cue_grpo.cue-from-signatures"]
    no_acc = _mutated("f_grpo", "cpu", _at_step("focal/acc_from_extra_frac", 0.5))
    assert _failed("f_grpo", no_acc, "cpu") == ["f_grpo.focal.acc_from_extra"]
