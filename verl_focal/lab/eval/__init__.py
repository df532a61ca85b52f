"""Evaluation: unbiased pass@k, AUC@K, significance, generation/scoring/report CLI.

``import verl_focal.lab.eval`` loads only numpy (the metrics below).  The generation
backends (vLLM, SGLang, transformers), scoring and plotting are imported lazily
by ``verl-focal eval ...`` (:mod:`verl_focal.lab.eval.cli`).
"""

from __future__ import annotations

from verl_focal.lab.eval.metrics import (
    DEFAULT_KS,
    PassAtKCurve,
    SignificanceResult,
    auc_at_k,
    default_ks,
    paired_subsampling_test,
    pass_at_k,
    pass_at_k_curve,
    pass_at_k_matrix,
)

# the same names as verl_focal.lab.eval.metrics.__all__ (tests/eval/test_metrics.py checks the two agree)
__all__ = [
    "DEFAULT_KS",
    "PassAtKCurve",
    "SignificanceResult",
    "auc_at_k",
    "default_ks",
    "pass_at_k",
    "pass_at_k_curve",
    "pass_at_k_matrix",
    "paired_subsampling_test",
]
