"""The frontier's report layer, shared by the demo's report (:mod:`verl_focal.lab.demo.frontier_report`) and
``verl-focal eval frontier`` (:mod:`verl_focal.lab.eval.frontier_report`): the interval cell of the tables, the
palettes, the pieces of the frontier figure both draw, and the 128-colour PNG writer.

The numbers (points, D, verdicts) are :mod:`verl_focal.lab.stats.frontier`'s; each caller lays out its own figure
(the demo: two panels with the SFT policy; ``eval frontier``: one, with the uncertainty note) from these pieces.
matplotlib and pillow are imported inside the functions that draw.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from verl_focal.lab.stats.frontier import signed

__all__ = ["CONTROL_COLOURS", "NAMED_CONTROL_COLOURS", "METHOD_COLOURS", "ci_cell", "pyplot", "zero_axes",
           "interval_bars", "reference_star", "save_png"]

#: control families' colours in the order they come (``eval frontier``, any families file)
CONTROL_COLOURS = ("#4d4d4d", "#8c6d31", "#6b8e23", "#7f7f7f", "#5b4a8a")
#: the demo's control families by name: the papers' three as above, and the focal weight's two controls in F-GRPO's
#: red, darker and lighter (each F-GRPO point has its twins there)
NAMED_CONTROL_COLOURS = {"lower lr": CONTROL_COLOURS[0], "entropy bonus": CONTROL_COLOURS[1],
                         "KL to SFT": CONTROL_COLOURS[2], "focal shuffled": "#8b0000", "focal batch-mean": "#f4a582"}
#: method families' colours in the order they come (eight: the demo's controls set has eight method families)
METHOD_COLOURS = ("tab:red", "tab:orange", "tab:purple", "tab:green", "tab:blue", "tab:cyan", "tab:pink", "#b8860b")


def ci_cell(d: dict[str, Any]) -> str:
    """A point's table cell: ``mean [ci_low, ci_high]``, signed.

    >>> ci_cell({"mean": 0.0123, "ci_low": -0.004, "ci_high": 0.0286})
    '+0.012 [-0.004, +0.029]'
    """
    return f"{signed(d['mean'])} [{signed(d['ci_low'])}, {signed(d['ci_high'])}]"


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def zero_axes(ax) -> None:
    """The reference's zero lines (every family starts there)."""
    ax.axhline(0, color="k", lw=0.6, alpha=0.5)
    ax.axvline(0, color="k", lw=0.6, alpha=0.5)


def interval_bars(ax, x: dict[str, float], y: dict[str, float], colour: str, lw: float, alpha: float) -> None:
    """A point's intervals on both axes (``x`` and ``y`` are its ``{"mean", "ci_low", "ci_high"}``)."""
    ax.errorbar([x["mean"]], [y["mean"]], xerr=[[x["mean"] - x["ci_low"]], [x["ci_high"] - x["mean"]]],
                yerr=[[y["mean"] - y["ci_low"]], [y["ci_high"] - y["mean"]]], color=colour, lw=lw, alpha=alpha,
                capsize=0)


def reference_star(ax, label: str) -> None:
    """The reference at (0, 0): every difference is from it."""
    ax.plot([0], [0], marker="*", ms=15, color="k", ls="none", zorder=10, label=label)


def save_png(fig, path: str | Path, dpi: int = 90) -> None:
    """Write ``fig`` to ``path`` as a 128-colour PNG (the same picture at about a third of the bytes: the README
    shows the demo's) and close it."""
    plt = pyplot()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    from PIL import Image

    Image.open(buf).convert("RGB").quantize(colors=128).save(path, optimize=True)
