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

__all__ = [
    "Arm", "ARM_SETS", "DEFAULT_ARMS", "FAMILY_ARMS", "FOCAL_REFERENCE_ARM", "GROUP_SIZE_ARMS", "LARGE_N_ARM",
    "REFERENCE_ARM", "arms_by_name",
]


@dataclass(frozen=True)
class Arm:
    """One experimental arm: estimator name, group size N and its estimator settings.

    ``settings`` maps dotted keys under verl's ``algorithm`` section to values,
    e.g. ``{"focal.gamma": 1.0}`` or ``{"cue.alpha": 0.8}``; anything an
    estimator reads from ``algorithm.*`` can be set this way.  ``compare_with``
    names arms this one is also compared with (paired by seed) besides
    :data:`REFERENCE_ARM` and the base, when they ran in the same experiment.
    """

    name: str
    estimator: str
    n: int
    settings: Mapping[str, Any] = field(default_factory=dict)
    compare_with: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "estimator": self.estimator, "n": self.n, "settings": dict(self.settings),
                "compare_with": list(self.compare_with)}


#: the arm every other arm is compared with (paired by seed)
REFERENCE_ARM = "GRPO N=8"

#: the second baseline of the family arms: the F-GRPO setting whose gains over GRPO N=8 replicated (docs/demo.md)
FOCAL_REFERENCE_ARM = "F-GRPO N=8 γ=1"

#: the default run's arms: all at N = 8, the paper's comparison at equal rollout budget
DEFAULT_ARMS: tuple[Arm, ...] = (
    Arm("GRPO N=8", "grpo", 8),
    Arm("F-GRPO N=8 γ=0.5", "f_grpo", 8, {"focal.gamma": 0.5}),
    Arm("F-GRPO N=8 γ=1", "f_grpo", 8, {"focal.gamma": 1.0}),
    Arm("Cue-GRPO N=8", "cue_grpo", 8, {"cue.alpha": 0.8}),
    Arm("F-Cue-GRPO N=8", "f_cue_grpo", 8, {"focal.gamma": 0.5, "cue.alpha": 0.8}),
)

#: GRPO at the group sizes of the F-GRPO paper's sweep (``--arms n-sweep``), with the same 8 prompts per step
GROUP_SIZE_ARMS: tuple[Arm, ...] = (
    Arm("GRPO N=2", "grpo", 2),
    Arm("GRPO N=4", "grpo", 4),
    Arm("GRPO N=16", "grpo", 16),
    Arm("GRPO N=32", "grpo", 32),
)

#: the arm of the group-size set that F-GRPO N=8 is also compared with: the paper's "N=32 coverage at a quarter of
#: the rollouts" claim (the comparison with GRPO at the trough of the pass@256 curve is made in the report)
LARGE_N_ARM = "GRPO N=32"

#: the other published answers to the same problem (``--arms family``), at N = 8 with the settings fixed before
#: any result (docs/demo.md, "Family arms"): Pass@k Training with k = 4 = N/2, the unlikeliness reward with the
#: paper's β = 0.25, once ranked by the summed sequence log-probability (the paper's text) and once by the
#: per-token mean (the authors' released code; docs/methods.md §10).  Each is also compared with F-GRPO γ=1.
FAMILY_ARMS: tuple[Arm, ...] = (
    Arm("Pass@k-GRPO N=8 k=4", "passk_grpo", 8, {"passk.k": 4}, compare_with=(FOCAL_REFERENCE_ARM,)),
    Arm("Unlikely-GRPO N=8 β=0.25 sum", "unlikely_grpo", 8, {"unlikely.beta": 0.25, "unlikely.likelihood": "sum"},
        compare_with=(FOCAL_REFERENCE_ARM,)),
    Arm("Unlikely-GRPO N=8 β=0.25 mean", "unlikely_grpo", 8, {"unlikely.beta": 0.25, "unlikely.likelihood": "mean"},
        compare_with=(FOCAL_REFERENCE_ARM,)),
)

_FOCAL_N8 = Arm("F-GRPO N=8 γ=1", "f_grpo", 8, {"focal.gamma": 1.0}, compare_with=(LARGE_N_ARM,))

#: the arm sets ``--arms`` accepts by name
ARM_SETS: dict[str, tuple[Arm, ...]] = {
    "default": DEFAULT_ARMS,
    "family": (DEFAULT_ARMS[0], DEFAULT_ARMS[2]) + FAMILY_ARMS,
    # GRPO at N = 2, 4, 8, 16, 32 and F-GRPO γ=1 at N = 8, also compared with GRPO N=32
    "n-sweep": (GROUP_SIZE_ARMS[0], GROUP_SIZE_ARMS[1], DEFAULT_ARMS[0], GROUP_SIZE_ARMS[2], GROUP_SIZE_ARMS[3],
                _FOCAL_N8),
}
ARM_SETS["all"] = DEFAULT_ARMS + GROUP_SIZE_ARMS + FAMILY_ARMS


def _merge(a: Arm, b: Arm) -> Arm:
    if (a.estimator, a.n, dict(a.settings)) != (b.estimator, b.n, dict(b.settings)):
        raise ValueError(f"arm {a.name!r} is defined twice with different settings")
    return Arm(a.name, a.estimator, a.n, a.settings, tuple(dict.fromkeys(a.compare_with + b.compare_with)))


def arms_by_name(names: list[str]) -> tuple[Arm, ...]:
    """Select arms by name or set (:data:`ARM_SETS`: ``default``; ``family`` = GRPO N=8, F-GRPO γ=1 and the
    family arms; ``n-sweep`` = GRPO at N = 2..32 and F-GRPO γ=1 N=8; ``all`` = every arm); unknown names raise
    with the valid list.  An arm named in two sets is taken once, with the comparisons of both."""
    table: dict[str, Arm] = {}
    for arm_set in ARM_SETS.values():
        for a in arm_set:
            table[a.name] = _merge(table[a.name], a) if a.name in table else a
    out: list[Arm] = []
    for n in names:
        if n in ARM_SETS:
            out.extend(table[a.name] for a in ARM_SETS[n] if table[a.name] not in out)
        elif n in table:
            if table[n] not in out:
                out.append(table[n])
        else:
            import difflib

            close = difflib.get_close_matches(n, list(table) + list(ARM_SETS), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(
                f"--arms: unknown arm {n!r}{hint}; choose from {sorted(table)} or a set {sorted(ARM_SETS)}"
            )
    return tuple(out)
