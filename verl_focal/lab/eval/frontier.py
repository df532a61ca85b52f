"""``verl-focal eval frontier``: each method against each control family at equal pass@k_x, on scored runs.

The comparison is the demo's (:mod:`verl_focal.lab.stats.frontier`): every policy is a point (Δx, Δy) of paired
differences from the reference on pass@k_x and pass@k_y (k_y > k_x) of one benchmark, or the mean over the in-domain
or the OOD benchmarks; a control family's points, joined from the reference at (0, 0) in knob order, are its frontier;
D = the method's Δy − the frontier at its Δx, never extrapolated.

Runs are read as ``eval report`` reads them (scored JSONL, or a verl ``validation_data_dir`` at ``--step``) and
reduced to per-problem counts (n samples, c correct) per benchmark; a run's pass@k on a benchmark is the mean over
the problems *every* run holds of the unbiased per-problem pass@k (docs/methods.md §8).  Problems some runs lack are
left out and counted.

Uncertainty, by what the design holds:

* two or more training seeds per point: the demo's paired bootstrap over seeds of the whole procedure
  (:func:`verl_focal.lab.stats.frontier.frontier_claims`), points with the Student-t interval over seeds;
* one training run per point: a bootstrap over problems and samples -- each resample draws the problems of every
  benchmark with replacement (the same draw for every run) and, per drawn problem and run, c* ~ Binomial(n, c/n)
  (n samples drawn with replacement), then recomputes every point, the frontiers and D*
  (:func:`verl_focal.lab.stats.frontier.claim_from_resamples`, interval D ± z_{0.975} · sd(D*)).  Training-run variance
  is not in that interval; the table and the figure say so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from verl_focal.config.errors import InputError, did_you_mean
from verl_focal.lab.eval.families import ALL_SEEDS, Families, Policy
from verl_focal.lab.eval.metrics import pass_at_k
from verl_focal.lab.eval.report import DEFAULT_OOD_PATTERNS, domain_of, short_name
from verl_focal.lab.stats.frontier import claim_from_resamples, frontier_claims
from verl_focal.lab.stats.verdict import t_interval

__all__ = ["RunScores", "parse_metric", "run_paths", "read_run", "read_demo", "select_benchmarks", "shared_problems",
           "check_k", "run_value", "frontier_table"]

#: ``--benchmark`` values that average over benchmarks
AVERAGES = ("in-domain", "ood")
SEEDS, PROBLEMS = "seeds", "problems"


@dataclass
class RunScores:
    """One run's scores per benchmark: ``counts[bench] = (uids, n, c)`` (scored samples), or ``exact[bench][k]`` =
    pass@k already computed exactly (the demo's runs, which hold no samples)."""

    name: str
    counts: dict[str, tuple[list[str], np.ndarray, np.ndarray]] = field(default_factory=dict)
    exact: dict[str, dict[int, float]] = field(default_factory=dict)
    domains: dict[str, str] = field(default_factory=dict)

    @property
    def benchmarks(self) -> list[str]:
        return sorted(self.counts or self.exact)


def parse_metric(flag: str, text: str) -> int:
    """k of ``pass@k``; InputError naming the flag otherwise."""
    m = re.fullmatch(r"pass@(\d+)", text.strip())
    if not m or int(m.group(1)) < 1:
        raise InputError(f"{flag} {text!r}: give pass@k with k >= 1, e.g. {flag} pass@1")
    return int(m.group(1))


# ----------------------------------------------------------------------------------------------
# reading runs
# ----------------------------------------------------------------------------------------------
def run_paths(fams: Families, runs_dir: str | None, explicit: Sequence[str], step: int | None) -> dict[str, list[Path]]:
    """The JSONL files of every run the families file names: ``--run NAME=PATH`` first, else ``<runs>/<run>.jsonl``
    or ``<runs>/<run>/`` (*.jsonl, or a verl validation_data_dir read at ``step``, default the latest)."""
    given: dict[str, Path] = {}
    for spec in explicit:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise InputError(f"--run {spec!r}: expected NAME=PATH")
        given[name] = Path(path)
    root = Path(runs_dir) if runs_dir else None
    if root is not None and not root.is_dir():
        raise InputError(f"--runs {root}: {'not a folder' if root.exists() else 'no such folder'}; give the folder "
                         "holding <run>.jsonl files or <run>/ folders")
    there = sorted({p.stem if p.suffix == ".jsonl" else p.name for p in root.iterdir()}) if root else []
    out = {}
    for run in fams.runs():
        path = given.get(run)
        if path is None and root is not None:
            path = next((c for c in (root / f"{run}.jsonl", root / run) if c.exists()), None)
        if path is None or not path.exists():
            where = f"--runs {root}" if root else "the --run options"
            raise InputError(f"{fams.source}: run {run!r} ({_user_of(fams, run)}) is not in {where}"
                             f"{did_you_mean(run, there + list(given))}; give <run>.jsonl or <run>/ there, or "
                             f"--run {run}=PATH")
        out[run] = _files(run, path, step)
    return out


def _user_of(fams: Families, run: str) -> str:
    return next(p.where for p in fams.policies() if run in p.runs.values())


def _files(run: str, path: Path, step: int | None) -> list[Path]:
    if path.is_file():
        return [path]
    stepped = sorted((int(p.stem), p) for p in path.glob("*.jsonl") if p.stem.isdigit())
    if stepped:  # a verl validation_data_dir: one <step>.jsonl per validation
        if step is None:
            return [stepped[-1][1]]
        by = dict(stepped)
        if step not in by:
            raise InputError(f"run {run!r} ({path}): --step {step}: no {step}.jsonl in this verl validation dump "
                             f"(steps: {', '.join(str(s) for s, _ in stepped)}); choose one of them")
        return [by[step]]
    files = sorted(path.glob("*.jsonl"))
    if not files:
        raise InputError(f"run {run!r}: {path} holds no *.jsonl files; give scored JSONL (eval score writes "
                         "<out-dir>/scored/<run>.jsonl) or a verl validation_data_dir")
    return files


def read_run(name: str, files: list[Path], default_data_source: str = "unknown",
             ood: Sequence[str] = DEFAULT_OOD_PATTERNS) -> tuple[RunScores, Any]:
    """Per-problem counts of one scored run by benchmark (data source short name), and the lines left out."""
    from verl_focal.lab.eval.records import Duplicates, LeftOut, count_correct, read_records

    recs: list[dict] = []
    left = LeftOut()
    dup = Duplicates()
    label = f"run {name}: "
    for f in files:
        r, lo = read_records(f, "report", default_data_source, label=label, duplicates=dup)
        recs += r
        left.add(lo)
    dup.refuse(label)
    try:
        pc = count_correct(recs)
    except (KeyError, ValueError) as e:
        raise InputError(f"run {name}: {e.args[0]}") from None
    scores = RunScores(name)
    for src, (uids, n, c) in pc.by_source().items():
        b = short_name(src)
        if b in scores.counts:
            raise InputError(f"run {name}: two data sources end in {b!r}; give each benchmark its own short name")
        scores.counts[b] = (uids, n, c)
        scores.domains[b] = domain_of(src, ood)
    return scores, left


def read_demo(folder: str | Path) -> tuple[dict, dict[str, RunScores]]:
    """A ``verl-focal demo`` output folder (its results.json) as a families document and one exact-pass@k run per
    (arm, seed) and per seed's SFT policy.  The demo computes pass@k exactly from the policy's probabilities (it
    holds no samples), so these runs carry ``exact`` values on one benchmark, ``demo``."""
    import json

    p = Path(folder)
    f = p / "results.json" if p.is_dir() else p
    if not f.is_file():
        raise InputError(f"--demo {folder}: no results.json there; give a `verl-focal demo` output folder")
    res = json.loads(f.read_text(encoding="utf-8"))
    fr = res.get("frontier")
    if not fr or "reference" not in fr:
        raise InputError(f"--demo {f}: the run holds no controls' frontier (run `verl-focal demo --arms controls` "
                         "with two or more seeds; results.json of an older demo lacks the reference: run it again)")
    runs: dict[str, RunScores] = {}

    def put(policy: str, seed: int, pk: dict) -> str:
        name = f"{policy} | seed {seed}"
        runs[name] = RunScores(name, exact={"demo": {int(k): float(v) for k, v in pk.items()}},
                               domains={"demo": "in-domain"})
        return name

    by_arm: dict[str, dict[int, str]] = {}
    for r in res["runs"] + res.get("references", []):  # the trained arms, then the references' points
        by_arm.setdefault(r["arm"], {})[int(r["seed"])] = put(r["arm"], int(r["seed"]), r["eval"]["pass_at_k"])
    for seed, ev in res["base"].get("per_seed", {}).items():
        by_arm.setdefault(fr["base"], {})[int(seed)] = put(fr["base"], int(seed), ev["pass_at_k"])
    seeds = fr["seeds"]

    def entry(arm: str, **kw) -> dict:
        return {**kw, "seeds": {s: by_arm[arm][s] for s in seeds}}

    missing = sorted({pt["arm"] for pt in fr["points"]} - set(by_arm))
    if missing:
        raise InputError(f"--demo {f}: the frontier names {missing[0]!r}, which has no run or reference in "
                         "results.json; the file is cut or edited: run the demo again")
    doc: dict[str, Any] = {"reference": entry(fr["reference"], name=fr["reference"]), "controls": [], "methods": []}
    named: set[str] = set()

    def name_of(pt: dict) -> str:  # the SFT policy ends several families: the same runs, one name per point
        name = pt["arm"] if pt["arm"] not in named else f"{pt['arm']} ({pt['family']})"
        named.add(name)
        return name

    for fam in fr["families"]:
        pts = [entry(pt["arm"], name=name_of(pt), value=pt["label"]) for pt in fr["points"]
               if pt["family"] == fam["name"]]
        section = "references" if fam.get("reference") else "controls" if fam["control"] else "methods"
        item = {"family": fam["name"], "knob": fam["knob"], "points": pts}
        if fam.get("reference"):
            item["trained"] = False
        doc.setdefault(section, []).append(item)
    return doc, runs


# ----------------------------------------------------------------------------------------------
# the problems and benchmarks every run shares
# ----------------------------------------------------------------------------------------------
def select_benchmarks(runs: dict[str, RunScores], reference_run: str, benchmark: str) -> list[str]:
    """The benchmarks ``--benchmark`` means (a short name, ``in-domain`` or ``ood``), after checking that every run
    is scored on the reference run's benchmark set."""
    ref = runs[reference_run]
    want = set(ref.benchmarks)
    for name, r in runs.items():
        have = set(r.benchmarks)
        if have != want:
            miss, extra = sorted(want - have), sorted(have - want)
            raise InputError(f"run {name!r} is scored on another benchmark set than the reference run "
                             f"{reference_run!r}" + (f" (missing {', '.join(miss)})" if miss else "")
                             + (f" (extra {', '.join(extra)})" if extra else "")
                             + "; score every run on the same evaluation sets")
    if benchmark in AVERAGES:
        chosen = [b for b in ref.benchmarks if ref.domains[b] == benchmark]
        if not chosen:
            raise InputError(f"--benchmark {benchmark}: the runs hold no {benchmark} benchmark (they hold "
                             f"{', '.join(ref.benchmarks)}); choose one of those or the other average")
        return chosen
    if benchmark not in want:
        raise InputError(f"--benchmark {benchmark!r}: not a benchmark of the runs{did_you_mean(benchmark, want)}; "
                         f"choose from {', '.join(sorted(want))}, in-domain or ood")
    return [benchmark]


def shared_problems(runs: dict[str, RunScores], benches: list[str]) -> dict[str, dict[str, Any]]:
    """Per benchmark: the problems every run holds (sorted uids) and, per run, how many of its problems are left
    out.  Refuses a benchmark no problem of which every run holds."""
    out = {}
    for b in benches:
        if not any(r.counts for r in runs.values()):
            out[b] = {"shared": None, "uids": None, "left_out": {}}
            continue
        sets = {name: set(r.counts[b][0]) for name, r in runs.items()}
        common = sorted(set.intersection(*sets.values()))
        if not common:
            raise InputError(f"benchmark {b!r}: no problem is held by every run; score the runs on the same "
                             "evaluation set")
        out[b] = {"shared": len(common), "uids": common,
                  "left_out": {name: len(s) - len(common) for name, s in sets.items() if len(s) > len(common)}}
    return out


def _aligned(r: RunScores, b: str, uids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    ru, n, c = r.counts[b]
    pos = {u: i for i, u in enumerate(ru)}
    sel = np.array([pos[u] for u in uids])
    return n[sel], c[sel]


def check_k(runs: dict[str, RunScores], benches: list[str], problems: dict[str, dict], flag_k: dict[str, int]) -> None:
    """Refuse a k larger than the samples of some run on some problem (or than the demo's computed ks)."""
    for flag, k in flag_k.items():
        for name, r in runs.items():
            for b in benches:
                if r.exact:
                    if k not in r.exact[b]:
                        raise InputError(f"{flag} pass@{k}: run {name!r} holds pass@k for k in "
                                         f"{sorted(r.exact[b])} only; choose one of them")
                    continue
                n, _ = _aligned(r, b, problems[b]["uids"])
                if int(n.min()) < k:
                    raise InputError(f"{flag} pass@{k}: run {name!r} has only {int(n.min())} samples per problem on "
                                     f"{b!r} (pass@k needs k <= samples); choose k <= {int(n.min())} or generate "
                                     "more samples")


def run_value(r: RunScores, benches: list[str], problems: dict[str, dict], k: int) -> float:
    """The run's pass@k: per benchmark the mean over the shared problems of the unbiased per-problem pass@k (or the
    demo's exact value), then the mean over ``benches``."""
    vals = []
    for b in benches:
        if r.exact:
            vals.append(r.exact[b][k])
        else:
            n, c = _aligned(r, b, problems[b]["uids"])
            vals.append(float(np.mean(pass_at_k(n, c, k))))
    return float(np.mean(vals))


def _pass_table(n: int, k: int, cache: dict) -> np.ndarray:
    """pass@k(n, c') for c' = 0..n (cached by (n, k))."""
    if (n, k) not in cache:
        cache[(n, k)] = pass_at_k(np.full(n + 1, n), np.arange(n + 1), k)
    return cache[(n, k)]


def _bootstrap_problems(runs: dict[str, RunScores], benches: list[str], problems: dict[str, dict],
                        ks: tuple[int, int], n_boot: int, seed: int) -> dict[str, np.ndarray]:
    """Per run, (2, n_boot): its pass@k_x and pass@k_y on each resample of problems (the same draw for every run)
    and of samples (c* ~ Binomial(n, c/n) per drawn problem, independently per run)."""
    rng = np.random.default_rng(seed)
    idx = {b: rng.integers(0, problems[b]["shared"], (n_boot, problems[b]["shared"])) for b in benches}
    cache: dict = {}
    out = {}
    for name in sorted(runs):
        acc = np.zeros((2, n_boot))
        for b in benches:
            n, c = _aligned(runs[name], b, problems[b]["uids"])
            nb = n[idx[b]]
            cb = rng.binomial(nb, c[idx[b]] / nb)
            for i, k in enumerate(ks):
                vals = np.empty(nb.shape)
                for ni in np.unique(nb):  # usually one n for every problem
                    sel = nb == ni
                    vals[sel] = _pass_table(int(ni), k, cache)[cb[sel]]
                acc[i] += vals.mean(1)
        out[name] = acc / len(benches)
    return out


# ----------------------------------------------------------------------------------------------
# the comparison
# ----------------------------------------------------------------------------------------------
def _refuse_identical(fams: Families, per_seed: dict, seeds: list, xm: str, ym: str) -> None:
    """Two points with the same x and y at every seed have paired differences that are all zero: a method there has
    D = 0 with a zero-width interval, a control point there adds nothing, and the power line is pulled down.  It is
    the same runs under two names (or copies of them); refused, naming both entries.  Two control points that name
    the same runs (the base model ending two families) are one policy and pass."""
    method_names = {p.name for f in fams.methods for p in f.points}
    seen: dict[tuple, Policy] = {}
    for p in fams.policies():
        key = tuple((per_seed[p.name][xm][s], per_seed[p.name][ym][s]) for s in seeds)
        first = seen.setdefault(key, p)
        if first is p:
            continue
        if (first is not fams.reference and first.name not in method_names and p.name not in method_names
                and first.runs == p.runs):
            continue
        raise InputError(f"{fams.source}: {first.where} and {p.where} have the same {xm} and {ym} at every seed "
                         f"(their paired differences are all zero): the same runs under two names? give each point "
                         "its own runs")


def frontier_table(fams: Families, runs: dict[str, RunScores], x: int, y: int, benchmark: str,
                   n_boot: int = 4000, seed: int = 0, level: float = 0.95) -> dict[str, Any]:
    """Points, claims and notes of the equal-pass@x comparison (the data behind frontier.md / .json / .png)."""
    if y <= x:
        raise InputError(f"--y pass@{y} must use a larger k than --x pass@{x} (coverage against accuracy)")
    ref_run = fams.reference.run_at(fams.seeds[0])
    benches = select_benchmarks(runs, ref_run, benchmark)
    problems = shared_problems(runs, benches)
    check_k(runs, benches, problems, {"--x": x, "--y": y})
    xm, ym = f"pass@{x}", f"pass@{y}"
    seeds = fams.seeds
    mode = SEEDS if len(seeds) >= 2 else PROBLEMS
    if mode == PROBLEMS and any(r.exact for r in runs.values()):
        raise InputError("one training seed per point needs the bootstrap over problems, and these runs hold no "
                         "per-problem samples (a demo run): run the demo with two or more seeds")
    value = {name: (run_value(r, benches, problems, x), run_value(r, benches, problems, y)) for name, r in runs.items()}
    per_seed = {p.name: {m: {s: value[p.run_at(s)][i] for s in seeds} for i, m in enumerate((xm, ym))}
                for p in fams.policies()}
    _refuse_identical(fams, per_seed, seeds, xm, ym)
    ref = per_seed[fams.reference.name]
    boot = _bootstrap_problems(runs, benches, problems, (x, y), n_boot, seed) if mode == PROBLEMS else None

    def delta(p: Policy, i: int, m: str) -> dict[str, float]:
        if mode == SEEDS:
            mean, lo, hi = t_interval([per_seed[p.name][m][s] - ref[m][s] for s in seeds], level)
        else:
            from scipy import stats as st

            mean = value[p.run_at(seeds[0])][i] - value[ref_run][i]
            d = boot[p.run_at(seeds[0])][i] - boot[ref_run][i]
            half = float(st.norm.ppf(0.5 + level / 2) * np.std(d, ddof=1))
            lo, hi = mean - half, mean + half
        return {"mean": mean, "ci_low": lo, "ci_high": hi}

    points = []
    for fam in fams.controls + fams.methods + fams.references:
        for p in fam.points:
            points.append({"family": fam.name, "knob": fam.knob, "label": p.value, "policy": p.name,
                           "control": fam.control, "runs": {str(s): r for s, r in p.runs.items()},
                           "trained": p.trained and not (p.untrained and mode == SEEDS),
                           **({"reference": True} if fam.reference else {}),
                           xm: delta(p, 0, xm), ym: delta(p, 1, ym)})
    methods = [p.name for f in fams.methods for p in f.points]
    # a reference family's point that is a control point too (the base model ending both) is not compared again
    control_runs = [p.runs for f in fams.controls for p in f.points]
    ref_points = [p.name for f in fams.references for p in f.points if p.runs not in control_runs]
    # who is compared with which families: methods and reference points with the controls, methods with the reference
    # families, and each reference family's points with every other reference family (the demo's order)
    pairs = [(methods + ref_points, fams.controls)]
    if fams.references:
        pairs.append((methods, fams.references))
        for f in fams.references:
            others = [p.name for g in fams.references if g is not f for p in g.points if p.runs not in control_runs]
            if others:
                pairs.append((others, (f,)))
    claims = []
    if mode == SEEDS:
        for who, families in pairs:
            claims += frontier_claims(per_seed, fams.reference.name, who,
                                      {f.name: [p.name for p in f.points] for f in families}, n_boot=n_boot,
                                      level=level, seed=seed, x=xm, y=ym)
    else:
        run0 = {p.name: p.run_at(seeds[0]) for p in fams.policies()}

        def d(name: str) -> tuple[float, float, np.ndarray, np.ndarray]:
            r = run0[name]
            return (value[r][0] - value[ref_run][0], value[r][1] - value[ref_run][1],
                    boot[r][0] - boot[ref_run][0], boot[r][1] - boot[ref_run][1])

        for who, families in pairs:
            for m in who:
                mx, my, bx, by = d(m)
                for f in families:
                    pts = [d(p.name) for p in f.points]
                    claims.append(claim_from_resamples(
                        m, f.name, mx, my, np.array([q[0] for q in pts]), np.array([q[1] for q in pts]), bx, by,
                        np.array([q[2] for q in pts]), np.array([q[3] for q in pts]), 1, PROBLEMS, level))
    return {"x": xm, "y": ym, "benchmark": benchmark, "benchmarks": benches, "resampled": mode,
            "seeds": [s for s in seeds if s is not ALL_SEEDS], "n_boot": n_boot, "level": level,
            "reference": fams.reference.name, "families_file": fams.source,
            "families": [{"name": f.name, "knob": f.knob, "control": f.control,
                          **({"reference": True} if f.reference else {})}
                         for f in fams.controls + fams.methods + fams.references],
            "points": points, "claims": [c.as_json() for c in claims], "references": ref_points,
            "problems": {b: {k: v for k, v in problems[b].items() if k != "uids"} for b in benches}}
