"""The demo's experimental arms as data (pure Python, no verl import).

An :class:`Arm` is an estimator name, a group size N and the ``algorithm.*``
settings the estimator reads.  Adding an estimator to the demo is one line in
:data:`DEFAULT_ARMS`; an arm whose estimator is not registered in the running
install is reported as skipped, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Arm", "DEFAULT_ARMS", "EXTRA_ARMS", "REFERENCE_ARM", "arms_by_name"]


@dataclass(frozen=True)
class Arm:
    """One experimental arm: estimator name, group size N and its estimator settings.

    ``settings`` maps dotted keys under verl's ``algorithm`` section to values,
    e.g. ``{"focal.gamma": 1.0}`` or ``{"cue.alpha": 0.8}``; anything an
    estimator reads from ``algorithm.*`` can be set this way.
    """

    name: str
    estimator: str
    n: int
    settings: Mapping[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "estimator": self.estimator, "n": self.n, "settings": dict(self.settings)}


#: the arm every other arm is compared with (paired by seed)
REFERENCE_ARM = "GRPO N=8"

#: the default run's arms: all at N = 8, the paper's comparison at equal rollout budget
DEFAULT_ARMS: tuple[Arm, ...] = (
    Arm("GRPO N=8", "grpo", 8),
    Arm("F-GRPO N=8 γ=0.5", "f_grpo", 8, {"focal.gamma": 0.5}),
    Arm("F-GRPO N=8 γ=1", "f_grpo", 8, {"focal.gamma": 1.0}),
    Arm("Cue-GRPO N=8", "cue_grpo", 8, {"cue.alpha": 0.8}),
    Arm("F-Cue-GRPO N=8", "f_cue_grpo", 8, {"focal.gamma": 0.5, "cue.alpha": 0.8}),
)

#: the group-size arms (``--arms all``): GRPO at N = 2 and N = 32 with the same 8 prompts per step
EXTRA_ARMS: tuple[Arm, ...] = (
    Arm("GRPO N=2", "grpo", 2),
    Arm("GRPO N=32", "grpo", 32),
)


def arms_by_name(names: list[str]) -> tuple[Arm, ...]:
    """Select arms by name (``all`` = default + group-size arms); unknown names raise with the valid list."""
    table = {a.name: a for a in DEFAULT_ARMS + EXTRA_ARMS}
    out: list[Arm] = []
    for n in names:
        if n == "all":
            out.extend(a for a in DEFAULT_ARMS + EXTRA_ARMS if a not in out)
        elif n == "default":
            out.extend(a for a in DEFAULT_ARMS if a not in out)
        elif n in table:
            if table[n] not in out:
                out.append(table[n])
        else:
            import difflib

            close = difflib.get_close_matches(n, list(table), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"--arms: unknown arm {n!r}{hint}; choose from {sorted(table)}, 'default' or 'all'")
    return tuple(out)
