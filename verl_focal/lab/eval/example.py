"""``verl-focal eval example``: small scored example runs and their families files, offline, to try ``eval score``,
``eval report`` and ``eval frontier`` before any GPU run.

The runs are simulated, not trained: every problem i has a fixed logit L_i, a policy (τ, β) at training seed s
solves it with probability p = σ(τ · L_i + β + ε_s) (ε_s: the seed's shift, per policy and seed), and each of the
``samples`` responses is drawn correct with probability p.  A higher τ sharpens the policy (easy problems up, hard
problems down: pass@1 up, pass@k down), as RL with a larger step does.  The files::

    DIR/runs/<run>.jsonl         scored lines (uid, sample, data_source, response, ground_truth, score, acc, pred),
                                 three benchmarks: aime24 and math500 (in-domain), gpqa_diamond (OOD)
    DIR/families.yaml            the design over 4 training seeds (bootstrap over seeds)
    DIR/families_one_seed.yaml   the same design on seed 1 only (bootstrap over problems and samples)

The numbers teach nothing about the methods; they make the commands' inputs and outputs concrete.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

__all__ = ["BENCHMARKS", "SEEDS", "SAMPLES", "POLICIES", "add_example_parser", "write_example_runs", "run_example"]

#: data_source -> (problems, kind)
BENCHMARKS = {"verl_focal/aime24": (24, "math"), "verl_focal/math500": (32, "math"),
              "verl_focal/gpqa_diamond": (16, "choice")}
SEEDS = (1, 2, 3, 4)
SAMPLES = 16
#: policy -> (τ, β); the lower-lr family moves from GRPO (τ 2.2, β 1.2) to the base model (τ 1, β 0); F-GRPO keeps
#: more coverage than either control at its pass@1, Cue-GRPO sits near the lower-lr frontier
POLICIES = {
    "grpo": (2.2, 1.2),
    "grpo-lr7e-7": (1.9, 0.85), "grpo-lr4e-7": (1.5, 0.45),
    "grpo-kl0.01": (2.0, 0.9), "grpo-kl0.1": (1.6, 0.5), "grpo-kl1": (1.2, 0.15),
    "fgrpo-g1": (1.3, 0.5), "cue-a0.8": (1.7, 0.65),
}
BASE = ("base", (1.0, 0.0))


def _families(one_seed: bool) -> dict:
    def runs(policy: str) -> dict:
        return {"run": f"{policy}-s{SEEDS[0]}"} if one_seed else {"seeds": {s: f"{policy}-s{s}" for s in SEEDS}}

    return {
        "reference": {"name": "GRPO", **runs("grpo")},
        "controls": [
            {"family": "lower lr", "knob": "lr", "points": [
                {"value": "7e-7", **runs("grpo-lr7e-7")}, {"value": "4e-7", **runs("grpo-lr4e-7")},
                {"value": "0 (base model)", "run": BASE[0]}]},
            {"family": "KL to SFT", "knob": "kl_loss_coef", "points": [
                {"value": 0.01, **runs("grpo-kl0.01")}, {"value": 0.1, **runs("grpo-kl0.1")},
                {"value": 1, **runs("grpo-kl1")}]},
        ],
        "methods": [{"name": "F-GRPO γ=1", **runs("fgrpo-g1")}, {"name": "Cue-GRPO α=0.8", **runs("cue-a0.8")}],
    }


def _lines(policy: tuple[float, float], shift: float, logits: dict, rng: np.random.Generator):
    tau, beta = policy
    for src, (count, kind) in BENCHMARKS.items():
        for i in range(count):
            p = 1.0 / (1.0 + math.exp(-(tau * logits[src][i] + beta + shift)))
            if kind == "math":
                gold, wrong = str(17 + 3 * i), str(18 + 3 * i)
            else:
                gold, wrong = "ABCD"[i % 4], "ABCD"[(i + 1) % 4]
            for j in range(SAMPLES):
                ok = bool(rng.random() < p)
                pred = gold if ok else wrong
                yield {"uid": f"{src.split('/')[-1]}-{i:04d}", "sample": j, "data_source": src,
                       "response": f"\\boxed{{{pred}}}", "ground_truth": gold,
                       "score": float(ok), "acc": float(ok), "pred": pred, "status": "ok"}


def write_example_runs(out_dir: str | Path) -> dict[str, Path]:
    """Write the example runs and both families files under ``out_dir``; return the paths (runs folder, families
    files).  Deterministic: the same bytes on every call."""
    import yaml

    out = Path(out_dir)
    runs = out / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(2026)
    logits = {src: rng.normal(-0.3, 2.0, count) for src, (count, _) in BENCHMARKS.items()}
    todo = [(f"{name}-s{s}", pol, s) for name, pol in POLICIES.items() for s in SEEDS] + [(BASE[0], BASE[1], 0)]
    for run, pol, s in todo:
        seed_shift = 0.15 * np.random.default_rng(s).normal() if s else 0.0  # shared by every policy of seed s
        own = 0.05 * rng.normal() if s else 0.0
        with open(runs / f"{run}.jsonl", "w", encoding="utf-8") as fh:
            for rec in _lines(pol, seed_shift + own, logits, rng):
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    paths = {"runs": runs}
    for key, one in (("families", False), ("families_one_seed", True)):
        paths[key] = out / f"{key}.yaml"
        paths[key].write_text(f"# verl-focal eval example: {'seed 1 only' if one else f'{len(SEEDS)} training seeds'}"
                              "; see docs/eval.md, 'eval frontier'\n"
                              + yaml.safe_dump(_families(one), allow_unicode=True, sort_keys=False), encoding="utf-8")
    return paths


def add_example_parser(sub) -> None:
    """Add the ``example`` sub-command to ``eval``'s sub-parsers."""
    x = sub.add_parser("example", help="small scored example runs and families files, offline, to try eval score, "
                                       "report and frontier")
    x.add_argument("--out-dir", "--out", dest="out_dir", required=True, metavar="DIR",
                   help="folder to write runs/ and the families files into")


def run_example(args: argparse.Namespace) -> int:
    out = Path(args.out_dir)
    if out.exists() and not out.is_dir():
        from verl_focal.config.errors import InputError

        raise InputError(f"--out-dir {out}: is a file; give a folder (it is created if missing)")
    p = write_example_runs(out)
    n = len(list(p["runs"].glob("*.jsonl")))
    print(f"wrote {n} scored example runs (simulated, {SAMPLES} samples per problem, {len(BENCHMARKS)} benchmarks) "
          f"to {p['runs']} and the families files {p['families']}, {p['families_one_seed']}; try:\n"
          f"  verl-focal eval report --runs {p['runs']} --baseline grpo-s1 --k-max {SAMPLES} --out-dir {out}/report\n"
          f"  verl-focal eval frontier --families {p['families']} --runs {p['runs']} --y pass@{SAMPLES} "
          f"--out-dir {out}/frontier\n"
          f"  verl-focal eval frontier --families {p['families_one_seed']} --runs {p['runs']} --y pass@{SAMPLES} "
          f"--out-dir {out}/frontier_one_seed")
    return 0
