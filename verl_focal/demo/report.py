"""Report of a demo run: results.json, report.md (mean ± std over seeds) and PNG plots."""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from typing import Any

import numpy as np

__all__ = ["summarise", "write_report", "REPORT_FILES"]

REPORT_FILES = ("results.json", "report.md", "pass_at_k.png", "train_acc.png", "strategy_mass.png")

# (column title, getter on a run's eval dict, higher-is-better note)
_COLUMNS = (
    ("pass@1", lambda e: e["pass_at_k"][1]),
    ("pass@16", lambda e: e["pass_at_k"].get(16, np.nan)),
    ("pass@256", lambda e: e["pass_at_k"].get(256, np.nan)),
    ("AUC@256", lambda e: e.get("auc_at_k", np.nan)),
    ("train p(correct)", lambda e: e["train_p_correct"]),
    ("rare retained", lambda e: e.get("rare_retained", np.nan)),
    ("ΔNLL rare", lambda e: e.get("delta_nll_rare", np.nan)),
    ("mul mass", lambda e: e["strategy_mass"]["mul"]),
    ("entropy", lambda e: e.get("entropy_final", np.nan)),
    ("zero-adv groups", lambda e: e.get("zero_adv_group_frac", np.nan)),
)


def _k(d: dict) -> dict[int, float]:
    return {int(k): v for k, v in d.items()}


def summarise(results: dict[str, Any]) -> "OrderedDict[str, dict[str, Any]]":
    """Per arm: mean and sample std (ddof=1; 0 with one seed) of every table column and of the pass@k curve."""
    by_arm: "OrderedDict[str, list[dict]]" = OrderedDict()
    for r in results["runs"]:
        e = dict(r["eval"])
        e["pass_at_k"] = _k(e["pass_at_k"])
        by_arm.setdefault(r["arm"], []).append(e)
    out: "OrderedDict[str, dict[str, Any]]" = OrderedDict()
    for arm, evals in by_arm.items():
        cols = {}
        for title, get in _COLUMNS:
            v = np.array([get(e) for e in evals], dtype=float)
            cols[title] = (float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0)
        ks = sorted(evals[0]["pass_at_k"])
        curve = np.array([[e["pass_at_k"][k] for k in ks] for e in evals])
        out[arm] = {"n_seeds": len(evals), "columns": cols, "ks": ks, "curve_mean": curve.mean(0).tolist(),
                    "curve_std": (curve.std(0, ddof=1) if len(evals) > 1 else np.zeros(len(ks))).tolist()}
    return out


def _markdown(results: dict[str, Any], summary) -> str:
    cfg = results["config"]
    base = results["base"]["eval"]
    base_pk = _k(base["pass_at_k"])
    titles = [t for t, _ in _COLUMNS]
    lines = [
        f"# verl-focal demo report ({cfg['mode']} mode, device {cfg['device']})",
        "",
        f"Task: make target t from digit d with `A op B` (strategies add/sub/mul); {results['problems']['train']} "
        f"training problems, {results['problems']['held_out']} held-out. SFT prior {cfg['prior']}; "
        f"RL {cfg['rl_steps']} steps × {cfg['prompts_per_step']} prompts, lr {cfg['lr']}; seeds {list(cfg['seeds'])}.",
        f"pass@k: unbiased estimator on {cfg['eval_samples']} samples per held-out problem. Values: mean ± std over seeds (sample std).",
        "",
        "| arm | " + " | ".join(titles) + " |",
        "|---|" + "---|" * len(titles),
    ]
    base_row = [base_pk[1], base_pk.get(16, np.nan), base_pk.get(256, np.nan), base.get("auc_at_k", np.nan), base["train_p_correct"], 1.0, 0.0,
                base["strategy_mass"]["mul"], np.nan, np.nan]
    lines.append("| base (SFT) | " + " | ".join("—" if np.isnan(v) else f"{v:.3f}" for v in base_row) + " |")
    for arm, s in summary.items():
        cells = [f"{m:.3f} ± {sd:.3f}" for m, sd in (s["columns"][t] for t in titles)]
        lines.append(f"| {arm} | " + " | ".join(cells) + " |")
    for sk in results.get("skipped_arms", []):
        lines.append(f"| {sk['arm']} | skipped: {sk['reason']} |" + " |" * (len(titles) - 1))
    lines += [
        "",
        "Columns: pass@k on held-out problems; AUC@256 = normalised area under the pass@k curve for k=1..256 "
        "(Cue-GRPO's metric; its k-range is the largest k of the run); train p(correct) = exact mean probability of a correct answer on "
        "training problems; rare retained = M_ret over the held-out correct answers outside the base policy's "
        "dominant strategy (1 = nothing lost); ΔNLL rare = per-token NLL change on the paper-style rare-correct set "
        f"({results['base']['rare_set_size']} trajectories, top {100 * cfg['rare_top_frac']:.0f}% of "
        f"{results['base']['rare_set_sampled_correct']} correct base rollouts; lower = less forgotten); "
        "mul mass = held-out probability of correct `*` answers (the rarest strategy); entropy = mean token "
        "entropy of the last 20% of RL steps; zero-adv groups = fraction of groups with all advantages 0.",
        "",
        "![pass@k](pass_at_k.png) ![training accuracy](train_acc.png) ![strategy mass](strategy_mass.png)",
        "",
        f"Wall-clock: {results['seconds']['total']:.0f} s in total ({results['seconds']['sft_and_base_eval']:.0f} s SFT + base evaluation).",
    ]
    return "\n".join(lines) + "\n"


def _plots(results: dict[str, Any], summary, out_dir: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    base_pk = _k(results["base"]["eval"]["pass_at_k"])
    ks = sorted(base_pk)
    ax.plot(ks, [base_pk[k] for k in ks], "k--", label="base (SFT)")
    for arm, s in summary.items():
        m, sd = np.array(s["curve_mean"]), np.array(s["curve_std"])
        ax.plot(s["ks"], m, marker="o", ms=3, label=arm)
        ax.fill_between(s["ks"], m - sd, m + sd, alpha=0.15)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("k")
    ax.set_ylabel("pass@k (held-out)")
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
        ax.plot(np.arange(len(sm)) + w - 1, sm, label=arm)
    ax.set_xlabel("RL step")
    ax.set_ylabel("rollout accuracy (moving mean, mean over seeds)")
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
    ax.set_ylabel("held-out correct probability mass by strategy")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "strategy_mass.png"), dpi=110)
    plt.close(fig)


def write_report(results: dict[str, Any], out_dir: str) -> dict[str, str]:
    """Write results.json, report.md and the plots into ``out_dir``; return their paths."""
    os.makedirs(out_dir, exist_ok=True)
    summary = summarise(results)
    results = dict(results)
    results["summary"] = {arm: {"n_seeds": s["n_seeds"], **{t: {"mean": m, "std": sd} for t, (m, sd) in s["columns"].items()},
                                "pass_at_k_mean": dict(zip(s["ks"], s["curve_mean"])),
                                "pass_at_k_std": dict(zip(s["ks"], s["curve_std"]))} for arm, s in summary.items()}
    paths = {name: os.path.join(out_dir, name) for name in REPORT_FILES}
    with open(paths["results.json"], "w") as f:
        json.dump(results, f, indent=1, default=float)
    with open(paths["report.md"], "w") as f:
        f.write(_markdown(results, summary))
    _plots(results, summary, out_dir)
    return paths
