"""The controls' part of a demo report: the families' points, the equal-pass@1 verdicts and the frontier figure.

A run holds a family when every arm of its grid ran (:data:`verl_focal.lab.demo.arms.CONTROL_FAMILIES`,
:data:`~verl_focal.lab.demo.arms.METHOD_FAMILIES`, :data:`~verl_focal.lab.demo.arms.REFERENCE_FAMILIES`); with GRPO
N=8 and at least one control family, every method arm that ran is compared with every control family by
:func:`verl_focal.lab.stats.frontier.frontier_claims`.  A reference family (the output mixture, computed, never
trained) is compared with the control families as the methods are, and the methods are compared with it as with a
control family; it is never counted as a method.  Everything here reads the run's ``results`` (in memory or loaded
back from results.json), so a report can be redrawn from a file; several runs pooled (:mod:`.pool`) are read the
same way.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from verl_focal.lab import frontier_report as shared
from verl_focal.lab.demo.arms import BASE, CONTROL_FAMILIES, METHOD_FAMILIES, REFERENCE_ARM, REFERENCE_FAMILIES, Family
from verl_focal.lab.stats.frontier import OUTSIDE, frontier_claims, replicate_frontier
from verl_focal.lab.stats.frontier import claim_cell as _cell
from verl_focal.lab.stats.frontier import signed as _s
from verl_focal.lab.stats.power import minimum_detectable_d
from verl_focal.lab.stats.verdict import t_interval

__all__ = ["FRONTIER_PLOT", "frontier_results", "controls_markdown", "frontier_plot", "frontier_replication_markdown",
           "power_markdown", "pooled_frontier_markdown", "REFERENCE_COLOUR"]

FRONTIER_PLOT = "frontier.png"
#: the output mixture's curve (a reference): dotted, in a colour no family uses
REFERENCE_COLOUR = "#01665e"
#: each reference family's colour (dotted curves); the output mixture keeps :data:`REFERENCE_COLOUR`
REFERENCE_COLOURS = {"output mixture": REFERENCE_COLOUR, "weight interpolation": "#8c510a"}
#: the frontier's two axes (the claims' five metrics are :data:`verl_focal.lab.demo.stats.METRICS`)
FRONTIER_METRICS = ("pass@1", "pass@256")


def _per_seed(results: dict[str, Any]) -> dict[str, dict[str, dict[int, float]]]:
    """per_seed[arm][metric][seed] for pass@1 and pass@256, the seeds' SFT policies under ``base (SFT)``."""
    out: dict[str, dict[str, dict[int, float]]] = {}

    def put(name: str, seed, ev: dict) -> None:
        pk = {int(k): float(v) for k, v in ev["pass_at_k"].items()}
        for m, k in zip(FRONTIER_METRICS, (1, 256)):
            out.setdefault(name, {}).setdefault(m, {})[int(seed)] = pk[k]

    for r in results["runs"] + results.get("references", []):  # the trained arms, then the output mixture's points
        put(r["arm"], r["seed"], r["eval"])
    for seed, ev in results["base"].get("per_seed", {}).items():
        put(BASE, seed, ev)
    return out


def _complete(families: tuple[Family, ...], ran: set[str]) -> list[Family]:
    return [f for f in families if all(a.name in ran for a in f.arms)]


def _grid(f: Family) -> list[tuple[str, str]]:
    """(label, arm) of the family's points in knob order; the lower-lr family ends at the SFT policy (lr = 0)."""
    pts = [(lab, a.name) for lab, a in zip(f.labels, f.arms)]
    return pts + ([("0 (SFT policy)", BASE)] if f.ends_at_sft else [])


def frontier_results(results: dict[str, Any], n_boot: int = 4000) -> dict[str, Any] | None:
    """The families' points (mean paired difference from GRPO N=8 with its 95% Student-t interval, on pass@1 and
    pass@256) and the equal-pass@1 claims: every method arm against every control family, then every point of a
    reference family (the output mixture) against every control family, then every method arm against each
    reference family.  ``references`` names the reference points (never methods).  None when the run holds no
    complete control family (or no GRPO N=8, or fewer than two seeds)."""
    per_seed = _per_seed(results)
    ran = set(per_seed) - {BASE}
    controls = _complete(CONTROL_FAMILIES, ran)
    if REFERENCE_ARM not in per_seed or not controls or len(per_seed[REFERENCE_ARM]["pass@1"]) < 2:
        return None
    methods = _complete(METHOD_FAMILIES, ran)
    references = _complete(REFERENCE_FAMILIES, ran)
    seeds = sorted(per_seed[REFERENCE_ARM]["pass@1"])
    ref = per_seed[REFERENCE_ARM]
    points = []
    for f in controls + methods + references:
        for label, arm in _grid(f):
            row: dict[str, Any] = {"family": f.name, "knob": f.knob, "label": label, "arm": arm, "control": f.control}
            if f.reference:
                row["reference"] = True
            for m in FRONTIER_METRICS:
                mean, lo, hi = t_interval([per_seed[arm][m][s] - ref[m][s] for s in seeds])
                row[m] = {"mean": mean, "ci_low": lo, "ci_high": hi}
            points.append(row)
    method_arms = [a.name for f in methods for a in f.arms]
    reference_arms = [a.name for f in references for a in f.arms]
    claims = frontier_claims(per_seed, REFERENCE_ARM, method_arms + reference_arms,
                             {f.name: [arm for _, arm in _grid(f)] for f in controls}, n_boot=n_boot)
    if references:
        claims += frontier_claims(per_seed, REFERENCE_ARM, method_arms,
                                  {f.name: [arm for _, arm in _grid(f)] for f in references}, n_boot=n_boot)
        for f in references:  # each reference family's points against every other reference family
            others = [a.name for g in references if g is not f for a in g.arms]
            if others:
                claims += frontier_claims(per_seed, REFERENCE_ARM, others, {f.name: [arm for _, arm in _grid(f)]},
                                          n_boot=n_boot)
    families = [{"name": f.name, "knob": f.knob, "control": f.control, **({"reference": True} if f.reference else {})}
                for f in controls + methods + references]
    out = {"seeds": seeds, "families": families, "points": points, "claims": [c.as_json() for c in claims],
           "n_boot": n_boot, "reference": REFERENCE_ARM, "base": BASE}
    if reference_arms:
        out["references"] = reference_arms
    return out


def _advantage_scale(results: dict[str, Any]) -> list[str]:
    vals: dict[str, list[float]] = {}
    for r in results["runs"]:
        v = [h["adv_abs_mean"] for h in r["history"] if "adv_abs_mean" in h]
        if v:
            vals.setdefault(r["arm"], []).append(float(np.mean(v)))
    if not vals:
        return []
    return ["", "Mean |Â| per update (`adv_abs_mean`: the token-mean |Â| over the response tokens, mean over the "
            "updates and seeds): " + ", ".join(f"{a} {np.mean(v):.3f}" for a, v in vals.items()) + "."]


def controls_markdown(results: dict[str, Any]) -> list[str]:
    """report.md lines: the mean |Â| per update of every arm and, when the run holds the controls
    (``results["frontier"]``, from :func:`frontier_results`), the families' points and the verdict table."""
    out = _advantage_scale(results)
    fr = results.get("frontier")
    if not fr:
        return out
    n = len(fr["seeds"])
    out += ["", f"## Equal pass@1: the methods against the controls' frontiers ({n} seeds)", "",
            "Points: mean paired difference from GRPO N=8 [95% Student-t interval], every family's zero point being "
            "GRPO N=8 itself; the lower-lr family ends at the SFT policy (lr = 0).", "",
            "| family | knob | arm | Δ pass@1 | Δ pass@256 |", "|---|---|---|---|---|"]
    for p in fr["points"]:
        kind = "reference" if p.get("reference") else "control" if p["control"] else "method"
        out.append(f"| {p['family']} ({kind}) | {p['knob']} = {p['label']} | {p['arm']} | "
                   f"{shared.ci_cell(p['pass@1'])} | {shared.ci_cell(p['pass@256'])} |")
    controls, refs = _columns(fr)
    by = {(c["method"], c["family"]): c for c in fr["claims"]}
    ref_points = set(fr.get("references", []))
    methods = [m for m in dict.fromkeys(c["method"] for c in fr["claims"]) if m not in ref_points]
    cols = controls + refs
    if methods:
        out += ["", "D = the method's Δ pass@256 − the control family's frontier at the method's Δ pass@1 (linear "
                "between the family's points, never extrapolated); 95% interval from a paired bootstrap over seeds "
                f"({fr['n_boot']} resamples) of the whole procedure (docs/demo.md, \"The criterion\"):", "",
                "| method | Δ pass@1 | Δ pass@256 | " + " | ".join(_column_title(f, refs) for f in cols) + " |",
                "|---|---|---|" + "---|" * len(cols)]
        for m in methods:
            first = next(c for c in fr["claims"] if c["method"] == m)
            cells = [_cell(by[(m, f)]) if (m, f) in by else "—" for f in cols]
            out.append(f"| {m} | {_s(first['x'])} | {_s(first['y'])} | " + " | ".join(cells) + " |")
    if ref_points:
        what = {"output mixture": "the output mixture λ·π_GRPO N=8 + (1 − λ)·π_SFT, computed exactly from the two "
                                  "policies",
                "weight interpolation": "the weight interpolation θ_λ = λ·θ_GRPO N=8 + (1 − λ)·θ_SFT, evaluated"}
        said = "; ".join(what.get(f, f) for f in refs)
        rcols = controls + (refs if len(refs) > 1 else [])
        head = (f"The {refs[0]}, a reference ({said}, never trained, not a method), against the control families at "
                "its own Δ pass@1" if len(refs) == 1 else
                f"The references ({said}; never trained, not methods), against the control families and each other "
                "at their own Δ pass@1")
        out += ["", f"{head}, D as above:", "",
                "| reference point | Δ pass@1 | Δ pass@256 | " + " | ".join(_column_title(f, refs) for f in rcols)
                + " |", "|---|---|---|" + "---|" * len(rcols)]
        for m in dict.fromkeys(c["method"] for c in fr["claims"] if c["method"] in ref_points):
            first = next(c for c in fr["claims"] if c["method"] == m)
            cells = [_cell(by[(m, f)]) if (m, f) in by else "—" for f in rcols]
            out.append(f"| {m} | {_s(first['x'])} | {_s(first['y'])} | " + " | ".join(cells) + " |")
        out += _mixture_table(results)
    out += ["", *power_markdown([fr]), "", f"![frontier]({FRONTIER_PLOT})"]
    return out


def _columns(fr: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The control families and the reference families of a frontier result, in its order."""
    controls = [f["name"] for f in fr["families"] if f["control"]]
    refs = [f["name"] for f in fr["families"] if f.get("reference")]
    return controls, refs


def _ref_label(refs: list[str]) -> str:
    """"The output mixture" (one reference family), "The references (output mixture, weight interpolation)"."""
    return f"The {refs[0]}" if len(refs) == 1 else f"The references ({', '.join(refs)})"


def _column_title(family: str, refs: list[str]) -> str:
    return f"vs {family} (reference)" if family in refs else f"vs {family}"


#: what the output mixture's rows carry (docs/demo.md, "A constructed positive control"): (title, getter)
_MIXTURE_COLUMNS = (
    ("pass@1", lambda e: _pk(e["pass_at_k"])[1]),
    ("pass@16", lambda e: _pk(e["pass_at_k"])[16]),
    ("pass@256", lambda e: _pk(e["pass_at_k"])[256]),
    ("AUC@256", lambda e: e["auc_at_k"]),
    ("ΔNLL rare", lambda e: e.get("delta_nll_rare", float("nan"))),
    ("unfamiliar pass@1", lambda e: _pk(e["unfamiliar_pass_at_k"])[1]),
    ("unfamiliar pass@256", lambda e: _pk(e["unfamiliar_pass_at_k"])[256]),
    ("rare retained", lambda e: e.get("rare_retained", float("nan"))),
    ("mul mass", lambda e: e["strategy_mass"]["mul"]),
    ("multi-strategy groups (exact, N=8)", lambda e: e["groups_n8"]["multi_given_ge2"]),
)


def _pk(d: dict) -> dict[int, float]:
    return {int(k): float(v) for k, v in d.items()}


def _mixture_table(results: dict[str, Any]) -> list[str]:
    """The output mixture's own metrics, mean ± sample std over seeds per λ (every one exact: from the two policies'
    log-probs of every correct answer)."""
    by: dict[str, list[dict]] = {}
    for r in results.get("references", []):
        by.setdefault(r["arm"], []).append(r["eval"])
    if not by:
        return []
    out = ["", "The references' metrics (mean ± sample std over seeds; the output mixture's exact, from GRPO N=8's and "
           "the SFT policy's probabilities of every correct answer, the weight interpolation's from its own "
           "evaluation; no training diagnostics: nothing was trained):", "",
           "| reference point | " + " | ".join(t for t, _ in _MIXTURE_COLUMNS) + " |",
           "|---|" + "---|" * len(_MIXTURE_COLUMNS)]
    for name, evals in by.items():
        cells = []
        for _, get in _MIXTURE_COLUMNS:
            v = np.array([get(e) for e in evals], dtype=float)
            cells.append(f"{np.mean(v):.3f} ± {np.std(v, ddof=1):.3f}" if len(v) > 1 else f"{v[0]:.3f}")
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out


def power_markdown(frontiers: list[dict[str, Any]]) -> list[str]:
    """The design's power, stated with its verdicts (docs/demo.md, "Sharper controls"): over the method × control
    family comparisons inside the grid, the median and range of the smallest D detected with 80% power at the 5%
    level (:func:`verl_focal.lab.stats.power.minimum_detectable_d` of each claim's bootstrap standard error), at each
    run's seeds and projected to all the runs' seeds together; then which comparisons are *better* in every run."""
    if not frontiers:
        return []
    out = []
    sizes = [len(fr["seeds"]) for fr in frontiers]
    pooled = sum(sizes)

    def span(values: list[float]) -> str:
        return f"{float(np.median(values)):.3f} [{min(values):.3f}, {max(values):.3f}]" if values else "—"

    controls = {f["name"] for fr in frontiers for f in fr["families"] if f["control"]}
    refs = {m for fr in frontiers for m in fr.get("references", [])}  # the references' points: not methods
    ref_families = list(dict.fromkeys(f["name"] for fr in frontiers for f in fr["families"] if f.get("reference")))
    for i, fr in enumerate(frontiers):
        n = len(fr["seeds"])
        ses = [c["se"] for c in fr["claims"]
               if c.get("se") is not None and c["family"] in controls and c["method"] not in refs and n >= 2]
        at_n = [minimum_detectable_d(se, n) for se in ses]
        target = pooled if len(frontiers) > 1 else 2 * n
        at_t = [minimum_detectable_d(se, n, target) for se in ses]
        who = f"run {i + 1}: " if len(frontiers) > 1 else ""
        out.append(f"- Power ({who}{len(ses)} comparisons inside the grid): the smallest D detected with 80% power "
                   f"at the 5% level is {span(at_n)} (median [range]) at {n} seeds, and {span(at_t)} projected to "
                   f"{target} seeds.")
    where = "every run" if len(frontiers) > 1 else "this run"
    for kind in ("methods", "references"):
        better = [{(c["method"], c["family"]) for c in fr["claims"] if c["verdict"] == "better"
                   and c["family"] in controls and (c["method"] in refs) == (kind == "references")} for fr in frontiers]
        held = sorted(set.intersection(*better)) if better else []
        beat = "; ".join(f"{m} vs {f}" for m, f in held) if held else "none"
        if kind == "methods":
            out.append(f"- Better than a control family at equal pass@1 in {where}: {beat}.")
        elif refs:
            kind_ = "a reference, not a method" if len(ref_families) == 1 else "not methods"
            out.append(f"- {_ref_label(ref_families)} ({kind_}) better than a control family in {where}: {beat}.")
    return out


def _box(xs: list[float], ys: list[float], pad: float = 0.08) -> tuple[tuple[float, float], tuple[float, float]]:
    def span(v):
        lo, hi = min(v), max(v)
        d = max(hi - lo, 1e-3) * pad
        return lo - d, hi + d

    return span(xs), span(ys)


def frontier_plot(results: dict[str, Any], path: str, tag: str = "", zoom_x: float = -0.05) -> None:
    """pass@1 against pass@256, as paired differences from GRPO N=8 with 95% intervals on both axes: one curve per
    family from GRPO N=8 at (0, 0) through its grid in knob order, controls dashed, methods solid.

    Left: every point the methods reach, GRPO N=8 and the SFT policy; a control point far outside that box (a
    collapsed run) is left off the axes and named in a note.  Right: the close-up of Δ pass@1 ≥ ``zoom_x``, where
    the methods' published settings sit."""
    plt = shared.pyplot()
    fr = results["frontier"]
    pts_of = {f["name"]: [p for p in fr["points"] if p["family"] == f["name"]] for f in fr["families"]}
    methods = [p for f in fr["families"] if not f["control"] for p in pts_of[f["name"]]]
    anchor = methods + [p for p in fr["points"] if p["arm"] == BASE]
    ax_x = [0.0] + [p["pass@1"]["mean"] for p in anchor]
    (xlo, xhi), _ = _box(ax_x, [0.0])
    inside = [p for p in fr["points"] if xlo <= p["pass@1"]["mean"] <= xhi]
    _, (ylo, yhi) = _box([0.0], [0.0] + [p["pass@256"]["mean"] for p in inside])
    off = [p for p in fr["points"] if not (xlo <= p["pass@1"]["mean"] <= xhi and ylo <= p["pass@256"]["mean"] <= yhi)]
    near = [p for p in fr["points"] if p["pass@1"]["mean"] >= zoom_x]
    (zxlo, zxhi), (zylo, zyhi) = _box([zoom_x, 0.0] + [p["pass@1"]["mean"] for p in near],
                                      [0.0] + [p["pass@256"]["mean"] for p in near], pad=0.06)
    fig, axes = plt.subplots(1, 2, figsize=(13, 6), gridspec_kw={"width_ratios": [1.15, 1]})
    for ax, (bx, by), labels in ((axes[0], ((xlo, xhi), (ylo, yhi)), False),
                                 (axes[1], ((zxlo, zxhi), (zylo, zyhi)), True)):
        shared.zero_axes(ax)
        k = 0
        for fam in fr["families"]:
            pts = pts_of[fam["name"]]
            xs = [0.0] + [p["pass@1"]["mean"] for p in pts]
            ys = [0.0] + [p["pass@256"]["mean"] for p in pts]
            if fam.get("reference"):
                colour, ls, marker, lw, kind = (REFERENCE_COLOURS.get(fam["name"], REFERENCE_COLOUR), ":", "D", 2.2,
                                                "reference")
            elif fam["control"]:
                colour, ls, marker, lw = shared.NAMED_CONTROL_COLOURS.get(fam["name"], "grey"), "--", "s", 1.8
                kind = "control"
            else:
                colour, ls, marker, lw = shared.METHOD_COLOURS[k % len(shared.METHOD_COLOURS)], "-", "o", 1.8
                k, kind = k + 1, "method"
            ax.plot(xs, ys, ls=ls, color=colour, lw=lw, marker=marker, ms=5,
                    label=f"{kind}: {fam['name']} ({fam['knob']})")
            for p in pts:
                x, y = p["pass@1"], p["pass@256"]
                if math.isfinite(x["ci_low"]) and p["arm"] != BASE:
                    shared.interval_bars(ax, x, y, colour, lw=0.7, alpha=0.35)
                inside_box = bx[0] <= x["mean"] <= bx[1] and by[0] <= y["mean"] <= by[1]
                if (labels or fam["control"] or fam.get("reference")) and inside_box and p["arm"] != BASE:
                    ax.annotate(p["label"], (x["mean"], y["mean"]), textcoords="offset points", xytext=(4, 3),
                                fontsize=6.5, color=colour)
        shared.reference_star(ax, "GRPO N=8 (reference)")
        sft = [p for p in fr["points"] if p["arm"] == BASE]
        if sft:
            ax.plot([sft[0]["pass@1"]["mean"]], [sft[0]["pass@256"]["mean"]], marker="X", ms=10, color="k",
                    ls="none", zorder=10, label="SFT policy (= GRPO at lr 0)")
        ax.set_xlim(*bx)
        ax.set_ylim(*by)
        ax.set_xlabel("Δ pass@1 vs GRPO N=8 (paired by seed)")
        ax.set_ylabel("Δ pass@256 vs GRPO N=8 (paired by seed)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, loc="lower left")
    seeds = fr["seeds"]
    axes[0].set_title(f"All points ({len(seeds)} seeds, {seeds[0]}–{seeds[-1]}; 95% intervals){tag}", fontsize=9)
    axes[1].set_title(f"Close-up: Δ pass@1 ≥ {zoom_x:+.2f}, labelled by knob value{tag}", fontsize=9)
    if off:
        note = "; ".join(f"{p['family']} {p['label']} at ({p['pass@1']['mean']:+.2f}, {p['pass@256']['mean']:+.2f})"
                         for p in off)
        axes[0].text(0.99, 0.01, f"off the axes: {note}", transform=axes[0].transAxes, ha="right", va="bottom",
                     fontsize=7, color="0.3")
    fig.suptitle("Coverage at equal pass@1: each family's curve runs from GRPO N=8 (star) along its knob; "
                 "higher at the same Δ pass@1 = more coverage for the same cost", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    shared.save_png(fig, path)


def frontier_replication_markdown(res_1: dict[str, Any], res_2: dict[str, Any]) -> list[str]:
    """The equal-pass@1 verdicts of two runs side by side (method × control family): ``holds`` when both runs give
    the same verdict, ``not established`` otherwise; empty when either run holds no controls."""
    f1, f2 = res_1.get("frontier"), res_2.get("frontier")
    if not f1 or not f2:
        return []
    rows = replicate_frontier(f1["claims"], f2["claims"])
    controls, refs = _columns(f1)
    cols = controls + refs
    by = {(r["method"], r["family"]): r for r in rows}
    out = ["| method (or reference point) | " + " | ".join(_column_title(f, refs) for f in cols) + " |",
           "|---|" + "---|" * len(cols)] if refs else [
        "| method | " + " | ".join(f"vs {f}" for f in controls) + " |", "|---|" + "---|" * len(controls)]
    for m in dict.fromkeys(r["method"] for r in rows):
        cells = []
        for f in cols:
            r = by.get((m, f))
            if r is None:
                cells.append("—")
                continue
            # no estimate where a run put the method outside the grid (its D would rest on extrapolation)
            e1, e2 = (None if r[f"verdict_{i}"] == OUTSIDE else r[f"estimate_{i}"] for i in (1, 2))
            est = f"{_s(e1)} \\| {_s(e2)}"
            v = r["verdict_1"] if r["status"] == "holds" else f"{r['verdict_1']} \\| {r['verdict_2']}: not established"
            cells.append(f"{est}, **{v}**" if r["status"] == "holds" else f"{est}, {v}")
        out.append(f"| {m} | " + " | ".join(cells) + " |")
    return out


#: the verdicts in the pooled table's short form (each run's and each half's beside the pooled one)
_SHORT = {"better": "b", "worse": "w", "not detected": "nd", OUTSIDE: "og"}


def _short(claim: dict | None) -> str:
    return "—" if claim is None else _SHORT.get(claim["verdict"], "nt")


def pooled_frontier_markdown(pooled: dict[str, Any], halves: list[dict[str, Any]], runs: list[dict[str, Any]],
                             run_power: bool = True) -> list[str]:
    """The equal-pass@1 verdicts of several runs of one design pooled (docs/demo.md, "One design of 48 seeds"):
    per method (and reference point) × family, the pooled D [95% interval] and verdict, which *holds* when the
    pooled verdicts of both halves (``halves``: the frontier results of each half's runs pooled) are the same as
    it, and is *not established* otherwise; each half's and each run's verdict beside it (b better, w worse, nd not
    detected, og outside the grid); then the pooled power, what holds and (``run_power``) each run's power line."""
    controls, refs = _columns(pooled)
    cols = controls + refs
    index = [{(c["method"], c["family"]): c for c in fr["claims"]} for fr in [pooled, *halves, *runs]]
    by, by_half, by_run = index[0], index[1:1 + len(halves)], index[1 + len(halves):]
    ref_points = set(pooled.get("references", []))
    n = len(pooled["seeds"])
    sizes = " + ".join(str(len(fr["seeds"])) for fr in halves)
    out = [f"Pooled over {n} seeds ({len(runs)} runs; halves of {sizes} seeds): D [95% interval] and verdict; it "
           "**holds** when both halves' pooled verdicts are the same, else not established; halves | runs in short "
           "(b better, w worse, nd not detected, og outside the grid):", "",
           "| method (or reference point) | Δ pass@1 | Δ pass@256 | " + " | ".join(_column_title(f, refs) for f in cols)
           + " |", "|---|---|---|" + "---|" * len(cols)]
    status: dict[tuple[str, str], bool] = {}
    for m in dict.fromkeys(c["method"] for c in pooled["claims"]):
        first = next(c for c in pooled["claims"] if c["method"] == m)
        cells = []
        for f in cols:
            c = by.get((m, f))
            if c is None:
                cells.append("—")
                continue
            hv = [h.get((m, f)) for h in by_half]
            holds = all(h is not None and h["verdict"] == c["verdict"] for h in hv) and c["verdict"] in _SHORT
            status[(m, f)] = holds
            halves_txt, runs_txt = " \\| ".join(_short(h) for h in hv), " ".join(_short(r.get((m, f))) for r in by_run)
            tail = f"halves {halves_txt}; runs {runs_txt}"
            cells.append(f"{_cell(c)}, {'**holds**' if holds else 'not established'} ({tail})")
        name = f"{m} (reference)" if m in ref_points else m
        out.append(f"| {name} | {_s(first['x'])} | {_s(first['y'])} | " + " | ".join(cells) + " |")
    ses = [c["se"] for c in pooled["claims"]
           if c.get("se") is not None and c["family"] in controls and c["method"] not in ref_points]
    if ses and n >= 2:
        mdd = [minimum_detectable_d(se, n) for se in ses]
        out += ["", f"- Pooled power ({len(ses)} method × control family comparisons inside the grid): the smallest D "
                f"detected with 80% power at the 5% level is {float(np.median(mdd)):.3f} [{min(mdd):.3f}, "
                f"{max(mdd):.3f}] (median [range]) at {n} seeds."]
    ref_kind = "(a reference)" if len(refs) == 1 else "(not methods)"
    for label, pick in (("Methods", lambda m: m not in ref_points), (f"{_ref_label(refs)} {ref_kind}",
                                                                     lambda m: m in ref_points)):
        if label != "Methods" and not ref_points:
            continue
        for verdict in ("better", "worse"):
            held = [f"{m} vs {f}" for (m, f), ok in status.items()
                    if ok and pick(m) and f in controls and by[(m, f)]["verdict"] == verdict]
            out.append(f"- {label} {verdict} than a control family at equal pass@1 ({n} seeds, holds): "
                       f"{'; '.join(held) if held else 'none'}.")
    if refs:
        for verdict in ("better", "worse"):
            held = [f"{m} vs {f}" for (m, f), ok in status.items()
                    if ok and f in refs and m not in ref_points and by[(m, f)]["verdict"] == verdict]
            out.append(f"- Methods {verdict} than {_ref_label(refs)[0].lower() + _ref_label(refs)[1:]} at equal "
                       f"pass@1 ({n} seeds, holds): "
                       f"{'; '.join(held) if held else 'none'}.")
        if len(refs) > 1:
            for verdict in ("better", "worse"):
                held = [f"{m} vs {f}" for (m, f), ok in status.items()
                        if ok and f in refs and m in ref_points and by[(m, f)]["verdict"] == verdict]
                out.append(f"- Reference points {verdict} than another reference family at equal pass@1 ({n} seeds, "
                           f"holds): {'; '.join(held) if held else 'none'}.")
    if run_power:
        out += ["", "Each run at its own seeds (power projected to all the runs' seeds together):", "",
                *power_markdown(runs)]
    return out
