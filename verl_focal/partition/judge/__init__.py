"""LLM-judge strategy partitions (Cue-GRPO "CR under Judge Partitions"; docs/methods.md §7).

Importing this package registers the ``judge`` partitioner.  Pure Python: no verl import.

* :class:`JudgePartitioner` -- ``partition`` / ``partition_groups`` / ``submit_groups`` / ``pop_metrics``
* :class:`JudgeHandle`      -- one batch in flight (``submit_groups``); ``result()`` collects it
* :class:`JudgeConfig`      -- the ``algorithm.cue.judge`` settings and their defaults
* :func:`check_judge`       -- start-up checks for ``verl-focal check``
* :func:`shared_judge`      -- one long-lived judge per ``algorithm.cue`` setting (for ``prepare`` steps)
"""

from verl_focal.partition.judge.check import check_judge
from verl_focal.partition.judge.config import JudgeConfig, coerce_judge_config
from verl_focal.partition.judge.handle import JudgeHandle
from verl_focal.partition.judge.outcome import FALLBACK_REASONS, GroupOutcome
from verl_focal.partition.judge.parsing import JudgeReplyError, parse_reply
from verl_focal.partition.judge.partitioner import JudgePartitioner, fallback_kwargs_from_cue, shared_judge

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
    "shared_judge",
    "fallback_kwargs_from_cue",
]
