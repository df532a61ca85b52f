"""The demo's seed scheduler: the wall-clock budget stops new seeds, runs come back in (seed, arm) order (no verl)."""

import time

import verl_focal.demo.experiment as ex
from verl_focal.demo.arms import DEFAULT_ARMS


def _jobs(cfg, seeds):
    return [{"cfg": cfg, "arm": a, "seed": s} for s in seeds for a in cfg.arms]


def test_budget_stops_starting_seeds_and_keeps_complete_ones(monkeypatch):
    cfg = ex.DemoConfig(seeds=(0, 1, 2, 3), arms=DEFAULT_ARMS[:2], budget_s=25.0, rl_steps=1)
    clock = {"t": 0.0}
    monkeypatch.setattr(ex.time, "time", lambda: clock["t"])

    def fake_run(job):  # every run "takes" 10 s of wall
        clock["t"] += 10.0
        return {"arm": job["arm"].name, "seed": job["seed"], "seconds": 10.0}

    monkeypatch.setattr(ex, "_run_one", fake_run)
    logs = []
    runs, stopped = ex._run_all(_jobs(cfg, cfg.seeds), 1, cfg, 0.0, list(cfg.arms), None, logs.append)
    # seed 0 ends at 20 s; seed 1 would end at 40 s > 25 s: not started, nor any later seed
    assert [(r["seed"], r["arm"]) for r in runs] == [(0, DEFAULT_ARMS[0].name), (0, DEFAULT_ARMS[1].name)]
    assert stopped == [1, 2, 3] and "seeds not started: [1, 2, 3]" in logs[0]


def test_no_budget_runs_everything_in_order(monkeypatch):
    cfg = ex.DemoConfig(seeds=(5, 7), arms=DEFAULT_ARMS[:3], rl_steps=1)
    monkeypatch.setattr(ex, "_run_one", lambda job: {"arm": job["arm"].name, "seed": job["seed"], "seconds": 1.0})
    runs, stopped = ex._run_all(_jobs(cfg, cfg.seeds), 1, cfg, time.time(), list(cfg.arms), None, print)
    assert stopped == [] and [(r["seed"], r["arm"]) for r in runs] == [
        (s, a.name) for s in (5, 7) for a in DEFAULT_ARMS[:3]
    ]
