"""What each estimator did to the advantages, measured against GRPO on the same batch (no verl import).

Every RL step of an arm computes, besides the arm's own advantages Â, verl's GRPO
advantages Â_GRPO of the same rollouts and rewards (nothing random is drawn, so the run
is unchanged).  Per step, over the batch's B rows (row b: a response, its valid tokens
t ∈ T_b):

    d_b = (1/|T_b|) Σ_{t ∈ T_b} |Â_{b,t} − Â_GRPO,{b,t}|
    effect/adv_diff_vs_grpo   = (1/B) Σ_b d_b                  (mean |Â − Â_GRPO|)
    effect/rows_changed_frac  = (1/B) #{b : d_b > tol}
    effect/rows_nonzero_frac  = (1/B) #{b : (1/|T_b|) Σ_t |Â_{b,t}| > tol}

An arm whose estimator never changed a row (every group all right or all wrong, or no
group for its rule to act on: for Cue-GRPO, ≥ 2 correct rollouts in ≥ 2 clusters) is
reported as *not exercised*.  The GRPO arm is the reference itself: its line says how
many rows had a nonzero advantage.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["EFFECT_KEYS", "TOLERANCE", "advantage_effect", "summarise_effects", "effect_markdown", "not_exercised"]

#: the step metrics of :func:`advantage_effect`
EFFECT_KEYS = ("effect/adv_diff_vs_grpo", "effect/rows_changed_frac", "effect/rows_nonzero_frac")
#: a row counts as changed (or nonzero) above this mean absolute advantage difference
TOLERANCE = 1e-6


def advantage_effect(adv, reference, mask) -> dict[str, float]:
    """The step metrics :data:`EFFECT_KEYS` of advantages ``adv`` against ``reference`` (both (B, T) tensors) over
    the valid tokens ``mask`` (B, T) of each row (formulas in the module docstring)."""
    mask = mask.to(adv.dtype)
    tokens = mask.sum(-1).clamp(min=1)
    diff = ((adv - reference).abs() * mask).sum(-1) / tokens
    size = ((adv.abs() * mask).sum(-1) / tokens)
    return {"effect/adv_diff_vs_grpo": float(diff.mean()),
            "effect/rows_changed_frac": float((diff > TOLERANCE).float().mean()),
            "effect/rows_nonzero_frac": float((size > TOLERANCE).float().mean())}


def summarise_effects(runs: Iterable[Mapping[str, Any]]) -> OrderedDict[str, dict[str, Any]]:
    """Per arm: the mean over its runs' steps of each :data:`EFFECT_KEYS` metric, the steps measured, and whether the
    arm is GRPO itself (``reference``).  Arms whose history has no effect metric are left out."""
    acc: OrderedDict[str, dict[str, Any]] = OrderedDict()
    for r in runs:
        steps = [h for h in r["history"] if EFFECT_KEYS[0] in h]
        if not steps:
            continue
        grpo = r["estimator"] == "grpo" and not r.get("focal_weights")  # the focal controls reweight GRPO's
        a = acc.setdefault(r["arm"], {"reference": grpo, "steps": 0,
                                      **{k: 0.0 for k in EFFECT_KEYS}})
        a["steps"] += len(steps)
        for k in EFFECT_KEYS:
            a[k] += sum(float(h[k]) for h in steps)
    for a in acc.values():
        for k in EFFECT_KEYS:
            a[k] /= a["steps"]
    return acc


def effect_markdown(runs: Iterable[Mapping[str, Any]]) -> list[str]:
    """Report lines: per arm, what its estimator changed relative to GRPO, or that it was not exercised."""
    eff = summarise_effects(runs)
    if not eff:
        return []
    out = ["", "Estimator effect (mean over RL steps and seeds; Â = the arm's advantages, Â_GRPO = verl's GRPO "
           "advantages of the same rollouts):", ""]
    for arm, e in eff.items():
        nonzero = e["effect/rows_nonzero_frac"]
        if e["reference"]:
            what = (f"reference (Â_GRPO itself); {100 * nonzero:.1f}% of rows have Â ≠ 0 (groups with both right "
                    "and wrong rollouts)" if nonzero > 0 else
                    "not exercised: every advantage is 0 (no group with both right and wrong rollouts)")
        elif e["effect/rows_changed_frac"] > 0:
            what = (f"mean |Â − Â_GRPO| = {_num(e['effect/adv_diff_vs_grpo'])}; "
                    f"{100 * e['effect/rows_changed_frac']:.1f}% of rows changed ({100 * nonzero:.1f}% have Â ≠ 0)")
        else:
            what = "not exercised: Â = Â_GRPO on every row (no group the estimator's rule acts on)"
        out.append(f"- {arm}: {what}")
    return out


def not_exercised(runs: Iterable[Mapping[str, Any]]) -> list[str]:
    """The arms whose estimator never changed an advantage (GRPO: whose advantages were all 0)."""
    return [arm for arm, e in summarise_effects(runs).items()
            if (e["effect/rows_nonzero_frac"] if e["reference"] else e["effect/rows_changed_frac"]) <= 0]


def _num(v: float) -> str:
    return f"{v:.3f}" if math.isfinite(v) and v >= 5e-4 else f"{v:.2g}"
