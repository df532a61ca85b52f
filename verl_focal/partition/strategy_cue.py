"""The Strategy-Cue partitioner, ``strategy_cue`` (Cue-GRPO, arXiv 2608.03467; docs/methods.md §6).

Deterministic and model-free: per response, a cue sequence from a versioned
catalogue (:mod:`verl_focal.partition.cues`); per group, ρ-suppression, bag-of-cues
vectors, the cosine graph at ε and its connected components
(:mod:`verl_focal.partition.graph`).

Two entry points give identical labels:

* ``partition(texts)``: extracts the cues here (e.g. at advantage time);
* ``partition_signatures(sigs)``: starts from signatures made elsewhere (the reward
  workers, :func:`verl_focal.partition.cues.signature`), so only the cheap
  group-level clustering runs at advantage time;

and ``partition_signature_groups(sigs, group)`` clusters every group of a batch from its signatures at once
(each distinct signature parsed once; :func:`~verl_focal.partition.graph.cluster_groups`), with the labels
``partition_signatures`` gives each group.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from verl_focal.partition.base import Partitioner, register_partitioner
from verl_focal.partition.cues import get_extractor, parse_signature, signature
from verl_focal.partition.graph import cluster_groups, cluster_sequences

__all__ = ["StrategyCuePartitioner"]


@register_partitioner("strategy_cue")
class StrategyCuePartitioner(Partitioner):
    """Cluster a group's correct traces by the techniques they name (docs/methods.md §6)."""

    def __init__(
        self,
        cue_set: str = "math_v1",
        epsilon: float = 0.5,
        rho: float = 0.75,
        backend: str = "auto",
        timeout: float = 2.0,
    ) -> None:
        if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and 0 < epsilon <= 1):
            raise ValueError(f"algorithm.cue.epsilon={epsilon!r}: cosine threshold must be in (0, 1] (paper 0.5)")
        if not (isinstance(rho, (int, float)) and math.isfinite(rho) and 0 < rho <= 1):
            raise ValueError(f"algorithm.cue.rho={rho!r}: suppression share must be in (0, 1] (paper 0.75; 1 disables)")
        self.extractor = get_extractor(cue_set, backend, timeout)
        self.cue_set, self.backend, self.timeout = cue_set, backend, float(timeout)
        self.version = self.extractor.catalogue.version
        self.epsilon, self.rho = float(epsilon), float(rho)
        self._m = {"extract_s": 0.0, "cluster_s": 0.0, "traces": 0, "failed": 0, "mismatch": 0}

    def signatures(self, texts: Sequence[str]) -> list[str]:
        """Signatures of ``texts`` with this partitioner's catalogue and backend."""
        t0 = time.perf_counter()
        out = [signature(t, self.cue_set, self.backend, self.timeout) for t in texts]
        self._m["extract_s"] += time.perf_counter() - t0
        return out

    def partition(self, texts: list[str], problem: str | None = None) -> list[int]:
        return self.partition_signatures(self.signatures(texts))

    def _codes(self, sig: str, times: int = 1) -> list[str]:
        """The cue codes of one signature; a failed or foreign one gives none (counted ``times`` times)."""
        version, codes, failure = parse_signature(sig)
        if failure is not None:
            self._m["failed"] += times
            return []
        if version != self.version:
            if not self._m["mismatch"]:
                warnings.warn(
                    f"cue signature from catalogue {version!r} but algorithm.cue.cue_set gives {self.version!r}; "
                    "such traces go to the residual cluster (set the reward's cue_set to match)",
                    stacklevel=3,
                )
            self._m["mismatch"] += times
            return []
        return codes

    def partition_signatures(self, sigs: Sequence[str]) -> list[int]:
        """Cluster one group from its signatures; failed or foreign ones join the residual cluster."""
        t0 = time.perf_counter()
        labels = cluster_sequences([self._codes(s) for s in sigs], self.epsilon, self.rho)
        self._m["traces"] += len(sigs)
        self._m["cluster_s"] += time.perf_counter() - t0
        return labels

    def partition_signature_groups(self, sigs: Sequence[str], group: np.ndarray) -> np.ndarray:
        """Cluster every group of a batch from its signatures: ``sigs`` (n,) and ``group`` (n,) ids; returns (n,)
        int64 labels, those :meth:`partition_signatures` gives each group's signatures in row order."""
        t0 = time.perf_counter()
        which, distinct = pd.factorize(np.asarray(sigs, dtype=object), sort=False)
        times = np.bincount(which, minlength=len(distinct))
        seqs = [self._codes(s, int(k)) for s, k in zip(distinct.tolist(), times.tolist())]
        labels = cluster_groups(seqs, which, group, self.epsilon, self.rho)
        self._m["traces"] += len(which)
        self._m["cluster_s"] += time.perf_counter() - t0
        return labels

    def pop_metrics(self) -> dict[str, float]:
        m, self._m = self._m, {k: 0 if isinstance(v, int) else 0.0 for k, v in self._m.items()}
        return {
            "cue/extract_time_s": float(m["extract_s"]),
            "cue/cluster_time_s": float(m["cluster_s"]),
            "cue/extract_failed": float(m["failed"]),
            "cue/signature_mismatch": float(m["mismatch"]),
        }
