"""The demo's seed scheduler: the wall-clock budget stops new seeds, seeds come back in order, and a seed is the
whole pipeline (its own SFT policy, then every arm); the group-size trough (no verl for the scheduler tests)."""

import json
import time

import numpy as np
import pytest

import verl_focal.lab.demo.experiment as ex
from verl_focal.lab.demo.arms import DEFAULT_ARMS, Arm
from verl_focal.lab.demo.stats import trough


def _jobs(cfg, seeds):
    return [{"cfg": cfg, "arms": list(cfg.arms), "seed": s} for s in seeds]


def test_budget_stops_starting_seeds_and_keeps_complete_ones(monkeypatch):
    cfg = ex.DemoConfig(seeds=(0, 1, 2, 3), arms=DEFAULT_ARMS[:2], budget_s=25.0, rl_steps=1)
    clock = {"t": 0.0}
    monkeypatch.setattr(ex.time, "time", lambda: clock["t"])

    def fake_seed(job, progress=None):  # every seed "takes" 20 s of wall
        clock["t"] += 20.0
        return {"seed": job["seed"], "seconds": 20.0, "runs": []}

    monkeypatch.setattr(ex, "_run_seed", fake_seed)
    logs = []
    done, stopped, interrupted = ex._run_all(_jobs(cfg, cfg.seeds), 1, cfg, 0.0, None, 1, logs.append)
    # seed 0 ends at 20 s; seed 1 would end at 40 s > 25 s: not started, nor any later seed
    assert [r["seed"] for r in done] == [0] and not interrupted
    assert stopped == [1, 2, 3] and logs == ["verl-focal demo: seed 0 finished (1 of 4)",
                                             "verl-focal demo: budget of 25 s reached; seeds not started: [1, 2, 3]"]


def test_ctrl_c_keeps_the_seeds_that_finished(monkeypatch):
    """A KeyboardInterrupt in the middle of a seed stops the run; the seeds that finished come back, flagged."""
    cfg = ex.DemoConfig(seeds=(4, 5, 6), arms=DEFAULT_ARMS[:1], rl_steps=1)

    def seed(job, progress=None):
        if job["seed"] == 5:
            raise KeyboardInterrupt
        return {"seed": job["seed"], "seconds": 1.0}

    monkeypatch.setattr(ex, "_run_seed", seed)
    done, stopped, interrupted = ex._run_all(_jobs(cfg, cfg.seeds), 1, cfg, time.time(), None, 1, print)
    assert interrupted and stopped == [] and [r["seed"] for r in done] == [4]


def test_no_budget_runs_every_seed_in_order(monkeypatch):
    cfg = ex.DemoConfig(seeds=(7, 5, 9), arms=DEFAULT_ARMS[:3], rl_steps=1)
    monkeypatch.setattr(ex, "_run_seed", lambda job, progress=None: {"seed": job["seed"], "seconds": 1.0})
    done, stopped, interrupted = ex._run_all(_jobs(cfg, cfg.seeds), 1, cfg, time.time(), None, 1, print)
    assert stopped == [] and not interrupted and [r["seed"] for r in done] == [7, 5, 9]


def test_each_seed_fits_its_own_sft_policy():
    """Same seed: the same SFT policy, bit for bit; another seed: another policy (initialisation, demonstrations
    and batch order all follow the seed)."""
    from verl_focal.lab.demo.model import ModelSpec
    from verl_focal.lab.demo.task import split_problems

    cfg = ex.DemoConfig(model=ModelSpec(hidden=16, layers=1, heads=2, intermediate=32), sft_examples=200,
                        sft_steps=3, sft_batch=8)
    familiar, _ = split_problems(cfg.task_seed, cfg.unfamiliar_frac)
    a, la = ex.fit_sft(cfg, familiar, seed=4)
    b, lb = ex.fit_sft(cfg, familiar, seed=4)
    c, _ = ex.fit_sft(cfg, familiar, seed=5)
    assert la == lb and len(la) == 3
    pa, pb, pc = (np.concatenate([p.detach().ravel().numpy() for p in m.parameters()]) for m in (a, b, c))
    np.testing.assert_array_equal(pa, pb)
    assert not np.allclose(pa, pc)


def _run(arm, n, seed, p256):
    return {"arm": arm, "n": n, "seed": seed, "eval": {"pass_at_k": {256: p256}}}


def test_trough_is_the_grpo_arm_with_the_lowest_mean_pass256():
    arms = [Arm("GRPO N=2", "grpo", 2), Arm("GRPO N=8", "grpo", 8), Arm("GRPO N=32", "grpo", 32),
            Arm("F-GRPO N=8 γ=1", "f_grpo", 8, {"focal.gamma": 1.0})]
    vals = {"GRPO N=2": (0.9, 0.8), "GRPO N=8": (0.7, 0.8), "GRPO N=32": (0.9, 0.6), "F-GRPO N=8 γ=1": (0.1, 0.1)}
    runs = [_run(a.name, a.n, s, vals[a.name][s]) for a in arms for s in (0, 1)]
    t = trough(runs, [a.as_json() for a in arms])
    # means 0.85, 0.75, 0.75: a tie goes to the smaller N (the first in N order); F-GRPO is not a GRPO arm
    assert t["trough"] == "GRPO N=8" and t["grpo_arms"] == ["GRPO N=2", "GRPO N=8", "GRPO N=32"]
    assert t["pass@256_mean"]["GRPO N=32"] == pytest.approx(0.75)
    assert trough(runs, [a.as_json() for a in arms[:2]]) == {}  # two group sizes make no curve
    # read back from results.json (string keys), the same trough
    assert trough(json.loads(json.dumps(runs)), [a.as_json() for a in arms]) == t


def test_unfamiliar_share_is_validated():
    with pytest.raises(ValueError, match="unfamiliar_frac=1.0 must lie strictly between 0 and 1"):
        ex.DemoConfig(unfamiliar_frac=1.0).validate()
