"""Strategy partitioners for Cue-GRPO (pure Python, no verl import).

* :mod:`~verl_focal.partition.base`       -- the partitioner contract and registry
* :mod:`~verl_focal.partition.factory`    -- ``algorithm.cue`` -> constructor arguments -> cached instance
* :mod:`~verl_focal.partition.batch`      -- a batch's rows to partition, per group from signatures or text
* :mod:`~verl_focal.partition.signatures` -- which ``cue_sig`` values a partitioner can use
"""

from verl_focal.partition.base import (
    Partitioner,
    canonical_labels,
    get_partitioner,
    list_partitioners,
    register_partitioner,
)
from verl_focal.partition.factory import partitioner_for, partitioner_kwargs

__all__ = [
    "Partitioner",
    "canonical_labels",
    "get_partitioner",
    "list_partitioners",
    "register_partitioner",
    "partitioner_for",
    "partitioner_kwargs",
]
