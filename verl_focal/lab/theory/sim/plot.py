"""The App. J figure: M_ret after training against N, per gamma, with a tail-miss panel."""

from __future__ import annotations

import os

import numpy as np

from ..tail_miss import active_group_probability, tail_miss_probability
from .config import initial_masses
from .result import SimResult, regimes, summarise

__all__ = ["plot_results"]


def _mark_regimes(ax, rows: list[dict], gamma: float) -> None:
    span = regimes(rows, gamma)
    if span is None:
        return
    lo, hi = span
    ax.axvspan(lo / 1.4, hi * 1.4, color="grey", alpha=0.12, lw=0)
    box = {"facecolor": "white", "alpha": 0.7, "lw": 0}
    tr = ax.get_xaxis_transform()
    ax.text(np.sqrt(lo * hi), 0.5, "II", transform=tr, ha="center", fontsize=12, bbox=box)
    ax.text(lo / 1.6, 0.5, "I", transform=tr, ha="right", fontsize=12, bbox=box)
    sel = [r for r in rows if r["gamma"] == gamma]
    worst = max(1 - r["m_ret_mean"] for r in sel)
    kept = [r["n"] for r in sel if r["n"] > hi and 1 - r["m_ret_mean"] <= 0.01 * worst]
    if kept:  # regime III: N where at most 1% of the largest loss remains
        ax.axvspan(min(kept) / 1.4, max(kept) * 1.4, color="green", alpha=0.08, lw=0)
        ax.text(np.sqrt(min(kept) * max(kept)), 0.5, "III", transform=tr, ha="center", fontsize=12, bbox=box)


def plot_results(result: SimResult, path: str | os.PathLike, mu: float | None = None,
                 tau: float | None = None) -> None:
    """PNG: M_ret after training vs N (one line per gamma, seed range shaded) and a tail-miss panel.

    The tail-miss panel plots P(N) and the active-group probability for the initial
    policy's (mu, tau) unless others are given.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cfg = result.config
    mu0, tau0 = initial_masses(cfg)
    mu = mu0 if mu is None else mu
    tau = tau0 if tau is None else tau
    rows = summarise(result)
    fig, (ax1, ax3, ax2) = plt.subplots(3, 1, figsize=(7.5, 10), sharex=True,
                                        gridspec_kw={"height_ratios": [3, 3, 2]})
    ns = np.array(sorted(set(cfg.group_sizes)))
    for gm in cfg.gammas:
        sel = [r for r in rows if r["gamma"] == gm]
        x = np.array([r["n"] for r in sel])
        y = np.array([r["m_ret_mean"] for r in sel])
        lo = np.array([r["m_ret_min"] for r in sel])
        hi = np.array([r["m_ret_max"] for r in sel])
        label = f"γ={gm:g}" + (" (GRPO)" if gm == 0 else " (F-GRPO)")
        ax1.plot(x, y - 1, marker="o", label=label)
        ax1.fill_between(x, lo - 1, hi - 1, alpha=0.2)
        # log panel: exact zeros (no correct action lost mass) are left out of the line
        loss = np.where(1 - y > 0, 1 - y, np.nan)
        ax3.plot(x, loss, marker="o", label=label)
        ax3.fill_between(x, np.where(1 - hi > 0, 1 - hi, np.nan), np.where(1 - lo > 0, 1 - lo, np.nan), alpha=0.2)
    ax1.set_xscale("log", base=2)
    ax1.set_ylabel(f"M_ret - 1 after {cfg.steps} steps")
    ax1.ticklabel_format(axis="y", style="sci", scilimits=(-3, 3), useOffset=False)
    _mark_regimes(ax1, rows, cfg.gammas[0])
    ax1.set_title(f"Categorical simulation (F-GRPO App. J): K={cfg.n_actions}, |P|={cfg.n_correct}, "
                  f"η={cfg.eta:g}, objective={cfg.objective}, {len(cfg.seeds)} seed(s), "
                  "mean and seed range;\nshaded: regime II, N where the γ=" + f"{cfg.gammas[0]:g}" +
                  " run loses >= 80% of its largest loss (II), <= 1% (III)", fontsize=8)
    ax1.grid(alpha=0.3)
    ax1.legend()
    ax3.set_yscale("log")
    ax3.set_ylabel("1 - M_ret (log; 0 not drawn)")
    ax3.grid(alpha=0.3, which="both")
    ax3.legend()
    grid = np.unique(np.geomspace(1, max(ns.max(), 2), 400).round())
    ax2.plot(grid, tail_miss_probability(mu, tau, grid), label=f"tail-miss P(N), μ={mu:.3g}, τ={tau:.2g}")
    ax2.plot(grid, active_group_probability(mu, grid), ls="--", label="active group 1-μ^N-(1-μ)^N")
    ax2.set_xscale("log", base=2)
    ax2.set_xlabel("group size N")
    ax2.set_ylabel("probability")
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=130)
    plt.close(fig)
