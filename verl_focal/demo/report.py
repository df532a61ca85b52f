"""Report of a demo run: results.json (with a machine-readable ``claims`` list), report.md and PNG plots."""

from __future__ import annotations

import json
import math
import os
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

import numpy as np

from verl_focal.demo.stats import METRICS, replicate

__all__ = ["summarise", "write_report", "claims_markdown", "replication_markdown", "REPORT_FILES", "SMOKE_BANNER"]

REPORT_FILES = ("results.json", "report.md", "pass_at_k.png", "train_acc.png", "strategy_mass.png")
SMOKE_BANNER = "smoke run: checks the pipeline, not the methods"

# (column title, getter on a run's eval dict)
_COLUMNS = (
    ("pass@1", lambda e: e["pass_at_k"][1]),
    ("pass@16", lambda e: e["pass_at_k"].get(16, np.nan)),
    ("pass@256", lambda e: e["pass_at_k"].get(256, np.nan)),
    ("AUC@256", lambda e: e.get("auc_at_k", np.nan)),
    ("ΔNLL rare", lambda e: e.get("delta_nll_rare", np.nan)),
    ("train p(correct)", lambda e: e["train_p_correct"]),
    ("rare retained", lambda e: e.get("rare_retained", np.nan)),
    ("mul mass", lambda e: e["strategy_mass"]["mul"]),
    ("multi-strategy groups", lambda e: e.get("multi_strategy_share", np.nan)),
    ("entropy", lambda e: e.get("entropy_final", np.nan)),
)


def _k(d: dict) -> dict[int, float]:
    return {int(k): v for k, v in d.items()}


def summarise(results: dict[str, Any]) -> OrderedDict[str, dict[str, Any]]:
    """Per arm: mean and sample std (ddof=1; NaN with one seed) of every table column and of the pass@k curve."""
    by_arm: OrderedDict[str, list[dict]] = OrderedDict()
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


def _half_widths(claims: list[dict], metric: str, baseline: str) -> dict[str, float]:
    return {c["arm"]: (c["ci_high"] - c["ci_low"]) / 2 for c in claims
            if c["baseline"] == baseline and c["metric"] == metric and c["ci_low"] is not None}


def _markdown(results: dict[str, Any], summary) -> str:
    cfg = results["config"]
    base = results["base"]["eval"]
    base_pk = _k(base["pass_at_k"])
    quick = cfg["mode"] == "quick"
    n_seeds = len(results.get("seeds_completed", cfg["seeds"]))
    single = n_seeds < 2
    titles = [t for t, _ in _COLUMNS]
    lines = [f"# verl-focal demo report ({cfg['mode']} mode, device {cfg['device']})", ""]
    if quick:
        lines += [
            f"> **{SMOKE_BANNER}.** Tiny SFT, {cfg['rl_steps']} RL steps, one seed: the numbers below say that every "
            "stage ran and produced finite values, nothing about GRPO, F-GRPO or Cue-GRPO.",
            "",
        ]
    arms_line = ", ".join(a["name"] for a in cfg["arms"])
    lines += [
        f"Task: clock arithmetic mod 16 (`A op B` with the given symbol; strategies add/sub/mul); "
        f"{results['problems']['train']} training problems, {results['problems']['held_out']} held-out. SFT prior "
        f"{cfg['prior']}, {cfg['sft_steps']} SFT steps; "
        f"RL {cfg['rl_steps']} steps × {cfg['prompts_per_step']} prompts, "
        f"lr {cfg['lr']}. Arms: {arms_line}. Seeds completed: {results.get('seeds_completed', list(cfg['seeds']))}.",
        "pass@k and AUC@256 are exact (the expectation of the unbiased estimator) on the held-out problems. "
        + ("One seed: single values, no spread." if single else "Values: mean ± sample std over seeds."),
        "",
        "| arm | " + " | ".join(titles) + " |",
        "|---|" + "---|" * len(titles),
    ]
    bg = base.get("train_groups_n8", {})
    base_row = [base_pk[1], base_pk.get(16, np.nan), base_pk.get(256, np.nan), base.get("auc_at_k", np.nan), 0.0,
                base["train_p_correct"], 1.0, base["strategy_mass"]["mul"], bg.get("multi_given_ge2", np.nan), np.nan]
    lines.append("| base (SFT) | " + " | ".join(_fmt(v) for v in base_row) + " |")
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
    claims = results.get("claims", [])
    ref = "GRPO N=8"
    if claims and not single:
        lines += [
            "",
            f"## Claims (paired by seed, {n_seeds} seeds; 95% Student-t interval of the mean paired difference)",
            "",
            "Estimate = arm − baseline; verdict *better*/*worse* when the interval excludes 0 "
            "(ΔNLL_rare: lower is better), else *not detected*.",
            "",
            f"Against {ref}:",
            "",
        ]
        lines += claims_markdown(claims, ref)
        for other in dict.fromkeys(c["baseline"] for c in claims):  # further baselines (Arm.compare_with)
            if other not in (ref, "base (SFT)"):
                lines += ["", f"Against {other}:", ""]
                lines += claims_markdown(claims, other)
        lines += ["", "Against the base (SFT) policy:", ""]
        lines += claims_markdown(claims, "base (SFT)")
        hw = _half_widths(claims, "pass@256", ref)
        if hw:
            worst = max(hw.values())
            lines += ["", "Power: 95% CI half-width of the paired pass@256 difference vs GRPO N=8: "
                      + ", ".join(f"{a} {v:.4f}" for a, v in hw.items())
                      + f" (largest {worst:.4f}; target ≤ 0.02: {'met' if worst <= 0.02 else 'NOT met'})."]
    elif claims:
        lines += ["", "No claims: one seed gives no interval (run more seeds for verdicts)."]
    lines += [
        "",
        "Columns: pass@k on held-out problems; AUC@256 = normalised area under the pass@k curve for k=1..256; "
        f"ΔNLL rare = per-token NLL change on the paper-style rare-correct set ({results['base']['rare_set_size']} "
        f"trajectories, top {100 * cfg['rare_top_frac']:.0f}% of {results['base']['rare_set_sampled_correct']} correct "
        "base rollouts; lower = less forgotten); train p(correct) = exact mean probability of a correct answer on the "
        "training problems; rare retained = M_ret over the held-out correct answers outside the base policy's dominant "
        "strategy; mul mass = held-out probability of correct `*` answers (the rare strategy); multi-strategy groups = "
        "share of training groups with ≥ 2 correct rollouts whose correct rollouts use ≥ 2 strategies "
        "(base: exact, N=8); "
        "entropy = mean token entropy of the last 20% of RL steps.",
        "",
        "![pass@k](pass_at_k.png) ![training accuracy](train_acc.png) ![strategy mass](strategy_mass.png)",
        "",
        f"Wall-clock: {results['seconds']['total']:.0f} s ({results['seconds']['sft_and_base_eval']:.0f} s SFT + base "
        f"evaluation) with {results.get('jobs', 1)} worker process(es); "
        f"CPU time {results['seconds'].get('cpu', float('nan')):.0f} s "
        f"in all, {results['seconds'].get('rl_cpu', float('nan')):.0f} s of it in the RL runs "
        "(excluding the parent's `import verl`).",
    ]
    if results.get("seeds_not_started"):
        lines.append(f"Budget reached: seeds {results['seeds_not_started']} were not started.")
    return "\n".join(lines) + "\n"


def _plots(results: dict[str, Any], summary, out_dir: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    quick = results["config"]["mode"] == "quick"
    tag = f" — {SMOKE_BANNER}" if quick else ""
    n_seeds = len(results.get("seeds_completed", results["config"]["seeds"]))
    over = "1 seed" if n_seeds == 1 else f"mean ± std over {n_seeds} seeds"

    fig, ax = plt.subplots(figsize=(7, 4.5))
    base_pk = _k(results["base"]["eval"]["pass_at_k"])
    ks = sorted(base_pk)
    ax.plot(ks, [base_pk[k] for k in ks], "k--", label="base (SFT)")
    for arm, s in summary.items():
        m, sd = np.array(s["curve_mean"]), np.array(s["curve_std"], dtype=float)
        ax.plot(s["ks"], m, marker="o", ms=3, label=arm)
        if np.isfinite(sd).all():
            ax.fill_between(s["ks"], m - sd, m + sd, alpha=0.15)
    ax.set_xscale("log", base=2)
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.set_xlabel("k (samples per problem)")
    ax.set_ylabel("pass@k on held-out problems")
    ax.set_title(f"Held-out pass@k ({over}){tag}", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "pass_at_k.png"), dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    by_arm: dict[str, list[list[float]]] = {}
    for r in results["runs"]:
        by_arm.setdefault(r["arm"], []).append([h["train_acc"] for h in r["history"]])
    for arm, curves in by_arm.items():
        c = np.array(curves).mean(0)
        w = max(1, len(c) // 10)
        sm = np.convolve(c, np.ones(w) / w, mode="valid")
        ax.plot(np.arange(len(sm)) + w, sm, marker="o" if len(sm) < 10 else None, label=arm)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
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
    names = ["base (SFT)"] + list(summary)
    strategies = list(results["base"]["eval"]["strategy_mass"])
    vals = {s: [results["base"]["eval"]["strategy_mass"][s]] for s in strategies}
    for arm in summary:
        for s in strategies:
            vals[s].append(float(np.mean([r["eval"]["strategy_mass"][s] for r in results["runs"] if r["arm"] == arm])))
    x = np.arange(len(names))
    bottom = np.zeros(len(names))
    for s in strategies:
        ax.bar(x, vals[s], bottom=bottom, label=s)
        bottom += np.array(vals[s])
    ax.set_xticks(x, names, rotation=30, ha="right", fontsize=7)
    ax.set_xlabel("policy")
    ax.set_ylabel("held-out correct probability mass")
    ax.set_title(f"Correct probability by strategy, held-out problems ({over.replace(' ± std', '')}){tag}", fontsize=9)
    ax.legend(title="strategy")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "strategy_mass.png"), dpi=110)
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
    if results["config"]["mode"] == "quick":
        results["banner"] = SMOKE_BANNER
    paths = {name: os.path.join(out_dir, name) for name in REPORT_FILES}
    with open(paths["results.json"], "w") as f:
        json.dump(results, f, indent=1, default=float)
    with open(paths["report.md"], "w") as f:
        f.write(_markdown(results, summary))
    _plots(results, summary, out_dir)
    return paths
