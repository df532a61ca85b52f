"""verl-focal: focal (F-GRPO) and rarity-aware (Cue-GRPO) advantage estimators for verl.

Importing ``verl_focal`` is cheap and never imports verl.  The public maths is
reachable from here lazily:

* ``verl_focal.focal_weight``          -- (1 - p̂)^γ, F-GRPO Eq. (focal weight)
* ``verl_focal.group_advantage``       -- vectorised GRPO / Dr.GRPO / RLOO base advantages
* ``verl_focal.credit_multipliers``    -- Cue-GRPO rarity-aware credit redistribution
* ``verl_focal.partition``             -- strategy partitioners and their registry
* ``verl_focal.lab``                   -- the research wing (demo, theory, stats, eval), behind the ``[lab]`` extra

verl registration happens in :mod:`verl_focal.plugin` (the ``verl.plugins`` entry point).
"""

from __future__ import annotations

import importlib
from typing import Any

from verl_focal import _moved

__version__ = "0.1.0"

_LAZY = {
    "focal_weight": "verl_focal.core.focal",
    "group_advantage": "verl_focal.core.groups",
    "credit_multipliers": "verl_focal.core.credit",
}


_moved.install()  # the old paths of the lab's modules (verl_focal.demo, .eval, ...) for one release


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'verl_focal' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + list(_LAZY))
