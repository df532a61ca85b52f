"""Cue-GRPO step diagnostics on the written test corpus, per partitioner (no verl needed).

Each corpus problem is one group: its solutions are the correct rollouts (several
methods, paraphrased) and two wrong rollouts are added.  Prints the cue/* metrics the
estimator logs, for strategy_cue, the random control, and single (= GRPO).

    python bench/cue_diagnostics.py [--alpha 0.8]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "partition"))
sys.path.insert(0, os.path.join(HERE, ".."))

import cue_corpus  # noqa: E402

from verl_focal.core.credit import credit_multipliers_batch  # noqa: E402
from verl_focal.partition import get_partitioner  # noqa: E402
from verl_focal.partition.diagnostics import credit_diagnostics  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--alpha", type=float, default=0.8)
    args = ap.parse_args()
    groups = [cue_corpus.group(p["id"]) for p in cue_corpus.PROBLEMS]
    print(
        f"{len(groups)} groups, {sum(len(t) for t, _ in groups)} correct rollouts; "
        f"alpha={args.alpha}, clip [0.3, 3], renormalised"
    )
    for name, kw in [("strategy_cue", {}), ("random", {"seed": 0}), ("singleton", {}), ("single", {})]:
        part = get_partitioner(name, **kw)
        gid, cid = [], []
        t0 = time.perf_counter()
        for g, (texts, _) in enumerate(groups):
            labels = part.partition(texts)
            gid += [g] * len(texts)
            cid += labels
        dt = time.perf_counter() - t0
        w = credit_multipliers_batch(np.array(gid), np.array(cid), alpha=args.alpha)
        d = credit_diagnostics(np.array(gid), np.array(cid), w)
        d["cue/partition_time_s"] = dt
        print(f"\n{name}")
        for k, v in d.items():
            print(f"  {k:<32} {v:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
