"""Several runs of one design, analysed as one run over all their seeds (pure Python and numpy: no torch, no verl).

``verl-focal demo --replicate RUN1 RUN2 [RUN3 ...]`` reads finished runs (their results.json).  They must share one
design (:mod:`verl_focal.lab.demo.design`) and hold disjoint seeds.  :func:`pool_results` then joins them into the
results one run over the concatenated seeds would have written: the arms every run holds, every seed's SFT policy,
the output mixture's points, and the claims rebuilt by the same function a run uses
(:func:`verl_focal.lab.demo.stats.run_claims`).  The equal-pass@1 analysis (the bootstrap over seeds) is then run on
the pooled results as on any run's, so a pooled verdict is that of one analysis over all the seeds.

The design's summary rule (docs/demo.md, "One design of 48 seeds") compares the pooled verdict with the pooled
verdicts of two halves of the runs, fixed by their order on the command line: :func:`halves`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from verl_focal.lab.demo.design import design_differences
from verl_focal.lab.demo.stats import mean_eval, run_claims

__all__ = ["runs_refusal", "common_arms", "pool_results", "halves"]


def _seeds(res: Mapping[str, Any]) -> list[int]:
    return [int(s) for s in res.get("seeds_completed", res.get("config", {}).get("seeds", []))]


def runs_refusal(results: Sequence[Mapping[str, Any]], paths: Sequence[str], shown: int = 8) -> str | None:
    """Why these runs cannot be pooled or replicate one another (one line), or None: a run of another design than
    the first (the settings that differ), or seeds that two runs share."""
    first = results[0].get("config", {})
    for i, res in enumerate(results[1:], start=2):
        diffs = design_differences(first, res.get("config", {}))
        if diffs:
            more = f" and {len(diffs) - shown} more" if len(diffs) > shown else ""
            modes = ""
            if first.get("mode") != res.get("config", {}).get("mode"):
                modes = f" (run 1 is a {first.get('mode')} run, run {i} a {res.get('config', {}).get('mode')} run)"
            pair = "the two runs have" if len(results) == 2 else f"run 1 ({paths[0]}) and run {i} ({paths[i - 1]}) have"
            return (f"--replicate: {pair} different designs{modes}, so their verdicts do not replicate one another: "
                    f"{'; '.join(diffs[:shown])}{more}; run the same design (same mode and options) on disjoint "
                    f"--seeds")
    seen: dict[int, int] = {}
    for i, res in enumerate(results, start=1):
        shared = sorted(s for s in _seeds(res) if s in seen)
        if shared:
            j = seen[shared[0]]
            return (f"--replicate: run {j} ({paths[j - 1]}) and run {i} ({paths[i - 1]}) share seeds {shared}; "
                    "runs that replicate or pool need disjoint seed sets (--seeds)")
        seen.update({s: i for s in _seeds(res)})
    return None


def common_arms(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """The arms (trained, or the output mixture's points) that every run holds results of, in the first run's
    order."""
    def held(res: Mapping[str, Any]) -> set[str]:
        return {r["arm"] for r in res.get("runs", [])} | {r["arm"] for r in res.get("references", [])}

    common = set.intersection(*(held(res) for res in results))
    order = [a["name"] for a in results[0].get("config", {}).get("arms", [])]
    order += [r["arm"] for r in results[0].get("runs", []) if r["arm"] not in order]
    return [a for a in dict.fromkeys(order) if a in common]


def pool_results(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One results dict over all the runs' seeds (the runs already checked by :func:`runs_refusal`): the config of
    the first run with every seed, the arms all runs hold, their runs and mixture points, every seed's SFT policy,
    and the claims and trough rebuilt over the pooled seeds.  ``pooled_from`` lists each run's seeds."""
    keep = set(common_arms(results))
    first = results[0]
    config = dict(first["config"])
    seeds = [s for res in results for s in _seeds(res)]
    config["seeds"] = seeds
    config["arms"] = [a for a in first["config"].get("arms", []) if a["name"] in keep]
    runs = [r for res in results for r in res.get("runs", []) if r["arm"] in keep]
    references = [r for res in results for r in res.get("references", []) if r["arm"] in keep]
    base_per_seed = {str(s): ev for res in results for s, ev in res.get("base", {}).get("per_seed", {}).items()}
    ran = {r["arm"] for r in runs}
    claims, group_size = run_claims(runs, {int(s): ev for s, ev in base_per_seed.items()}, config["arms"],
                                    [a for a in config["arms"] if a["name"] in ran])
    seconds: dict[str, float] = {}
    for res in results:
        for k, v in res.get("seconds", {}).items():
            seconds[k] = seconds.get(k, 0.0) + float(v)
    out: dict[str, Any] = {
        "config": config,
        "problems": first.get("problems", {}),
        "base": {"eval": mean_eval(list(base_per_seed.values())) if base_per_seed else {}, "per_seed": base_per_seed},
        "runs": runs,
        "seeds_completed": seeds,
        "seeds_not_started": [],
        "interrupted": False,
        "seeds_not_finished": [],
        "skipped_arms": list({s["arm"]: dict(s) for res in results for s in res.get("skipped_arms", [])}.values()),
        "claims": [c.as_json() for c in claims],
        "group_size": group_size,
        "jobs": first.get("jobs", 1),
        "seconds": seconds,
        "pooled_from": [{"seeds": _seeds(res)} for res in results],
    }
    if references:
        out["references"] = references
    return out


def halves(results: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """The summary rule's two halves, by the runs' order: the first ⌊k/2⌋ runs and the rest (k = 2: one run each;
    the 48-seed design: the second round's two seed sets, then the two new ones)."""
    if len(results) < 2:
        raise ValueError("halves need at least two runs")
    k = len(results) // 2
    return list(results[:k]), list(results[k:])
