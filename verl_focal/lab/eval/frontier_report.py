"""What ``verl-focal eval frontier`` writes: frontier.md (points and verdict table), frontier.json (the same as data)
and frontier.png (the frontier figure), from :func:`verl_focal.lab.eval.frontier.frontier_table`'s result."""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from verl_focal.lab import frontier_report as shared
from verl_focal.lab.stats.frontier import OUTSIDE, claim_cell, signed
from verl_focal.lab.stats.power import minimum_detectable_d

__all__ = ["detectable_d", "power_line", "uncertainty_note", "frontier_markdown", "frontier_figure", "write_frontier"]

#: the power the smallest detectable D is stated at (two-sided, at the table's level)
POWER = 0.80

FILES = {"table": "frontier.md", "data": "frontier.json", "figure": "frontier.png"}


def uncertainty_note(fr: dict[str, Any]) -> str:
    """One sentence: what the intervals resample, and (one run per point) that training-run variance is not in them."""
    lvl = f"{fr['level']:.0%}"
    if fr["resampled"] == "seeds":
        return (f"{lvl} intervals: points, Student-t over the {len(fr['seeds'])} training seeds of the paired "
                f"differences; D, a paired bootstrap over seeds of the whole procedure ({fr['n_boot']} resamples)")
    return (f"{lvl} intervals: bootstrap over problems and samples ({fr['n_boot']} resamples). One training run per "
            "point: training-run variance is NOT in these intervals")


def detectable_d(c: dict[str, Any], fr: dict[str, Any]) -> float | None:
    """The smallest D the comparison ``c`` (a claim of ``fr``) detects with 80% power at the table's level: over
    seeds (t_{n−1, 1−α/2} + t_{n−1, 0.80}) · se (:func:`~verl_focal.lab.stats.power.minimum_detectable_d`, se the
    bootstrap standard error of D behind the interval), over problems (z_{1−α/2} + z_{0.80}) · se, as its normal
    interval; None outside the grid or without a standard error."""
    se = c.get("se")
    if c["verdict"] == OUTSIDE or se is None or not math.isfinite(se):
        return None
    if fr["resampled"] == "seeds":
        n = len(fr["seeds"])
        return minimum_detectable_d(se, n, level=fr["level"], power=POWER) if n >= 2 else None
    from scipy import stats as st

    return float((st.norm.ppf(0.5 + fr["level"] / 2) + st.norm.ppf(POWER)) * se)


def _power_claims(fr: dict[str, Any]) -> list[dict[str, Any]]:
    """The claims the power statement counts: the methods against the control families (not the reference
    families' points, not the comparisons with a reference family)."""
    refs = set(fr.get("references", []))
    controls = {f["name"] for f in fr["families"] if f["control"]}
    return [c for c in fr["claims"] if c["method"] not in refs and c["family"] in controls]


def power_line(fr: dict[str, Any]) -> str:
    """One sentence: the median and range of :func:`detectable_d` over the comparisons inside the grid."""
    ds = [d for d in (detectable_d(c, fr) for c in _power_claims(fr)) if d is not None]
    if not ds:
        return "Power: no comparison inside a control family's grid, so no smallest detectable D"
    level = 1 - fr["level"]
    what = f"{len(fr['seeds'])} seeds per point" if fr["resampled"] == "seeds" else "one run per point"
    return (f"Power: the smallest D this design detects with {POWER:.0%} power at the {level:.0%} level is "
            f"{float(np.median(ds)):.3f} [{min(ds):.3f}, {max(ds):.3f}] (median [range] over the {len(ds)} comparisons "
            f"inside the grid, {what}); a 'not detected' says nothing about a D smaller than that")


def _problems_line(fr: dict[str, Any]) -> str:
    parts = []
    for b, p in fr["problems"].items():
        if p["shared"] is None:
            parts.append(f"{b}: exact pass@k (demo runs)")
            continue
        left = ", ".join(f"{r} {n}" for r, n in sorted(p["left_out"].items()))
        parts.append(f"{b}: {p['shared']} problems shared by every run"
                     + (f", left out: {left}" if left else ", none left out"))
    return "Problems: " + "; ".join(parts) + "."


def frontier_markdown(fr: dict[str, Any]) -> str:
    """frontier.md: the setting, the families' points and the verdict table (method × control family)."""
    x, y = fr["x"], fr["y"]
    bench = fr["benchmark"] + (f" (mean over {', '.join(fr['benchmarks'])})" if len(fr["benchmarks"]) > 1 else "")
    out = [f"# Equal {x}: the methods against the control families' frontiers", "",
           f"{x} (x) against {y} (y) on {bench}; every point is a paired difference from the reference "
           f"{fr['reference']!r}, every family's zero point. Families file: {fr['families_file']}.", "",
           uncertainty_note(fr) + ".", "", _problems_line(fr), "",
           f"| family | knob | point | Δ {x} | Δ {y} |", "|---|---|---|---|---|"]
    for p in fr["points"]:
        kind = "reference" if p.get("reference") else "control" if p["control"] else "method"
        knob = f"{p['knob']} = {p['label']}" if p["label"] is not None else "—"
        out.append(f"| {p['family']} ({kind}) | {knob} | {p['policy']} | {shared.ci_cell(p[x])} | "
                   f"{shared.ci_cell(p[y])} |")
    controls = [f["name"] for f in fr["families"] if f["control"] or f.get("reference")]
    by = {(c["method"], c["family"]): c for c in fr["claims"]}
    methods = list(dict.fromkeys(c["method"] for c in fr["claims"]))
    out += ["", f"D = the method's Δ {y} − the control family's frontier at the method's Δ {x} (linear between the "
            "family's points, never extrapolated); better / worse when the interval excludes 0, else not detected:",
            "", f"| method | Δ {x} | Δ {y} | " + " | ".join(f"vs {f}" for f in controls) + " |",
            "|---|---|---|" + "---|" * len(controls)]
    for m in methods:
        first = next(c for c in fr["claims"] if c["method"] == m)
        cells = [_cell(by[(m, f)], fr, x) if (m, f) in by else "—" for f in controls]
        out.append(f"| {m} | {signed(first['x'])} | {signed(first['y'])} | " + " | ".join(cells) + " |")
    out += ["", power_line(fr) + ".", "", f"![frontier]({FILES['figure']})", ""]
    return "\n".join(out)


def _cell(c: dict[str, Any], fr: dict[str, Any], x: str) -> str:
    d = detectable_d(c, fr)
    return claim_cell(c, x) + ("" if d is None else f"; detects ≥ {d:.3f}")


def frontier_figure(fr: dict[str, Any], path: str | Path) -> None:
    """Δx against Δy with the intervals on both axes: one dashed curve per control family from the reference at
    (0, 0) through its points in knob order, methods as points (a method's own sweep as a solid curve); the
    uncertainty note under the axes."""
    x, y = fr["x"], fr["y"]
    fig, ax = shared.pyplot().subplots(figsize=(8.5, 6.5))
    shared.zero_axes(ax)
    nc = nm = 0
    for fam in fr["families"]:
        pts = [p for p in fr["points"] if p["family"] == fam["name"]]
        if fam["control"] or fam.get("reference"):
            colour, ls, marker = shared.CONTROL_COLOURS[nc % len(shared.CONTROL_COLOURS)], "--", "s"
            nc += 1
        else:
            colour, ls, marker = shared.METHOD_COLOURS[nm % len(shared.METHOD_COLOURS)], "-", "o"
            nm += 1
        xs, ys = [p[x]["mean"] for p in pts], [p[y]["mean"] for p in pts]
        single = not fam["control"] and len(pts) == 1
        kind = "reference" if fam.get("reference") else "control" if fam["control"] else "method"
        label = f"{kind}: {fam['name']}" + (f" ({fam['knob']})" if not single
                                                                                 else "")
        ax.plot(xs if single else [0.0] + xs, ys if single else [0.0] + ys, ls="none" if single else ls,
                color=colour, marker=marker, ms=6, label=label)
        for p in pts:
            px, py = p[x], p[y]
            if math.isfinite(px["ci_low"]):
                shared.interval_bars(ax, px, py, colour, lw=0.8, alpha=0.4)
            if p["label"] is not None:
                ax.annotate(p["label"], (px["mean"], py["mean"]), textcoords="offset points", xytext=(4, 3),
                            fontsize=7, color=colour)
    shared.reference_star(ax, f"{fr['reference']} (reference)")
    ax.set_xlabel(f"Δ {x} vs {fr['reference']}")
    ax.set_ylabel(f"Δ {y} vs {fr['reference']}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    bench = fr["benchmark"] if len(fr["benchmarks"]) == 1 else f"{fr['benchmark']} ({len(fr['benchmarks'])} sets)"
    ax.set_title(f"{y} at equal {x} on {bench}\nhigher than a control's curve = more coverage for the same accuracy",
                 fontsize=9)
    fig.text(0.5, 0.01, textwrap.fill(uncertainty_note(fr) + ". " + power_line(fr) + ".", 130), ha="center",
             va="bottom", fontsize=7,
             color="firebrick" if fr["resampled"] == "problems" else "0.3")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    shared.save_png(fig, path)


def write_frontier(fr: dict[str, Any], out_dir: str | Path) -> dict[str, Path]:
    """Write frontier.md, frontier.json and frontier.png into ``out_dir``; return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {k: out / v for k, v in FILES.items()}
    paths["table"].write_text(frontier_markdown(fr), encoding="utf-8")
    paths["data"].write_text(json.dumps(fr, indent=1, ensure_ascii=False), encoding="utf-8")
    frontier_figure(fr, paths["figure"])
    return paths
