"""Trivial partitioners: the reductions of the credit rule to GRPO.

``single``     one cluster for the whole group: every multiplier is 1, i.e. GRPO.
``singleton``  every text its own cluster: all clusters have size 1, so again w = 1
               (docs/methods.md §5); useful as a sanity control.
"""

from __future__ import annotations

from verl_focal.partition.base import Partitioner, register_partitioner


@register_partitioner("single")
class SinglePartitioner(Partitioner):
    def partition(self, texts: list[str], problem: str | None = None) -> list[int]:
        return [0] * len(texts)


@register_partitioner("singleton")
class SingletonPartitioner(Partitioner):
    def partition(self, texts: list[str], problem: str | None = None) -> list[int]:
        return list(range(len(texts)))


@register_partitioner("random")
class RandomClusterPartitioner(Partitioner):
    """Random-Cluster control (Cue-GRPO ablation): same credit rule, random partition.

    The number of clusters m is taken from a reference partitioner (default
    ``strategy_cue``) on the same texts; the texts are then split at random into
    exactly m non-empty clusters (``match="count"``), or the reference labels are
    randomly permuted over the texts (``match="sizes"``, same cluster sizes).

    Randomness is seeded by SHA-256 of (``seed``, the group's texts), never by
    Python's ``hash()``: the same group gives the same partition in every process
    and under every ``PYTHONHASHSEED``, and different groups get independent draws.
    """

    def __init__(
        self, reference: str = "strategy_cue", seed: int = 0, match: str = "count", **reference_kwargs
    ) -> None:
        from verl_focal.partition.base import get_partitioner

        if reference == "random":
            raise ValueError("algorithm.cue.partitioner_kwargs.reference='random' is circular; use e.g. 'strategy_cue'")
        if match not in ("count", "sizes"):
            raise ValueError(f"algorithm.cue.partitioner_kwargs.match={match!r}: choose 'count' or 'sizes'")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError(f"algorithm.cue.seed={seed!r}: must be an integer")
        self.reference = get_partitioner(reference, **reference_kwargs)
        self.seed, self.match = seed, match

    def _rng(self, keys: list[str]):
        import hashlib

        import numpy as np

        h = hashlib.sha256(f"verl-focal/random/{self.seed}".encode())
        for k in keys:
            b = k.encode("utf-8", "replace")
            h.update(len(b).to_bytes(8, "little"))
            h.update(b)
        return np.random.default_rng(int.from_bytes(h.digest()[:16], "little"))

    def _shuffle(self, ref: list[int], keys: list[str]) -> list[int]:
        from verl_focal.partition.base import canonical_labels

        n = len(ref)
        if n == 0:
            return []
        rng = self._rng(keys)
        if self.match == "sizes":
            return canonical_labels([ref[i] for i in rng.permutation(n)])
        m = len(set(ref))
        labels = [0] * n
        order = rng.permutation(n)
        rest = rng.integers(0, m, size=n)
        for pos, i in enumerate(order):  # the first m texts of the permutation seed the m clusters
            labels[int(i)] = pos if pos < m else int(rest[pos])
        return canonical_labels(labels)

    def partition(self, texts: list[str], problem: str | None = None) -> list[int]:
        return self._shuffle(list(self.reference.partition(texts, problem)), list(texts))

    def partition_signatures(self, sigs: list[str]) -> list[int]:
        if not hasattr(self.reference, "partition_signatures"):
            raise ValueError(f"reference partitioner {self.reference.name!r} cannot work from cue signatures")
        return self._shuffle(list(self.reference.partition_signatures(sigs)), list(sigs))

    def pop_metrics(self) -> dict[str, float]:
        return self.reference.pop_metrics()
