"""What an App. J run produced: the records, their per-(N, gamma) summary and the regimes.

``M_ret`` is the retained correct mass of F-GRPO App. J (docs/methods.md §4), recorded
per (N, gamma, seed, step) by :func:`verl_focal.lab.theory.sim.run.run_simulation`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .config import SimConfig

__all__ = ["SimResult", "summarise", "regimes"]


@dataclass
class SimResult:
    """Per (N, gamma, seed) trajectories of M_ret and companions."""

    config: SimConfig
    records: list[dict] = field(default_factory=list)  # one dict per (N, gamma, seed, step)
    seconds: dict[int, float] = field(default_factory=dict)  # wall time per N

    def final(self) -> list[dict]:
        """Records of the last step only."""
        last = self.config.steps
        return [r for r in self.records if r["step"] == last]


def summarise(result: SimResult) -> list[dict]:
    """Mean / min / max over seeds of final M_ret per (N, gamma), sorted by N then gamma."""
    out = []
    fin = result.final()
    for n in result.config.group_sizes:
        for gm in result.config.gammas:
            vals = np.array([r["m_ret"] for r in fin if r["n"] == n and r["gamma"] == gm])
            q = np.array([r["correct_mass"] for r in fin if r["n"] == n and r["gamma"] == gm])
            out.append({"n": int(n), "gamma": gm, "m_ret_mean": float(vals.mean()), "m_ret_min": float(vals.min()),
                        "m_ret_max": float(vals.max()), "correct_mass_mean": float(q.mean())})
    return out


def regimes(rows: list[dict], gamma: float, frac: float = 0.8) -> tuple[int, int] | None:
    """(first, last) N of regime II: where the mean lost mass 1 - M_ret is at least
    ``frac`` of its maximum over the grid, for one gamma.  None if nothing was lost."""
    sel = sorted((r for r in rows if r["gamma"] == gamma), key=lambda r: r["n"])
    loss = np.array([1 - r["m_ret_mean"] for r in sel])
    if loss.size == 0 or loss.max() <= 0:
        return None
    hit = [r["n"] for r, v in zip(sel, loss) if v >= frac * loss.max()]
    return hit[0], hit[-1]
