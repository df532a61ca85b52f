"""Test-only backend for verl 0.9.1 without a GPU stack: a CPU platform, a transformers rollout, a CPU
checkpoint engine for the separated trainers, and two patches inside vLLM's CPU worker processes.

Imported in every verl process through ``VERL_USE_EXTERNAL_MODULES=verl_cpu_backend``
(read by ``verl/__init__.py``).  Not a user feature.

The CPU platform (``platform.py``, with its process-group patch that asks torch for gloo only) is imported only
where ``VERL_PLATFORM=cpu`` selects it.  On a GPU (``gpu/trainer.py``) verl's own nvidia platform and NCCL serve,
and only the transformers rollout (``hf_cpu``, which runs on verl's device) and the checkpoint-engine registration
are loaded: the gloo patch there would hand FSDP's CUDA collectives to gloo.
"""

import os
from importlib import import_module

# In this order: the platform's gloo patch must be in place before the other modules import verl modules that bind
# ``initialize_global_process_group_ray`` by name.  vllm_cpu acts only in vLLM's worker processes (it imports
# nothing elsewhere).
CPU_PLATFORM = os.environ.get("VERL_PLATFORM") == "cpu"
for _name in (("platform",) if CPU_PLATFORM else ()) + ("rollout", "checkpoint", "vllm_cpu"):
    import_module(f"{__name__}.{_name}")
