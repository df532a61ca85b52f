"""Evaluation: unbiased pass@k, AUC@K, significance, generation/scoring/report CLI.

``import verl_focal.lab.eval`` loads only numpy (the metrics below).  The generation
backends (vLLM, SGLang, transformers), scoring and plotting are imported lazily
by ``verl-focal eval ...`` (:mod:`verl_focal.lab.eval.cli`).
"""

from __future__ import annotations

from verl_focal.lab.eval import metrics as _metrics
from verl_focal.lab.eval.metrics import *  # noqa: F403  (the names of metrics.__all__, listed once there)

__all__ = list(_metrics.__all__)
