"""Report of a demo run: results.json (with a machine-readable ``claims`` list), report.md and PNG plots."""

from __future__ import annotations

import json
import math
import os
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

import numpy as np

from verl_focal.lab.demo.arms import BASE
from verl_focal.lab.demo.arms import REFERENCE_ARM as REFERENCE
from verl_focal.lab.demo.effect import effect_markdown
from verl_focal.lab.demo.frontier_report import FRONTIER_PLOT, controls_markdown, frontier_plot, frontier_results
from verl_focal.lab.demo.stats import METRICS, replicate

__all__ = ["summarise", "write_report", "claims_markdown", "replication_markdown", "headline_markdown",
           "pooled_claims_markdown",
           "group_size_rows", "grpo_group_sizes", "passk_differences", "REPORT_FILES", "GROUP_SIZE_PLOT",
           "SMOKE_BANNER", "PAPER_SWEEP", "PAPER_FOCAL_N8"]

REPORT_FILES = ("results.json", "report.md", "pass_at_k.png", "train_acc.png", "strategy_mass.png")
#: written as well when the run holds GRPO at three or more group sizes (``--arms n-sweep``)
GROUP_SIZE_PLOT = "pass_at_k_vs_N.png"
SMOKE_BANNER = "smoke run: checks the pipeline, not the methods"

#: the F-GRPO paper's group-size sweep (arXiv 2602.06717; GRPO on Qwen2.5-7B, maths, pass@1 / pass@256 in %),
#: drawn beside ours in pass_at_k_vs_N.png
PAPER_SWEEP = {2: (36.2, 75.0), 4: (36.4, 71.1), 8: (37.3, 64.1), 16: (38.4, 67.5), 32: (39.2, 70.1)}
PAPER_FOCAL_N8 = (38.6, 70.3)

# (column title, getter on a run's eval dict)
_COLUMNS = (
    ("pass@1", lambda e: e["pass_at_k"][1]),
    ("pass@16", lambda e: e["pass_at_k"].get(16, np.nan)),
    ("pass@256", lambda e: e["pass_at_k"].get(256, np.nan)),
    ("AUC@256", lambda e: e.get("auc_at_k", np.nan)),
    ("ΔNLL rare", lambda e: e.get("delta_nll_rare", np.nan)),
    ("unfamiliar pass@1", lambda e: _k(e.get("unfamiliar_pass_at_k", {})).get(1, np.nan)),
    ("unfamiliar pass@256", lambda e: _k(e.get("unfamiliar_pass_at_k", {})).get(256, np.nan)),
    ("rare retained", lambda e: e.get("rare_retained", np.nan)),
    ("mul mass", lambda e: e["strategy_mass"]["mul"]),
    ("multi-strategy groups", lambda e: e.get("multi_strategy_share", np.nan)),
    ("entropy", lambda e: e.get("entropy_final", np.nan)),
)


def _k(d: dict) -> dict[int, float]:
    return {int(k): v for k, v in d.items()}


def summarise(results: dict[str, Any]) -> OrderedDict[str, dict[str, Any]]:
    """Per arm, and for the base (SFT) policies first: mean and sample std (ddof=1; NaN with one seed) of every table
    column and of the pass@k curve."""
    by_arm: OrderedDict[str, list[dict]] = OrderedDict()
    for e in results["base"].get("per_seed", {}).values():  # the base: each seed's SFT policy
        e = dict(e)
        e["pass_at_k"] = _k(e["pass_at_k"])
        e["multi_strategy_share"] = e.get("groups_n8", {}).get("multi_given_ge2", np.nan)  # exact, N=8
        by_arm.setdefault(BASE, []).append(e)
    for r in results["runs"]:
        e = dict(r["eval"])
        e["pass_at_k"] = _k(e["pass_at_k"])
        by_arm.setdefault(r["arm"], []).append(e)
    out: OrderedDict[str, dict[str, Any]] = OrderedDict()
    for arm, evals in by_arm.items():
        cols = {}
        for title, get in _COLUMNS:
            v = np.array([get(e) for e in evals], dtype=float)
            cols[title] = (float(np.nanmean(v)) if np.isfinite(v).any() else float("nan"),
                           float(np.nanstd(v, ddof=1)) if np.isfinite(v).sum() > 1 else float("nan"))
        ks = sorted(evals[0]["pass_at_k"])
        curve = np.array([[e["pass_at_k"][k] for k in ks] for e in evals])
        out[arm] = {"n_seeds": len(evals), "columns": cols, "ks": ks, "curve_mean": curve.mean(0).tolist(),
                    "curve_std": (curve.std(0, ddof=1) if len(evals) > 1 else np.full(len(ks), np.nan)).tolist()}
    return out


_DIAG_KEYS = ("focal/weight_mean_active", "cue/frac_groups_multi_cluster", "cue/clusters_per_group", "cue/w_max",
              "passk/frac_active", "passk/rho_mean", "unlikely/factor_mean", "unlikely/factor_min")


def _diagnostics(results: dict[str, Any]) -> OrderedDict[str, dict[str, float]]:
    """Per arm, the mean of a few estimator step metrics (steps where the estimator reported them)."""
    out: OrderedDict[str, dict[str, list]] = OrderedDict()
    for r in results["runs"]:
        for key in _DIAG_KEYS:
            vals = [h[key] for h in r["history"] if key in h and np.isfinite(h[key])]
            if vals:
                out.setdefault(r["arm"], {}).setdefault(key, []).extend(vals)
    return OrderedDict((a, {k: float(np.mean(v)) for k, v in d.items()}) for a, d in out.items())


def _fmt(v: float, signed: bool = False) -> str:
    if v is None or not math.isfinite(v):
        return "—"
    return f"{v:+.3f}" if signed else f"{v:.3f}"


def claims_markdown(claims: Iterable[dict], baseline: str) -> list[str]:
    """Markdown table of the claims against ``baseline``: one row per arm, one cell per metric
    (estimate [95% CI] verdict)."""
    rows: OrderedDict[str, dict[str, dict]] = OrderedDict()
    n = {}
    for c in claims:
        if c["baseline"] == baseline:
            rows.setdefault(c["arm"], {})[c["metric"]] = c
            n[c["arm"]] = c["n_seeds"]
    if not rows:
        return []
    metrics = list(METRICS)
    out = ["| arm | seeds | " + " | ".join(metrics) + " |", "|---|---|" + "---|" * len(metrics)]
    for arm, by_m in rows.items():
        cells = []
        for m in metrics:
            c = by_m.get(m)
            if c is None:
                cells.append("—")
            elif c["ci_low"] is None:
                cells.append(f"{_fmt(c['estimate'], True)} ({c['verdict']})")
            else:
                cells.append(
                    f"{_fmt(c['estimate'], True)} [{_fmt(c['ci_low'], True)}, {_fmt(c['ci_high'], True)}] "
                    f"**{c['verdict']}**"
                )
        out.append(f"| {arm} | {n[arm]} | " + " | ".join(cells) + " |")
    return out


def replication_markdown(claims_1: list[dict], claims_2: list[dict]) -> list[str]:
    """Markdown table joining two runs' claims: ``holds`` when both verdicts agree, else ``not established``."""
    rows = replicate(claims_1, claims_2)
    out = ["| arm | baseline | metric | run 1 | run 2 | status |", "|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['arm']} | {r['baseline']} | {r['metric']} | {_fmt(r['estimate_1'], True)} {r['verdict_1']} | "
                   f"{_fmt(r['estimate_2'], True)} {r['verdict_2']} | {r['status']} |")
    return out


_SHORT = {"better": "b", "worse": "w", "not detected": "nd"}


def pooled_claims_markdown(pooled: list[dict], halves: list[list[dict]], runs: list[list[dict]]) -> list[str]:
    """Markdown table of several runs' claims pooled over all their seeds: per (arm, baseline, metric) the pooled
    estimate [95% interval] and verdict, which **holds** when the pooled claims of both halves (``halves``: each
    half's runs pooled) give the same verdict, and is not established otherwise; each half's and each run's verdict
    beside it in short (b better, w worse, nd not detected)."""
    key = ("arm", "baseline", "metric")
    idx = [{tuple(c[k] for k in key): c for c in cl} for cl in (*halves, *runs)]
    by_half, by_run = idx[:len(halves)], idx[len(halves):]
    out = ["| arm | baseline | metric | pooled | halves | runs | status |", "|---|---|---|---|---|---|---|"]
    for c in pooled:
        k = tuple(c[x] for x in key)
        hv = [h.get(k) for h in by_half]
        holds = c["verdict"] in _SHORT and all(h is not None and h["verdict"] == c["verdict"] for h in hv)
        cell = (f"{_fmt(c['estimate'], True)} [{_fmt(c['ci_low'], True)}, {_fmt(c['ci_high'], True)}] {c['verdict']}"
                if c["ci_low"] is not None else f"{_fmt(c['estimate'], True)} {c['verdict']}")
        short = " \\| ".join(_SHORT.get(x["verdict"], "nt") if x is not None else "—" for x in hv)
        each = [_SHORT.get(r[k]["verdict"], "nt") if k in r else "—" for r in by_run]
        out.append(f"| {c['arm']} | {c['baseline']} | {c['metric']} | {cell} | {short} | "
                   f"{' '.join(each)} | {'**holds**' if holds else 'not established'} |")
    return out


def _range(a: float | None, b: float | None, signed: bool = False) -> str:
    vals = sorted(v for v in (a, b) if v is not None and math.isfinite(v))
    if not vals:
        return "—"
    lo, hi = _fmt(vals[0], signed), _fmt(vals[-1], signed)
    return lo if lo == hi else f"{lo} to {hi}"


def headline_markdown(res_1: dict[str, Any], res_2: dict[str, Any], metrics: tuple[str, ...] = ("pass@1", "pass@256"),
                      reference: str = "GRPO N=8") -> list[str]:
    """One table of two replications: per policy (each seed's SFT policy, then every arm of both runs) the range of
    its mean over the two seed sets on ``metrics``, and its paired difference from the SFT policy (GRPO N=8) or from
    ``reference`` (other arms) with the verdict where both runs agree ("not established" where they do not)."""
    s1, s2 = res_1.get("summary", {}), res_2.get("summary", {})
    rows = [a for a in s1 if a in s2]
    rep = {(r["arm"], r["baseline"], r["metric"]): r for r in replicate(res_1["claims"], res_2["claims"])}
    head = "| policy | " + " | ".join(metrics) + " | vs | " + " | ".join(f"Δ {m}" for m in metrics) + " |"
    out = [head, "|---|" + "---|" * (2 * len(metrics) + 1)]
    for arm in rows:
        cells = [_range(s1[arm][m]["mean"], s2[arm][m]["mean"]) for m in metrics]
        base = BASE if arm == reference else (reference if arm != BASE else None)
        diffs = []
        for m in metrics:
            r = rep.get((arm, base, m)) if base else None
            if r is None:
                diffs.append("—")
                continue
            verdict = r["verdict_1"] if r["status"] == "holds" else "not established"
            diffs.append(f"{_range(r['estimate_1'], r['estimate_2'], True)} {verdict}")
        out.append(f"| {arm} | " + " | ".join(cells) + f" | {base or '—'} | " + " | ".join(diffs) + " |")
    return out


def _half_widths(claims: list[dict], metric: str, baseline: str) -> dict[str, float]:
    return {c["arm"]: (c["ci_high"] - c["ci_low"]) / 2 for c in claims
            if c["baseline"] == baseline and c["metric"] == metric and c["ci_low"] is not None}


def group_size_rows(results: dict[str, Any], level: float = 0.95) -> list[dict[str, Any]]:
    """The GRPO arms by group size N (and any other arm at a group size): per metric the mean over seeds and the
    Student-t interval of that mean, and the rollouts per RL step."""
    from verl_focal.lab.stats.verdict import t_interval

    by_arm: OrderedDict[str, list[dict]] = OrderedDict()
    n_of: dict[str, int] = {}
    est: dict[str, str] = {}
    for r in results["runs"]:
        by_arm.setdefault(r["arm"], []).append(r["eval"])
        n_of[r["arm"]], est[r["arm"]] = r["n"], r["estimator"]
    rows = []
    for arm, evals in by_arm.items():
        row: dict[str, Any] = {"arm": arm, "n": n_of[arm], "estimator": est[arm], "n_seeds": len(evals),
                               "rollouts_per_step": n_of[arm] * results["config"]["prompts_per_step"]}
        for name, get in (("pass@1", lambda e: _k(e["pass_at_k"])[1]), ("pass@256", lambda e: _k(e["pass_at_k"])[256]),
                          ("M_ret", lambda e: e.get("rare_retained", np.nan))):
            v = [float(get(e)) for e in evals]
            if all(math.isfinite(x) for x in v):
                mean, lo, hi = t_interval(v, level)
            else:
                mean, lo, hi = float("nan"), float("nan"), float("nan")
            row[name] = {"mean": mean, "ci_low": lo, "ci_high": hi}
        rows.append(row)
    return rows


def passk_differences(results: dict[str, Any], reference: str = "GRPO N=8",
                      level: float = 0.95) -> OrderedDict[str, dict[str, Any]]:
    """Per policy other than ``reference`` (each seed's SFT policy first, then the arms): the paired difference of its
    pass@k curve from ``reference``'s, seed by seed, d_s(k) = pass@k_policy(s) − pass@k_reference(s), as the mean over
    seeds and the Student-t interval of that mean at every k (:func:`~verl_focal.lab.stats.verdict.t_interval`; NaN
    bounds with one seed).  Empty when ``reference`` did not run."""
    from verl_focal.lab.stats.verdict import t_interval

    curves: OrderedDict[str, dict[int, dict[int, float]]] = OrderedDict()  # policy -> seed -> k -> pass@k
    for seed, e in results["base"].get("per_seed", {}).items():
        curves.setdefault(BASE, {})[int(seed)] = _k(e["pass_at_k"])
    for r in results["runs"]:
        curves.setdefault(r["arm"], {})[int(r["seed"])] = _k(r["eval"]["pass_at_k"])
    ref = curves.pop(reference, None)
    out: OrderedDict[str, dict[str, Any]] = OrderedDict()
    if not ref:
        return out
    for name, by_seed in curves.items():
        seeds = sorted(set(by_seed) & set(ref))
        if not seeds:
            continue
        ks = sorted(set(ref[seeds[0]]) & set(by_seed[seeds[0]]))
        stats = [t_interval([by_seed[s][k] - ref[s][k] for s in seeds], level) for k in ks]
        out[name] = {"ks": ks, "n_seeds": len(seeds), "mean": [m for m, _, _ in stats],
                     "ci_low": [lo for _, lo, _ in stats], "ci_high": [hi for _, _, hi in stats]}
    return out


def _passk_difference_panel(ax, diffs: OrderedDict[str, dict[str, Any]], colors: dict[str, Any], reference: str,
                            tag: str) -> None:
    """The pass@k figure's right panel: every policy's paired difference from ``reference``, with its interval."""
    shown = [[0.0]]
    n_seeds = max(d["n_seeds"] for d in diffs.values())
    for name, d in diffs.items():
        m, lo, hi = (np.array(d[key], dtype=float) for key in ("mean", "ci_low", "ci_high"))
        base = name == BASE
        ax.plot(d["ks"], m, ls="--" if base else "-", marker=None if base else "o", ms=3, lw=2 if base else 1.5,
                color="k" if base else colors.get(name), label=f"{name} − {reference}", zorder=10 if base else 2)
        shown.append(m)
        if np.isfinite(lo).all():
            ax.fill_between(d["ks"], lo, hi, alpha=0.08 if base else 0.12, color="k" if base else colors.get(name))
            shown += [lo, hi]
    ax.axhline(0.0, color="0.3", lw=1)
    ks = next(iter(diffs.values()))["ks"]
    ax.set_xscale("log", base=2)
    ax.set_xticks(ks, [str(k) for k in ks])
    _ylim(ax, [x for arr in shown for x in np.ravel(arr)], min_span=0.02, lo=-1.0, hi=1.0)
    ax.set_xlabel("k (samples per problem)")
    ax.set_ylabel(f"Δ pass@k vs {reference} (paired by seed)")
    over = f"mean over {n_seeds} seeds, band: 95% t-interval" if n_seeds > 1 else "1 seed: no interval"
    ax.set_title(f"paired difference from {reference} ({over}){tag}", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)


def grpo_group_sizes(results: dict[str, Any]) -> list[dict[str, Any]]:
    """:func:`group_size_rows` of the plain GRPO arms (not the controls, which change the actor or the advantages'
    weights), by increasing N."""
    controls = {a["name"] for a in results["config"]["arms"] if a.get("actor") or a.get("focal_weights")}
    return sorted((r for r in group_size_rows(results) if r["estimator"] == "grpo" and r["arm"] not in controls),
                  key=lambda r: r["n"])


def _ci_cell(d: dict[str, float]) -> str:
    if not math.isfinite(d["ci_low"]):
        return _fmt(d["mean"])
    return f"{_fmt(d['mean'])} [{_fmt(d['ci_low'])}, {_fmt(d['ci_high'])}]"


def _group_size_markdown(results: dict[str, Any]) -> list[str]:
    grpo = grpo_group_sizes(results)
    if len(grpo) < 3:
        return []
    rows = {r["arm"]: r for r in group_size_rows(results)}
    base = _k(results["base"]["eval"]["pass_at_k"])
    out = ["", "## Group size (GRPO at each N, same prompts per step)", "",
           "Mean over seeds [95% Student-t interval of the mean]; M_ret = rare retained. "
           f"Base (SFT, mean over seeds): pass@1 {_fmt(base[1])}, pass@256 {_fmt(base[256])}.", "",
           "| arm | N | rollouts / step | pass@1 | pass@256 | M_ret |", "|---|---|---|---|---|---|"]
    extra = [r for a, r in rows.items() if r["estimator"] != "grpo" and r["n"] == 8 and "F-GRPO" in a]
    for r in grpo + extra:
        out.append(f"| {r['arm']} | {r['n']} | {r['rollouts_per_step']} | {_ci_cell(r['pass@1'])} | "
                   f"{_ci_cell(r['pass@256'])} | {_ci_cell(r['M_ret'])} |")
    trough = results.get("group_size", {}).get("trough")
    if trough:
        out += ["", f"Trough of GRPO's pass@256 in N (lowest mean in this run): **{trough}**."]
    return out


def _markdown(results: dict[str, Any], summary) -> str:
    cfg = results["config"]
    quick = cfg["mode"] == "quick"
    n_seeds = len(results.get("seeds_completed", cfg["seeds"]))
    single = n_seeds < 2
    titles = [t for t, _ in _COLUMNS]
    lines = [f"# verl-focal demo report ({cfg['mode']} mode, device {cfg['device']})", ""]
    if quick:
        lines += [
            f"> **{SMOKE_BANNER}.** Small SFT, {cfg['rl_steps']} RL steps, one seed: the numbers below say that every "
            "stage ran, produced finite values and that every estimator changed the advantages (Estimator effect), "
            "nothing about whether GRPO, F-GRPO or Cue-GRPO is better.",
            "",
        ]
    arms_line = ", ".join(a["name"] for a in cfg["arms"] if "mixture" not in a and "interpolation" not in a)
    mixture = [a["name"] for a in cfg["arms"] if "mixture" in a]
    if mixture:  # the output mixture's points: references computed from GRPO N=8 and the SFT policy, not arms
        arms_line += f"; references (computed, not trained): {', '.join(mixture)}"
    wise = [a["name"] for a in cfg["arms"] if "interpolation" in a]
    if wise:  # the weight interpolation's points: GRPO N=8's and the SFT policy's parameters interpolated
        arms_line += f"; references (interpolated, then evaluated; not trained): {', '.join(wise)}"
    pr = results["problems"]
    lines += [
        f"Task: clock arithmetic mod 16 (`A op B` with the given symbol; strategies add/sub/mul). "
        f"Each seed fits its own SFT policy ({cfg['sft_steps']} steps, prior {cfg['prior']}) on demonstrations for "
        f"the {pr['familiar']} familiar problems; RL ({cfg['rl_steps']} steps × {cfg['prompts_per_step']} prompts, "
        f"lr {cfg['lr']}) trains on all {pr['rl']} problems, {pr['unfamiliar']} of them unfamiliar. "
        f"Arms: {arms_line}. Seeds completed: {results.get('seeds_completed', list(cfg['seeds']))}.",
        f"pass@k and AUC@256 are exact (the expectation of the unbiased estimator) on the {pr['rl']} problems RL "
        "trains on; the unfamiliar columns on the problems SFT never demonstrated. "
        + ("One seed: single values, no spread." if single else "Values: mean ± sample std over seeds."),
        "",
        "| arm | " + " | ".join(titles) + " |",
        "|---|" + "---|" * len(titles),
    ]
    for arm, s in summary.items():
        if single:
            cells = [_fmt(m) for m, _ in (s["columns"][t] for t in titles)]
        else:
            cells = [
                f"{_fmt(m)} ± {_fmt(sd)}" if math.isfinite(sd) else _fmt(m)
                for m, sd in (s["columns"][t] for t in titles)
            ]
        lines.append(f"| {arm} | " + " | ".join(cells) + " |")
    for sk in results.get("skipped_arms", []):
        lines.append(f"| {sk['arm']} | skipped: {sk['reason']} |" + " |" * (len(titles) - 1))

    diag = _diagnostics(results)
    if diag:
        lines += ["", "Estimator diagnostics (mean over steps and seeds, from the estimators' own step metrics):", ""]
        lines += [f"- {arm}: " + ", ".join(f"{k} = {v:.3f}" for k, v in d.items()) for arm, d in diag.items()]
    lines += effect_markdown(results["runs"])
    claims = results.get("claims", [])
    ref = "GRPO N=8"
    if claims and not single:
        lines += [
            "",
            f"## Claims (paired by seed, {n_seeds} seeds; 95% Student-t interval of the mean paired difference)",
            "",
            "Estimate = arm − baseline; verdict *better*/*worse* when the interval excludes 0 "
            "(ΔNLL_rare: lower is better), else *not detected*. Every seed fits its own SFT policy, so the intervals "
            "include the spread between SFT policies.",
            "",
            f"Against {ref}:",
            "",
        ]
        lines += claims_markdown(claims, ref)
        for other in dict.fromkeys(c["baseline"] for c in claims):  # further baselines (Arm.compare_with, trough)
            if other not in (ref, BASE):
                lines += ["", f"Against {other}:", ""]
                lines += claims_markdown(claims, other)
        lines += ["", "Against the base (SFT) policy of the same seed:", ""]
        lines += claims_markdown(claims, BASE)
        hw = _half_widths(claims, "pass@256", ref)
        if hw:
            worst = max(hw.values())
            lines += ["", "Power: 95% CI half-width of the paired pass@256 difference vs GRPO N=8: "
                      + ", ".join(f"{a} {v:.4f}" for a, v in hw.items())
                      + f" (largest {worst:.4f}; target ≤ 0.02: {'met' if worst <= 0.02 else 'NOT met'})."]
    elif claims:
        lines += ["", "No claims: one seed gives no interval (run more seeds for verdicts)."]
    lines += _group_size_markdown(results)
    base = results["base"]["eval"]
    lines += [
        "",
        "Columns: pass@k on the problems RL trains on; AUC@256 = normalised area under the pass@k curve for "
        f"k=1..256; ΔNLL rare = per-token NLL change on the paper-style rare-correct set (per seed, about "
        f"{base.get('rare_set_size', float('nan')):.0f} trajectories, top {100 * cfg['rare_top_frac']:.0f}% of the "
        "SFT policy's correct rollouts; lower = less forgotten); unfamiliar = the same on the problems without SFT "
        "demonstrations; rare retained = M_ret over the correct answers outside the SFT policy's dominant strategy "
        "of each problem; mul mass = probability of correct `*` answers (the rare strategy); multi-strategy groups = "
        "share of N-rollout groups with ≥ 2 correct rollouts whose correct rollouts use ≥ 2 strategies "
        "(base: exact, N=8; arms: counted during RL); entropy = mean token entropy of the last 20% of RL steps.",
        "",
        "![pass@k](pass_at_k.png) ![training accuracy](train_acc.png) ![strategy mass](strategy_mass.png)"
        + (f" ![group size]({GROUP_SIZE_PLOT})" if len(grpo_group_sizes(results)) >= 3 else ""),
        "",
        f"Wall-clock: {results['seconds']['total']:.0f} s with {results.get('jobs', 1)} worker process(es); "
        f"CPU time {results['seconds'].get('cpu', float('nan')):.0f} s in all, of it "
        f"{results['seconds'].get('sft_cpu', float('nan')):.0f} s in the seeds' SFT and base evaluation and "
        f"{results['seconds'].get('rl_cpu', float('nan')):.0f} s in the RL runs"
        + (f", {results['seconds']['references_cpu']:.0f} s in the references (output mixture, weight interpolation)."
           if "references_cpu" in results["seconds"] else "."),
    ]
    if results.get("pooled_from"):
        lines.append("Pooled from " + "; ".join(f"run {i} (seeds {p['seeds'][0]}..{p['seeds'][-1]}, "
                                               f"{len(p['seeds'])})" for i, p in enumerate(results["pooled_from"], 1)
                                               if p["seeds"])
                     + ": one analysis over all their seeds; the times above are the runs' sums.")
    if results.get("seeds_not_started"):
        lines.append(f"Budget reached: seeds {results['seeds_not_started']} were not started.")
    if results.get("interrupted"):
        lines.append(f"Interrupted (Ctrl-C): seeds {results['seeds_not_finished']} did not finish; the tables hold the "
                     "seeds that did.")
    return "\n".join(lines) + "\n"


def _ylim(ax, values, pad_frac: float = 0.08, min_span: float = 0.05, lo: float = 0.0, hi: float = 1.0) -> None:
    """Axis limits around the data (not from 0 unless the data reach it), clipped to [lo, hi]."""
    v = np.asarray([x for x in np.ravel(values) if np.isfinite(x)], dtype=float)
    if v.size == 0:
        return
    a, b = float(v.min()), float(v.max())
    span = max(b - a, min_span)
    mid = (a + b) / 2
    a, b = mid - span / 2, mid + span / 2
    pad = pad_frac * span
    ax.set_ylim(max(lo, a - pad), min(hi, b + pad))


def _plots(results: dict[str, Any], summary, out_dir: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    quick = results["config"]["mode"] == "quick"
    tag = f" — {SMOKE_BANNER}" if quick else ""
    n_seeds = len(results.get("seeds_completed", results["config"]["seeds"]))
    over = "1 seed" if n_seeds == 1 else f"mean ± std over {n_seeds} seeds"

    diffs = passk_differences(results, REFERENCE)
    fig, axes = plt.subplots(1, 2 if diffs else 1, figsize=(13, 4.8) if diffs else (7, 4.5), squeeze=False)
    ax = axes[0][0]
    shown, colors = [], {}
    for arm, s in summary.items():
        if arm == BASE:
            continue
        m, sd = np.array(s["curve_mean"]), np.array(s["curve_std"], dtype=float)
        (line,) = ax.plot(s["ks"], m, marker="o", ms=3, label=arm)
        colors[arm] = line.get_color()
        shown.append(m)
        if np.isfinite(sd).all():
            ax.fill_between(s["ks"], m - sd, m + sd, alpha=0.15)
    if BASE in summary:  # drawn last, dashed and on top, so the arms never hide it
        b = summary[BASE]
        ax.plot(b["ks"], b["curve_mean"], "k--", lw=2, zorder=10, label=f"{BASE} (mean over seeds)")
        shown.append(np.array(b["curve_mean"]))
        ks = b["ks"]
    else:
        ks = summary[next(iter(summary))]["ks"]
    ax.set_xscale("log", base=2)
    ax.set_xticks(ks, [str(k) for k in ks])
    _ylim(ax, shown)
    ax.set_xlabel("k (samples per problem)")
    ax.set_ylabel("pass@k on the RL training problems")
    ax.set_title(f"pass@k ({over}){tag}", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    if diffs:
        _passk_difference_panel(axes[0][1], diffs, colors, REFERENCE, tag)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "pass_at_k.png"), dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    by_arm: dict[str, list[list[float]]] = {}
    for r in results["runs"]:
        by_arm.setdefault(r["arm"], []).append([h["train_acc"] for h in r["history"]])
    shown, c = [], np.zeros(1)
    for arm, curves in by_arm.items():
        c = np.array(curves).mean(0)
        w = max(1, len(c) // 10)
        sm = np.convolve(c, np.ones(w) / w, mode="valid")
        ax.plot(np.arange(len(sm)) + w, sm, marker="o" if len(sm) < 10 else None, label=arm)
        shown.append(sm)
    base_p1 = summary.get(BASE, {}).get("columns", {}).get("pass@1", (np.nan, np.nan))[0]
    if math.isfinite(base_p1):  # the SFT policies' exact pass@1: where the rollout accuracy starts
        ax.axhline(base_p1, color="k", ls="--", lw=2, zorder=10, label=f"{BASE} pass@1 (exact)")
        shown.append([base_p1])
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    _ylim(ax, [x for arr in shown for x in np.ravel(arr)])
    ax.set_xlabel("RL step")
    ax.set_ylabel("rollout accuracy" + (" (moving mean)" if len(c) >= 10 else ""))
    ax.set_title(
        f"Training-rollout accuracy ({'1 seed' if n_seeds == 1 else f'mean over {n_seeds} seeds'}){tag}", fontsize=9
    )
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "train_acc.png"), dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    names = list(summary)
    strategies = list(results["runs"][0]["eval"]["strategy_mass"]) if results["runs"] else []
    vals = {s: [] for s in strategies}
    for arm in names:
        evals = ([e for e in results["base"]["per_seed"].values()] if arm == BASE
                 else [r["eval"] for r in results["runs"] if r["arm"] == arm])
        for s in strategies:
            vals[s].append(float(np.mean([e["strategy_mass"][s] for e in evals])))
    x = np.arange(len(names))
    bottom = np.zeros(len(names))
    for s in strategies:
        ax.bar(x, vals[s], bottom=bottom, label=s)
        bottom += np.array(vals[s])
    ax.set_xticks(x, names, rotation=30, ha="right", fontsize=7)
    ax.set_xlabel("policy")
    ax.set_ylabel("correct probability mass (RL training problems)")
    ax.set_title(f"Correct probability by strategy ({over.replace(' ± std', '')}){tag}", fontsize=9)
    ax.legend(title="strategy")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "strategy_mass.png"), dpi=110)
    plt.close(fig)

    grpo = grpo_group_sizes(results)
    if len(grpo) >= 3:
        _group_size_plot(results, grpo, os.path.join(out_dir, GROUP_SIZE_PLOT), tag)


def _group_size_plot(results: dict[str, Any], grpo: list[dict], path: str, tag: str) -> None:
    import matplotlib.pyplot as plt

    focal = [r for r in group_size_rows(results) if r["estimator"] == "f_grpo" and r["n"] == 8]
    base = results["base"]["eval"]
    base_vals = {"pass@1": _k(base["pass_at_k"])[1], "pass@256": _k(base["pass_at_k"])[256], "M_ret": 1.0}
    fig, axes = plt.subplots(2, 3, figsize=(12, 7))
    ns = [r["n"] for r in grpo]
    for ax, metric in zip(axes[0], ("pass@1", "pass@256", "M_ret")):
        m = np.array([r[metric]["mean"] for r in grpo])
        lo = np.array([r[metric]["ci_low"] for r in grpo])
        hi = np.array([r[metric]["ci_high"] for r in grpo])
        shown = [m]
        if np.isfinite(lo).all():
            ax.errorbar(ns, m, yerr=[m - lo, hi - m], marker="o", capsize=3, label="GRPO (95% CI over seeds)")
            shown += [lo, hi]
        else:
            ax.plot(ns, m, marker="o", label="GRPO")
        for f in focal:
            fm, flo, fhi = f[metric]["mean"], f[metric]["ci_low"], f[metric]["ci_high"]
            yerr = [[fm - flo], [fhi - fm]] if math.isfinite(flo) else None
            # drawn a little right of N=8 so that GRPO N=8's interval stays visible
            ax.errorbar([8 * 1.12], [fm], yerr=yerr, marker="*", ms=12, color="C3", capsize=3, ls="none",
                        label=f"{f['arm']} (at N=8)")
            shown += [fm] + ([flo, fhi] if math.isfinite(flo) else [])
        ax.axhline(base_vals[metric], color="k", ls="--", lw=2, zorder=10, label=f"{BASE} (mean over seeds)")
        shown.append([base_vals[metric]])
        ax.set_xscale("log", base=2)
        ax.set_xticks(ns, [str(n) for n in ns])
        _ylim(ax, [x for arr in shown for x in np.ravel(arr)], min_span=0.02)
        ax.set_xlabel("group size N")
        ax.set_ylabel(metric + (" (rare retained)" if metric == "M_ret" else ""))
        ax.set_title(f"demo: {metric} vs N ({grpo[0]['n_seeds']} seeds)", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    pn = sorted(PAPER_SWEEP)
    for j, (ax, metric) in enumerate(zip(axes[1][:2], ("pass@1", "pass@256"))):
        ax.plot(pn, [PAPER_SWEEP[n][j] for n in pn], marker="o", color="C0", label="GRPO")
        ax.plot([8], [PAPER_FOCAL_N8[j]], marker="*", ms=12, color="C3", ls="none", label="F-GRPO N=8")
        ax.set_xscale("log", base=2)
        ax.set_xticks(pn, [str(n) for n in pn])
        ax.set_xlabel("group size N")
        ax.set_ylabel(f"{metric} (%)")
        ax.set_title(f"paper: {metric} vs N (Qwen2.5-7B, maths)", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[1][2].axis("off")
    fig.suptitle("GRPO group size: this testbed (top, RL training problems) and the F-GRPO paper's sweep "
                 f"(bottom, arXiv 2602.06717){tag}", fontsize=10)
    axes[1][2].text(0.0, 0.5, "Top: this testbed (RL training problems).\nBottom: the paper's sweep, as published.\n"
                    "Same shape would be: pass@1 rising with N;\npass@256 dipping at intermediate N, then recovering.",
                    fontsize=9, va="center")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_report(results: dict[str, Any], out_dir: str) -> dict[str, str]:
    """Write results.json, report.md and the plots into ``out_dir``; return their paths."""
    os.makedirs(out_dir, exist_ok=True)
    summary = summarise(results)
    results = dict(results)

    def _num(v):
        return v if math.isfinite(v) else None

    results["summary"] = {
        arm: {
            "n_seeds": s["n_seeds"],
            **{t: {"mean": _num(m), "std": _num(sd)} for t, (m, sd) in s["columns"].items()},
            "pass_at_k_mean": dict(zip(s["ks"], s["curve_mean"])),
            "pass_at_k_std": dict(zip(s["ks"], [_num(v) for v in s["curve_std"]])),
        }
        for arm, s in summary.items()
    }
    grpo = grpo_group_sizes(results)
    if len(grpo) >= 3:
        results["group_size_rows"] = group_size_rows(results)
    if results["config"]["mode"] == "quick":
        results["banner"] = SMOKE_BANNER
    # the controls set: the methods at equal pass@1 (docs/demo.md); a pooled run brings its own, computed once
    frontier = results.get("frontier") or frontier_results(results)
    if frontier:
        results["frontier"] = frontier
    names = REPORT_FILES + ((GROUP_SIZE_PLOT,) if len(grpo) >= 3 else ()) + ((FRONTIER_PLOT,) if frontier else ())
    paths = {name: os.path.join(out_dir, name) for name in names}
    with open(paths["results.json"], "w") as f:
        json.dump(results, f, indent=1, default=float)
    with open(paths["report.md"], "w") as f:
        f.write(_markdown(results, summary) + "".join(line + "\n" for line in controls_markdown(results)))
    _plots(results, summary, out_dir)
    if frontier:
        frontier_plot(results, paths[FRONTIER_PLOT], f" — {SMOKE_BANNER}" if results["config"]["mode"] == "quick"
                      else "")
    return paths
