"""Per-benchmark pass@k report: Table-1 layout (markdown), CSV, pass@k curves (PNG), significance.

Input: per-problem counts of several runs (:class:`verl_focal.lab.eval.records.ProblemCounts`).
Output files in one folder:

* ``table.md``   -- rows = runs; per benchmark ``pass@1 / pass@K`` (K = 256 or the
  largest k the samples allow), then the in-domain and OOD averages (unweighted mean
  over benchmarks, as in F-GRPO Table 1); ``†`` marks a significant difference from
  the baseline (paired subsampling test, two-sided alpha);
* ``results.csv`` -- one row per (run, benchmark) and per (run, average): problems,
  samples, pass@k for every k of the grid, AUC@64/128/256 where n allows (percent);
* ``significance.csv`` -- one row per (run, benchmark, k): delta vs the baseline in
  points, the subsampling interval, the p-value and the decision;
* ``passk.png``  -- one panel per benchmark, one pass@k curve per run, stars where a run
  differs significantly from the baseline;
* ``summary.json`` -- all of the above as data.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from verl_focal.lab.eval.metrics import auc_at_k, default_ks, paired_subsampling_test, pass_at_k_curve
from verl_focal.lab.eval.records import ProblemCounts

DEFAULT_OOD_PATTERNS = ("gpqa", "ifeval", "synlogic")
# F-GRPO Table 1's "Avg OOD" is the mean over these three benchmarks (data_source short names).
PAPER_OOD_BENCHMARKS = ("gpqa_diamond", "ifeval", "synlogic")
AUC_KS = (64, 128, 256)


def domain_of(data_source: str, ood: Sequence[str] = DEFAULT_OOD_PATTERNS) -> str:
    """``"ood"`` when any pattern is a case-insensitive substring of the data source, else ``"in-domain"``.

    F-GRPO: in-domain = the math benchmarks; OOD = GPQA-Diamond, IFEval, SynLogic.
    """
    s = data_source.lower()
    return "ood" if any(p.lower() in s for p in ood) else "in-domain"


def short_name(data_source: str) -> str:
    return data_source.rsplit("/", 1)[-1]


@dataclass
class BenchResult:
    run: str
    benchmark: str
    domain: str
    problems: int
    samples_min: int
    curve: dict[int, float]          # k -> mean pass@k in [0, 1], over the problems every run of the benchmark holds
    auc: dict[int, float] = field(default_factory=dict)
    own_problems: int = 0            # the run's own problems of the benchmark (>= problems, the shared ones)


@dataclass
class SigRow:
    baseline: str
    run: str
    benchmark: str
    k: int
    m: int
    iterations: int
    paired_problems: int
    delta: float
    ci_low: float
    ci_high: float
    p_value: float
    significant: bool


@dataclass
class Report:
    runs: list[str]
    baseline: str | None
    k_max: int
    results: list[BenchResult]
    significance: list[SigRow]
    alpha: float
    notes: list[str] = field(default_factory=list)
    #: one line per run that covers fewer problems of a benchmark than another run (for stderr)
    coverage: list[str] = field(default_factory=list)

    def result(self, run: str, bench: str) -> BenchResult | None:
        for r in self.results:
            if r.run == run and r.benchmark == bench:
                return r
        return None

    def sig(self, run: str, bench: str, k: int) -> SigRow | None:
        for s in self.significance:
            if s.run == run and s.benchmark == bench and s.k == k:
                return s
        return None

    @property
    def benchmarks(self) -> list[str]:
        seen: dict[str, str] = {}
        for r in self.results:
            seen.setdefault(r.benchmark, r.domain)
        return sorted(seen, key=lambda b: (seen[b] != "in-domain", b))

    def domain(self, bench: str) -> str:
        return next(r.domain for r in self.results if r.benchmark == bench)

    def table_k(self, bench: str) -> int:
        """The K of the ``pass@1 / pass@K`` cell: ``k_max`` capped by every run's samples."""
        return min([self.k_max] + [r.samples_min for r in self.results if r.benchmark == bench])


def build_report(
    counts: dict[str, ProblemCounts],
    baseline: str | None = None,
    k_max: int = 256,
    ood: Sequence[str] = DEFAULT_OOD_PATTERNS,
    m: int | None = None,
    iterations: int = 50_000,
    alpha: float = 0.05,
    seed: int = 0,
) -> Report:
    """Compute curves, AUCs and significance for every run and benchmark.

    Significance compares each run with ``baseline`` on the problems both share, at every
    grid k <= m, where ``m`` defaults to ``min(256, n // 4)`` (the paper: n = 1024, m = 256).
    """
    if not counts:
        raise ValueError("no runs to report")
    runs = list(counts)
    if baseline is not None and baseline not in counts:
        raise ValueError(f"--baseline {baseline!r} is not one of the runs {runs}")
    if len(runs) > 1 and baseline is None:
        baseline = runs[0]
    if baseline is not None:  # the baseline leads the table and the legend
        runs = [baseline] + [r for r in runs if r != baseline]
    results: list[BenchResult] = []
    sig: list[SigRow] = []
    notes: list[str] = []
    by_run = {r: counts[r].by_source() for r in runs}
    own = {r: {src: len(v[0]) for src, v in by_run[r].items()} for r in runs}
    coverage: list[str] = []
    for src in sorted({s for r in runs for s in by_run[r]}):  # every mean is over the problems all runs share
        holders = [r for r in runs if src in by_run[r]]
        shared = set.intersection(*(set(by_run[r][src][0]) for r in holders))
        most = max(own[r][src] for r in holders)
        if not shared:
            notes.append(f"{short_name(src)}: the runs {', '.join(holders)} share no problem; each is reported on its "
                         "own problems, and their numbers do not compare")
            continue
        for r in holders:
            uids, n, c = by_run[r][src]
            if len(uids) > len(shared):
                keep = np.array([i for i, u in enumerate(uids) if u in shared])
                by_run[r][src] = ([uids[i] for i in keep], n[keep], c[keep])
            if own[r][src] < most:
                fuller = ", ".join(f"{x} {own[x][src]}" for x in holders if own[x][src] > own[r][src])
                coverage.append(f"run {r} covers {own[r][src]} of the {most} problems of {short_name(src)} "
                                f"({fuller}): a half-written or partial run? every mean of {short_name(src)}, the "
                                f"averages included, is over the {len(shared)} problems all runs share")
    for run in runs:
        for src, (uids, n, c) in by_run[run].items():
            nmin = int(n.min())
            ks = [k for k in default_ks(min(k_max, nmin))]
            curve = pass_at_k_curve(n, c, ks).as_dict()
            auc = {K: auc_at_k(n, c, K) for K in AUC_KS if K <= nmin}
            results.append(BenchResult(run, short_name(src), domain_of(src, ood), len(uids), nmin, curve, auc,
                                       own_problems=own[run][src]))
    if baseline is not None:
        for run in runs:
            if run == baseline:
                continue
            for src, (uids_b, n_b, c_b) in by_run[run].items():
                if src not in by_run[baseline]:
                    notes.append(f"{short_name(src)}: no baseline results, no significance test for {run}")
                    continue
                uids_a, n_a, c_a = by_run[baseline][src]
                pos_a = {u: i for i, u in enumerate(uids_a)}
                common = [(pos_a[u], j) for j, u in enumerate(uids_b) if u in pos_a]
                if len(common) < max(len(uids_a), len(uids_b)):
                    notes.append(f"{short_name(src)}: {run} and {baseline} share {len(common)} of "
                                 f"{len(uids_b)}/{len(uids_a)} problems; tested on the shared ones")
                if not common:
                    continue
                ia, ib = (np.array(x) for x in zip(*common))
                nmin = int(min(n_a[ia].min(), n_b[ib].min()))
                mm = int(m) if m is not None else max(1, min(256, nmin // 4))
                if mm > nmin:
                    notes.append(f"{short_name(src)}: m={mm} exceeds the {nmin} samples; significance skipped")
                    continue
                ks = [k for k in default_ks(min(k_max, nmin)) if k <= mm]
                res = paired_subsampling_test(n_a[ia], c_a[ia], n_b[ib], c_b[ib], ks=ks, m=mm,
                                              iterations=iterations, alpha=alpha, seed=seed)
                for r in res:
                    sig.append(SigRow(baseline, run, short_name(src), r.k, mm, iterations, len(common),
                                      r.delta, r.ci_low, r.ci_high, r.p_value, r.significant))
    return Report(runs, baseline, k_max, results, sig, alpha, notes, coverage)


# ----------------------------------------------------------------------------------------------
# rendering
# ----------------------------------------------------------------------------------------------
def _pct(x: float | None) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}"


def _avg(report: Report, run: str, domain: str, which: str) -> float | None:
    vals = []
    for b in report.benchmarks:
        if report.domain(b) != domain:
            continue
        r = report.result(run, b)
        if r is None:
            return None
        k = 1 if which == "first" else report.table_k(b)
        vals.append(r.curve.get(k))
    if not vals or any(v is None for v in vals):
        return None
    return float(np.mean(vals))


def render_table(report: Report) -> str:
    """Markdown table in the layout of F-GRPO Table 1 (percent)."""
    benches = report.benchmarks
    head = ["run"] + [f"{b} pass@1 / pass@{report.table_k(b)}" for b in benches]
    domains = sorted({report.domain(b) for b in benches}, key=lambda d: d != "in-domain")
    head += [f"avg {d} pass@1 / pass@K" for d in domains]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for run in report.runs:
        cells = [run + (" (baseline)" if run == report.baseline else "")]
        for b in benches:
            r = report.result(run, b)
            if r is None:
                cells.append("–")
                continue
            K = report.table_k(b)
            most = max(x.own_problems or x.problems for x in report.results if x.benchmark == b)
            mine = r.own_problems or r.problems
            parts = []
            for k in (1, K):
                s = report.sig(run, b, k)
                parts.append(_pct(r.curve.get(k)) + ("†" if s is not None and s.significant else ""))
            # a run scored on fewer problems than another run has is said so in its own cell, not in a footnote; a
            # fuller run's cell says that its numbers are over the shared problems only
            note = (f" (on {mine} of {most} problems)" if mine < most else
                    f" (on the {r.problems} shared of its {mine} problems)" if r.problems < mine else "")
            cells.append(" / ".join(parts) + note)
        for d in domains:
            cells.append(f"{_pct(_avg(report, run, d, 'first'))} / {_pct(_avg(report, run, d, 'last'))}")
        lines.append("| " + " | ".join(cells) + " |")
    foot = []
    if report.baseline is not None:
        ms = sorted({s.m for s in report.significance})
        foot.append(
            f"† p < {report.alpha} vs {report.baseline} (paired m-out-of-n subsampling, m = "
            f"{'/'.join(map(str, ms)) or '-'}, {report.significance[0].iterations if report.significance else 0} "
            f"iterations; tested for k <= m)."
        )
    foot += average_notes(report)
    foot += report.notes
    return "\n".join(lines + [""] + foot) + "\n"


def average_notes(report: Report) -> list[str]:
    """Which benchmarks each average covers; a warning when the OOD average lacks one of F-GRPO
    Table 1's three OOD benchmarks (GPQA-Diamond, IFEval, SynLogic), since it is then not the
    paper's "Avg OOD"."""
    notes = []
    for d in sorted({report.domain(b) for b in report.benchmarks}, key=lambda d: d != "in-domain"):
        members = [b for b in report.benchmarks if report.domain(b) == d]
        notes.append(f"avg {d}: unweighted mean over {', '.join(members)}.")
        if d == "ood":
            missing = [b for b in PAPER_OOD_BENCHMARKS if b not in members]
            if missing:
                notes.append(f"avg ood lacks {', '.join(missing)}: F-GRPO Table 1 averages "
                             f"{', '.join(PAPER_OOD_BENCHMARKS)}, so this is not its Avg OOD.")
    return notes


def write_csv(report: Report, path: Path) -> None:
    all_ks = sorted({k for r in report.results for k in r.curve})
    cols = (
        ["run", "benchmark", "domain", "problems", "samples_min"]
        + [f"pass@{k}" for k in all_ks]
        + [f"auc@{K}" for K in AUC_KS]
    )
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        for run in report.runs:
            for b in report.benchmarks:
                r = report.result(run, b)
                if r is None:
                    continue
                row = [run, b, r.domain, r.problems, r.samples_min]
                row += [f"{100 * r.curve[k]:.4f}" if k in r.curve else "" for k in all_ks]
                row += [f"{100 * r.auc[K]:.4f}" if K in r.auc else "" for K in AUC_KS]
                w.writerow(row)
            for d in sorted({report.domain(b) for b in report.benchmarks}, key=lambda d: d != "in-domain"):
                rs = [report.result(run, b) for b in report.benchmarks if report.domain(b) == d]
                if any(r is None for r in rs):
                    continue
                row = [run, f"avg-{d}", d, sum(r.problems for r in rs), min(r.samples_min for r in rs)]
                row += [
                    f"{100 * np.mean([r.curve[k] for r in rs]):.4f}" if all(k in r.curve for r in rs) else ""
                    for k in all_ks
                ]
                row += [
                    f"{100 * np.mean([r.auc[K] for r in rs]):.4f}" if all(K in r.auc for r in rs) else ""
                    for K in AUC_KS
                ]
                w.writerow(row)


def write_significance_csv(report: Report, path: Path) -> None:
    cols = ["baseline", "run", "benchmark", "k", "m", "iterations", "paired_problems",
            "delta_pts", "ci_low_pts", "ci_high_pts", "p_value", "significant"]
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        for s in report.significance:
            w.writerow([s.baseline, s.run, s.benchmark, s.k, s.m, s.iterations, s.paired_problems,
                        f"{100 * s.delta:.4f}", f"{100 * s.ci_low:.4f}", f"{100 * s.ci_high:.4f}",
                        f"{s.p_value:.5f}", int(s.significant)])


def plot_curves(report: Report, path: Path) -> None:
    """pass@k curves, one panel per benchmark; ``*`` where a run differs from the baseline."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    benches = report.benchmarks
    ncol = min(3, len(benches))
    nrow = math.ceil(len(benches) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.4 * nrow), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, b in zip(axes.ravel(), benches):
        for i, run in enumerate(report.runs):
            r = report.result(run, b)
            if r is None:
                continue
            ks = sorted(r.curve)
            ys = [100 * r.curve[k] for k in ks]
            base = run == report.baseline
            col = "black" if base else colors[i % len(colors)]
            ax.plot(ks, ys, marker="o", ms=3, color=col, ls="--" if base else "-",
                    label=run + (" (baseline)" if base else ""))
            sk = [k for k in ks if (s := report.sig(run, b, k)) is not None and s.significant]
            if sk:
                ax.scatter(sk, [100 * r.curve[k] for k in sk], marker="*", s=110, color=col, zorder=5,
                           edgecolors="black", linewidths=0.5)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_title(f"{b} ({report.domain(b)})", fontsize=10)
        ax.set_xlabel("k")
        ax.set_ylabel("pass@k (%)")
        ax.grid(alpha=0.3)
    for ax in axes.ravel()[len(benches):]:
        ax.axis("off")
    handles, labels = axes.ravel()[0].get_legend_handles_labels()
    if report.baseline is not None:
        handles.append(plt.Line2D([], [], marker="*", color="gray", ls="", ms=10, markeredgecolor="black"))
        labels.append(f"p < {report.alpha} vs {report.baseline}")
    fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.08 if nrow == 1 else 0.05, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_report(report: Report, out_dir: str | Path, extra: dict | None = None) -> dict[str, Path]:
    """Write table.md, results.csv, significance.csv, passk.png and summary.json into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "table": out / "table.md",
        "csv": out / "results.csv",
        "significance": out / "significance.csv",
        "plot": out / "passk.png",
        "summary": out / "summary.json",
    }
    paths["table"].write_text(render_table(report))
    write_csv(report, paths["csv"])
    write_significance_csv(report, paths["significance"])
    plot_curves(report, paths["plot"])
    data = {"runs": report.runs, "baseline": report.baseline, "alpha": report.alpha, "k_max": report.k_max,
            "results": [asdict(r) for r in report.results], "significance": [asdict(s) for s in report.significance],
            "notes": report.notes}
    if extra:
        data.update(extra)
    paths["summary"].write_text(json.dumps(data, indent=1, default=str))
    return paths
