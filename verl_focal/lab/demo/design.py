"""Whether two demo runs share one design, so that one can replicate the other (pure Python).

A replication repeats the same experiment on other seeds.  The *design* is every setting in a run's
``results.json`` ``config`` except the ones that do not change what a seed computes: which seeds
(:data:`NOT_DESIGN`: ``seeds``), how they were shared out (``jobs``, ``threads``, ``budget_s``), the
preset's name (``mode``: its settings are compared instead) and the arm list (two runs may hold different
arms; the replication joins the claims both have).  An arm that both runs hold must be the same arm
(estimator, group size, settings, actor settings, focal weights, output-mixture λ).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["NOT_DESIGN", "design_differences", "design_mismatch_message"]

#: config keys that do not change a seed's result
NOT_DESIGN = frozenset({"seeds", "jobs", "threads", "budget_s", "mode", "arms"})

_ABSENT = object()


def _flat(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping) and v:
            out.update(_flat(v, key + "."))
        else:
            out[key] = list(v) if isinstance(v, tuple) else v
    return out


def _show(v: Any) -> str:
    return "not recorded" if v is _ABSENT else str(v)


def design_differences(config_1: Mapping[str, Any], config_2: Mapping[str, Any]) -> list[str]:
    """``"key: value_1 vs value_2"`` for every design setting (dotted keys) in which two runs' configs differ,
    then ``"arm NAME: ..."`` for an arm both runs hold with different definitions; ``[]`` for one design.

    >>> design_differences({"rl_steps": 2, "seeds": [0], "model": {"hidden": 64}},
    ...                    {"rl_steps": 60, "seeds": [1], "model": {"hidden": 64}})
    ['rl_steps: 2 vs 60']
    """
    a = _flat({k: v for k, v in config_1.items() if k not in NOT_DESIGN})
    b = _flat({k: v for k, v in config_2.items() if k not in NOT_DESIGN})
    out = [f"{k}: {_show(a.get(k, _ABSENT))} vs {_show(b.get(k, _ABSENT))}"
           for k in sorted(set(a) | set(b)) if a.get(k, _ABSENT) != b.get(k, _ABSENT)]
    arms_1 = {arm["name"]: arm for arm in config_1.get("arms", [])}
    arms_2 = {arm["name"]: arm for arm in config_2.get("arms", [])}
    for name in [n for n in arms_1 if n in arms_2]:
        x, y = ({k: arm.get(k) for k in ("estimator", "n", "settings", "actor", "focal_weights", "mixture",
                                                  "interpolation")}
                for arm in (arms_1[name], arms_2[name]))
        if x != y:
            out.append(f"arm {name!r}: {x} vs {y}")
    return out


def design_mismatch_message(config_1: Mapping[str, Any], config_2: Mapping[str, Any], shown: int = 12) -> str | None:
    """The refusal of ``--replicate`` for two runs of different designs (one line), or ``None`` for one design."""
    diffs = design_differences(config_1, config_2)
    if not diffs:
        return None
    more = f" and {len(diffs) - shown} more" if len(diffs) > shown else ""
    modes = ""
    if config_1.get("mode") != config_2.get("mode"):
        modes = f" (run 1 is a {config_1.get('mode')} run, run 2 a {config_2.get('mode')} run)"
    return (f"--replicate: the two runs have different designs{modes}, so their verdicts do not replicate one "
            f"another: {'; '.join(diffs[:shown])}{more}; run the same design (same mode and options) on disjoint "
            f"--seeds")
