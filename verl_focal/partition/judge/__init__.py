"""LLM-judge strategy partitions (Cue-GRPO "CR under Judge Partitions"; docs/methods.md §7).

Importing this package registers the ``judge`` partitioner.  Pure Python: no verl import.

* :class:`JudgePartitioner` -- ``partition`` / ``partition_groups`` / ``submit_groups`` / ``pop_metrics``
* :class:`JudgeHandle`      -- one batch in flight (``submit_groups``); ``result()`` collects it
* :class:`JudgeConfig`      -- the ``algorithm.cue.judge`` settings and their defaults
* :func:`check_judge`       -- start-up checks for ``verl-focal check``

One long-lived judge per ``algorithm.cue`` setting, with its fallback built from that section:
:func:`verl_focal.partition.factory.partitioner_for` (``partitioner_for(cue, "judge")``).
"""

from verl_focal.partition.judge.check import check_judge
from verl_focal.partition.judge.config import JudgeConfig, coerce_judge_config
from verl_focal.partition.judge.handle import JudgeHandle
from verl_focal.partition.judge.outcome import FALLBACK_REASONS, GroupOutcome
from verl_focal.partition.judge.parsing import JudgeReplyError, parse_reply
from verl_focal.partition.judge.partitioner import JudgePartitioner

__all__ = [
    "JudgePartitioner",
    "JudgeHandle",
    "GroupOutcome",
    "JudgeConfig",
    "coerce_judge_config",
    "check_judge",
    "parse_reply",
    "JudgeReplyError",
    "FALLBACK_REASONS",
]
