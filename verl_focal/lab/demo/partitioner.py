"""``demo_strategy``: a partitioner for the demo task's own strategies.

Cue-GRPO's credit rule (arXiv 2608.03467, Sec. 3; docs/methods.md §5) only needs
*some* partition of a group's correct rollouts into strategy clusters.  On the
demo task the strategy of an answer ``A op B`` is its operator, so this
partitioner clusters texts by :func:`verl_focal.lab.demo.task.strategy_of`.  It is
plugged in through the public registry (``algorithm.cue.partitioner=demo_strategy``),
exactly as a user would plug in a partitioner for their own task.

Pure Python, no verl import.
"""

from __future__ import annotations

from verl_focal.lab.demo.task import STRATEGIES, strategy_of
from verl_focal.partition import Partitioner, register_partitioner

__all__ = ["DemoStrategyPartitioner"]

_ORDER = {s: i for i, s in enumerate(STRATEGIES)}


@register_partitioner("demo_strategy")
class DemoStrategyPartitioner(Partitioner):
    """Cluster = the answer's operator (add / sub / mul); unparseable texts share one residual cluster."""

    def __init__(self) -> None:
        self._unparsed = 0
        self._texts = 0

    def partition(self, texts: list[str], problem: str | None = None) -> list[int]:
        labels = []
        for t in texts:
            s = strategy_of(t)
            self._texts += 1
            if s is None:
                self._unparsed += 1
                labels.append(len(_ORDER))
            else:
                labels.append(_ORDER[s])
        return labels

    def pop_metrics(self) -> dict[str, float]:
        out = {"demo_partition/unparsed_frac": self._unparsed / self._texts} if self._texts else {}
        self._unparsed = self._texts = 0
        return out
