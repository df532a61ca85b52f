"""Trivial partitioners: the reductions of the credit rule to GRPO.

``single``     one cluster for the whole group: every multiplier is 1, i.e. GRPO.
``singleton``  every text its own cluster: all clusters have size 1, so again w = 1
               (methods.md Sec. 5); useful as a sanity control.
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
