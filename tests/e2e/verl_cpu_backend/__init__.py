"""Test-only CPU backend for verl 0.9.1: a CPU platform and a transformers rollout.

Imported in every verl process through ``VERL_USE_EXTERNAL_MODULES=verl_cpu_backend``
(read by ``verl/__init__.py``), with ``VERL_PLATFORM=cpu``.  Not a user feature.
"""

from . import (
    platform,  # noqa: F401  (registers the "cpu" platform)
    rollout,  # noqa: F401  (registers the "hf_cpu" rollout)
)
