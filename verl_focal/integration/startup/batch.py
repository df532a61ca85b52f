"""Batch arithmetic that verl pads rather than refuses, named with its numbers.

verl 0.9.1's v1 trainer makes each step's batch a multiple of its update's granularity before the update
(``trainer/ppo/v1/trainer_base.py``, ``_get_required_batch_multiple`` and ``_balance_batch``): the least common
multiple of the actor's data-parallel size and its mini-batch in rows (``ppo_mini_batch_size`` × ``rollout.n``; the
critic's too when one trains).  The rows it adds are synthetic no-ops
(``padding_utils.upsample_batch_to_divisible_size``): they train nothing, but they fill update slots and the last
mini-batch is mostly padding.  :func:`check_batch_padding` says how many rows each step pads, and which batch size
pads none.  No verl import.
"""

from __future__ import annotations

import math
from typing import Any

from verl_focal.config.key_names import config_get

__all__ = ["check_batch_padding", "padded_rows"]


def _int(config: Any, key: str, default: int = 0) -> int:
    v = config_get(config, key, default)
    try:
        return int(v) if v is not None and not isinstance(v, bool) else default
    except (TypeError, ValueError):
        return default


def padded_rows(rows: int, multiple: int) -> int:
    """The rows added to make ``rows`` a multiple of ``multiple`` (``-rows mod multiple``).

    >>> padded_rows(800, 512), padded_rows(1024, 512)
    (224, 0)
    """
    return -rows % multiple if multiple > 0 else 0


def check_batch_padding(config: Any) -> list[str]:
    """One warning when the v1 trainer pads each step's batch (module docstring), with the numbers and a batch size
    that pads nothing; none for the legacy and separated trainers' own batching."""
    if config_get(config, "trainer.use_v1", True) is False:
        return []
    prompts = _int(config, "data.train_batch_size")
    n = max(1, _int(config, "actor_rollout_ref.rollout.n", 1))
    mini = _int(config, "actor_rollout_ref.actor.ppo_mini_batch_size")
    if prompts <= 0 or mini <= 0:
        return []
    gpus = _int(config, "trainer.n_gpus_per_node", 1) * _int(config, "trainer.nnodes", 1)
    sp = max(1, _int(config, "actor_rollout_ref.actor.ulysses_sequence_parallel_size", 1))
    multiple = math.lcm(max(1, gpus // sp), mini * n)
    from verl_focal.integration.startup.liveness import uses_critic

    if uses_critic(config) and _int(config, "critic.ppo_mini_batch_size") > 0:
        multiple = math.lcm(multiple, _int(config, "critic.ppo_mini_batch_size") * n)
    rows = prompts * n
    pad = padded_rows(rows, multiple)
    if pad == 0:
        return []
    share = pad / (rows + pad)
    hint = f"; data.train_batch_size={multiple // n} (or a multiple of it) pads nothing" if multiple % n == 0 else ""
    return [f"data.train_batch_size={prompts} x actor_rollout_ref.rollout.n={n} = {rows} rows a step, and verl's v1 "
            f"trainer pads each step to a multiple of {multiple} (the actor's mini-batch, ppo_mini_batch_size={mini} "
            f"x n, and its data-parallel size): {pad} no-op rows ({share:.0%} of each update's rows){hint}"]
