"""The demo experiment: SFT a tiny policy on a skewed strategy mixture, then RL it under every arm × seed.

All settings live in :class:`DemoConfig`; :func:`preset` gives the three modes
(``default``: CPU, ≤ 10 min on 2 cores; ``quick``: CI smoke run; ``cuda``: the
scale-up).  The default design was fixed before any arm comparison, by the
criteria written in docs/demo.md ("Design criteria").

Arms are paired by seed: every (arm, seed) run starts from the same SFT
policy and, for a given seed, draws the same training prompts in the same
order.  Runs are independent tasks, so ``jobs`` worker processes can share
them out; a run's result does not depend on which process ran it.
"""

from __future__ import annotations

import dataclasses
import io
import math
import os
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from verl_focal.demo.arms import DEFAULT_ARMS, REFERENCE_ARM, Arm
from verl_focal.demo.metrics import (
    answer_logprobs,
    build_rare_set,
    correct_set,
    delta_nll,
    exact_auc,
    exact_pass_curve,
    group_strategy_stats,
    retained_mass,
    strategy_mass,
)
from verl_focal.demo.model import ModelSpec, build_model, build_tokenizer, sft
from verl_focal.demo.stats import build_claims
from verl_focal.demo.task import STRATEGIES, sft_examples, split_problems

__all__ = ["DemoConfig", "preset", "run_experiment", "evaluate", "metric_table"]


@dataclass
class DemoConfig:
    """Every knob of the demo (defaults = the CPU default run, fixed before comparing arms)."""

    mode: str = "default"
    device: str = "cpu"
    threads: int = 1
    jobs: int = 0  # worker processes; 0 = min(2, CPU count, runs)
    seeds: tuple[int, ...] = tuple(range(24))
    budget_s: float | None = None  # wall-clock budget: no new seed starts once it would overrun
    task_seed: int = 0
    held_out_frac: float = 0.25
    prior: dict[str, float] = field(default_factory=lambda: {"add": 0.55, "sub": 0.30, "mul": 0.15})
    model: ModelSpec = field(default_factory=ModelSpec)
    sft_examples: int = 20000
    sft_steps: int = 500
    sft_batch: int = 128
    sft_lr: float = 3e-3
    rl_steps: int = 60
    prompts_per_step: int = 8
    lr: float = 5e-4
    clip_ratio: float = 0.2
    ks: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256)
    rare_rollouts: int = 800
    rare_top_frac: float = 0.01
    arms: tuple[Arm, ...] = DEFAULT_ARMS

    def validate(self) -> None:
        if self.device not in ("cpu", "cuda"):
            raise ValueError(f"--device={self.device!r}: choose cpu or cuda")
        if self.device == "cuda" and not torch.cuda.is_available():
            raise ValueError("--device=cuda but torch sees no CUDA device; run with --device cpu")
        if not self.seeds:
            raise ValueError("--seeds must name at least one seed")
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"--seeds repeats a seed: {list(self.seeds)}")
        if self.jobs < 0:
            raise ValueError(f"--jobs={self.jobs} must be >= 0 (0 = automatic)")
        if self.budget_s is not None and self.budget_s <= 0:
            raise ValueError(f"--budget={self.budget_s} must be > 0 seconds")
        if not self.arms:
            raise ValueError("no arms to run")
        if 256 not in self.ks or 16 not in self.ks or 1 not in self.ks:
            raise ValueError(f"ks={self.ks} must include 1, 16 and 256 (the claims' metrics)")
        for arm in self.arms:
            if arm.n < 2:
                raise ValueError(f"arm {arm.name!r}: group size N={arm.n} must be >= 2 for a group-relative advantage")


def preset(mode: str) -> DemoConfig:
    """The settings of ``default`` / ``quick`` / ``cuda`` (docs/demo.md lists them)."""
    if mode == "default":
        return DemoConfig()
    if mode == "quick":
        return DemoConfig(mode="quick", seeds=(0,), jobs=1, sft_examples=2000, sft_steps=30, sft_batch=32, rl_steps=2,
                          prompts_per_step=4, rare_rollouts=64)
    if mode == "cuda":
        return DemoConfig(mode="cuda", device="cuda", jobs=1, seeds=tuple(range(20)),
                          model=ModelSpec(hidden=128, layers=4, heads=4, intermediate=512),
                          sft_steps=1000, sft_batch=256, rl_steps=300, prompts_per_step=32, lr=1e-4)
    raise ValueError(f"unknown demo mode {mode!r}; choose default, quick or cuda")


def evaluate(model, tokenizer, train, held, base_held_logp: np.ndarray | None, rare, cfg: DemoConfig) -> dict[str, Any]:
    """Held-out exact pass@k and AUC@256, strategy masses, retained rare-correct mass, ΔNLL_rare, train p(correct)."""
    cs = correct_set(held)
    logp = answer_logprobs(model, tokenizer, cs)
    mass = strategy_mass(cs, logp)
    p = mass.sum(1)
    out: dict[str, Any] = {
        "pass_at_k": exact_pass_curve(p, cfg.ks),
        "auc_at_k": exact_auc(p, max(cfg.ks)),
        "p_correct_mean": float(p.mean()),
        "strategy_mass": {s: float(mass[:, i].mean()) for i, s in enumerate(STRATEGIES)},
        "unsolved_frac": float((p < 1e-3).mean()),
    }
    cs_tr = correct_set(train)
    mass_tr = strategy_mass(cs_tr, answer_logprobs(model, tokenizer, cs_tr))
    out["train_p_correct"] = float(mass_tr.sum(1).mean())
    out["train_groups_n8"] = group_strategy_stats(mass_tr, 8)
    if base_held_logp is not None:
        base_mass = strategy_mass(cs, base_held_logp)
        dominant = base_mass.argmax(1)
        rare_sel = cs.strategy != dominant[cs.owner]
        out["rare_retained"] = retained_mass(np.exp(base_held_logp), np.exp(logp), rare_sel)
    if rare is not None:
        out["delta_nll_rare"] = delta_nll(model, tokenizer, rare)
    return out


def metric_table(ev: dict[str, Any]) -> dict[str, float]:
    """The five claim metrics of one evaluation (keys of :data:`verl_focal.demo.stats.METRICS`)."""
    pk = {int(k): v for k, v in ev["pass_at_k"].items()}
    return {"pass@1": pk[1], "pass@16": pk[16], "pass@256": pk[256], "AUC@256": ev["auc_at_k"],
            "ΔNLL_rare": ev.get("delta_nll_rare", 0.0)}


def _summarise_history(h: list[dict[str, float]]) -> dict[str, float]:
    tail = h[-max(1, len(h) // 5):]
    ge2 = sum(x["groups_ge2_correct"] for x in h)
    return {
        "entropy_final": float(np.mean([x["entropy"] for x in tail])),
        "zero_adv_group_frac": float(np.mean([x["zero_adv_group_frac"] for x in h])),
        "train_acc_final": float(np.mean([x["train_acc"] for x in tail])),
        "loss_finite": bool(all(math.isfinite(x["loss"]) for x in h)),
        "groups_ge2_correct": int(ge2),
        "multi_strategy_share": float(sum(x["groups_multi_strategy"] for x in h) / ge2) if ge2 else float("nan"),
    }


# ------------------------------------------------------------------------------------------------
# one (arm, seed) run: a module-level function so worker processes can run it
# ------------------------------------------------------------------------------------------------
_WORKER: dict[str, Any] = {}


def _init_worker(threads: int) -> None:
    torch.set_num_threads(threads)
    import verl_focal.demo.rl  # noqa: F401  imports verl once per worker process


def _run_one(job: dict[str, Any]) -> dict[str, Any]:
    from verl_focal.demo.rl import RLConfig, train_rl

    cfg: DemoConfig = job["cfg"]
    arm: Arm = job["arm"]
    seed: int = job["seed"]
    t0, c0 = time.time(), time.process_time()
    tok = build_tokenizer()
    model = build_model(tok, cfg.model, seed=cfg.task_seed)
    model.load_state_dict(torch.load(io.BytesIO(job["state"]), map_location=cfg.device))
    model.to(cfg.device).eval()
    rl_cfg = RLConfig(steps=cfg.rl_steps, prompts_per_step=cfg.prompts_per_step, lr=cfg.lr, clip_ratio=cfg.clip_ratio)
    hist = train_rl(model, tok, job["train"], arm, rl_cfg, seed=seed)
    ev = evaluate(model, tok, job["train"], job["held"], job["base_held_logp"], job["rare"], cfg)
    ev.update(_summarise_history(hist))
    return {"arm": arm.name, "estimator": arm.estimator, "n": arm.n, "settings": dict(arm.settings), "seed": seed,
            "seconds": time.time() - t0, "cpu_s": time.process_time() - c0, "eval": ev, "history": hist}


def _auto_jobs(cfg: DemoConfig, n_runs: int) -> int:
    if cfg.jobs:
        return cfg.jobs
    if cfg.device == "cuda":
        return 1
    return max(1, min(2, os.cpu_count() or 1, n_runs))


def run_experiment(cfg: DemoConfig, progress_factory: Callable[[int], Any] | None = None, log=print) -> dict[str, Any]:
    """Run SFT once, then every arm × seed from the same SFT policy; return all results (JSON-ready), with claims."""
    from verl_focal.demo.rl import estimator_available  # imports verl (7-10 s)

    cfg.validate()
    torch.set_num_threads(cfg.threads)
    t_start, cpu_start = time.time(), time.process_time()
    train, held = split_problems(cfg.task_seed, cfg.held_out_frac)
    tok = build_tokenizer()
    arms, skipped = [], []
    for arm in cfg.arms:
        if estimator_available(arm.estimator):
            arms.append(arm)
        else:  # reported in results.json and report.md, never silently dropped
            skipped.append(
                {"arm": arm.name, "reason": f"advantage estimator {arm.estimator!r} is not registered in this install"}
            )
            log(f"verl-focal demo: skipping arm {arm.name!r}: estimator {arm.estimator!r} is not registered")
    bar = progress_factory(cfg.sft_steps + cfg.rl_steps * len(arms) * len(cfg.seeds)) if progress_factory else None

    base = build_model(tok, cfg.model, seed=cfg.task_seed).to(cfg.device)
    pairs = sft_examples(train, cfg.prior, cfg.sft_examples, seed=cfg.task_seed)
    if bar is not None:
        bar.set_description("SFT")
    sft_losses = sft(base, tok, pairs, cfg.sft_steps, cfg.sft_batch, cfg.sft_lr, seed=cfg.task_seed, progress=bar)
    base_held_logp = answer_logprobs(base, tok, correct_set(held))
    rare = build_rare_set(base, tok, train, cfg.rare_rollouts, cfg.rare_top_frac, seed=cfg.task_seed)
    base_eval = evaluate(base, tok, train, held, base_held_logp, rare, cfg)
    buf = io.BytesIO()
    torch.save({k: v.cpu() for k, v in base.state_dict().items()}, buf)
    t_sft = time.time() - t_start
    if bar is not None:
        bar.set_description("RL")

    jobs_list = [{"cfg": cfg, "arm": arm, "seed": seed, "state": buf.getvalue(), "train": train, "held": held,
                  "base_held_logp": base_held_logp, "rare": rare} for seed in cfg.seeds for arm in arms]
    n_jobs = _auto_jobs(cfg, len(jobs_list))
    runs, stopped = _run_all(jobs_list, n_jobs, cfg, t_start, arms, bar, log)
    if bar is not None:
        bar.close()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    seeds_done = sorted({r["seed"] for r in runs})
    per_seed: dict[str, dict[str, dict[int, float]]] = {}
    for r in runs:
        for metric, v in metric_table(r["eval"]).items():
            per_seed.setdefault(r["arm"], {}).setdefault(metric, {})[r["seed"]] = v
    claims = build_claims(per_seed, metric_table(base_eval), reference=REFERENCE_ARM,
                          also_vs={a.name: a.compare_with for a in cfg.arms})
    cfg_json = dataclasses.asdict(cfg)
    cfg_json["arms"] = [a.as_json() for a in cfg.arms]
    return {
        "config": cfg_json,
        "problems": {"train": len(train), "held_out": len(held)},
        "base": {"eval": base_eval, "sft_final_loss": float(np.mean(sft_losses[-10:])),
                 "rare_set_size": len(rare.pairs), "rare_set_sampled_correct": rare.n_sampled_correct},
        "runs": runs,
        "seeds_completed": seeds_done,
        "seeds_not_started": stopped,
        "skipped_arms": skipped,
        "claims": [c.as_json() for c in claims],
        "jobs": n_jobs,
        # cpu: this process + finished worker processes (imports included); rl_cpu: the runs' own CPU time
        "seconds": {"sft_and_base_eval": t_sft, "total": time.time() - t_start,
                    "cpu": time.process_time() - cpu_start + ru.ru_utime + ru.ru_stime,
                    "rl_cpu": float(sum(r["cpu_s"] for r in runs))},
    }


def _run_all(jobs_list, n_jobs, cfg, t_start, arms, bar, log) -> tuple[list[dict], list[int]]:
    """Run the (seed, arm) jobs in order, on ``n_jobs`` processes; honour the wall-clock budget by seed."""
    n_arms = len(arms)
    by_seed = [jobs_list[i : i + n_arms] for i in range(0, len(jobs_list), n_arms)]
    runs: list[dict] = []
    stopped: list[int] = []

    def done(r):
        runs.append(r)
        if bar is not None:
            bar.update(cfg.rl_steps)
            bar.set_postfix(seed=r["seed"], arm=r["arm"])

    def over_budget(n_started: int) -> bool:
        if cfg.budget_s is None or not runs:
            return False
        per_run = float(np.mean([r["seconds"] for r in runs]))
        # wall still needed: the runs not yet finished plus one more seed, shared out over the workers
        pending = n_started * n_arms - len(runs) + n_arms
        return time.time() - t_start + per_run * pending / n_jobs > cfg.budget_s

    if n_jobs == 1:
        for i, seed_jobs in enumerate(by_seed):
            if over_budget(i):
                stopped = [j[0]["seed"] for j in by_seed[i:]]
                break
            for j in seed_jobs:
                done(_run_one(j))
    else:
        import concurrent.futures as cf
        import multiprocessing as mp

        with cf.ProcessPoolExecutor(n_jobs, mp_context=mp.get_context("spawn"), initializer=_init_worker,
                                    initargs=(cfg.threads,)) as pool:
            pending: set = set()
            i = 0
            while i < len(by_seed) or pending:
                # keep about two seeds of work queued; start the next seed only within the budget
                while i < len(by_seed) and len(pending) < 2 * n_jobs:
                    if over_budget(i):
                        stopped = [j[0]["seed"] for j in by_seed[i:]]
                        i = len(by_seed)
                        break
                    pending |= {pool.submit(_run_one, j) for j in by_seed[i]}
                    i += 1
                finished, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                for f in finished:
                    done(f.result())
    if stopped:
        log(f"verl-focal demo: budget of {cfg.budget_s:.0f} s reached; seeds not started: {stopped}")
    order = {(j["seed"], j["arm"].name): k for k, j in enumerate(jobs_list)}
    runs.sort(key=lambda r: order[(r["seed"], r["arm"])])
    return runs, stopped
