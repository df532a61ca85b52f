"""Test-only CPU backend for verl 0.9.1: a CPU platform, a transformers rollout, a CPU
checkpoint engine for the separated trainers, and two patches inside vLLM's CPU worker processes.

Imported in every verl process through ``VERL_USE_EXTERNAL_MODULES=verl_cpu_backend``
(read by ``verl/__init__.py``), with ``VERL_PLATFORM=cpu``.  Not a user feature.
"""

from importlib import import_module

# In this order: the platform's gloo patch must be in place before the other two import
# verl modules that bind ``initialize_global_process_group_ray`` by name.
# vllm_cpu acts only in vLLM's worker processes (it imports nothing elsewhere).
for _name in ("platform", "rollout", "checkpoint", "vllm_cpu"):  # "cpu" platform, "hf_cpu" rollout, "cpu_store" engine
    import_module(f"{__name__}.{_name}")
