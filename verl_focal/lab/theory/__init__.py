"""Theory toolkit (F-GRPO §3-4, App. C-J; docs/methods.md §3-4): pure numpy/torch, no verl.

* :func:`tail_miss_probability`, :func:`log_tail_miss_probability`,
  :func:`active_group_probability`, :func:`tail_miss_argmax` -- Lemma 3.1.
* :mod:`verl_focal.lab.theory.categorical` -- the one-step softmax-policy update, the
  change of unsampled-correct mass (Prop. 3.2) and of total correct mass.
* :mod:`verl_focal.lab.theory.sim` -- the App. J simulation behind ``verl-focal sim``.
"""

from .tail_miss import (
    SPEC_ARGMAX_TABLE,
    TailMissPeak,
    active_group_probability,
    log_tail_miss_probability,
    tail_miss_argmax,
    tail_miss_probability,
)

__all__ = [
    "SPEC_ARGMAX_TABLE",
    "TailMissPeak",
    "active_group_probability",
    "log_tail_miss_probability",
    "tail_miss_argmax",
    "tail_miss_probability",
]
