"""Strategy partitioners for Cue-GRPO (pure Python, no verl import)."""

from verl_focal.partition.base import (  # noqa: F401
    Partitioner,
    canonical_labels,
    get_partitioner,
    list_partitioners,
    register_partitioner,
)
