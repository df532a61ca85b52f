"""The demo experiment: per seed, SFT a tiny policy on a skewed strategy mixture, then RL it under every arm.

All settings live in :class:`DemoConfig`; :func:`preset` gives the three modes
(``default``: CPU, ≤ 10 min on 2 cores; ``quick``: CI smoke run; ``cuda``: the
scale-up).  The default design was fixed before any arm comparison, by the
criteria written in docs/demo.md ("Design criteria").

A seed is the whole pipeline: it fits its own SFT policy (initialisation,
demonstrations and batch order drawn from the seed), then trains every arm
from that policy, drawing the same RL prompts in the same order for every
arm.  Arms are paired by seed, and the paired intervals include the spread
between SFT policies.  Seeds are independent tasks, so ``jobs`` worker
processes can share them out; a seed's result does not depend on which
process ran it.

SFT demonstrates only the *familiar* problems (a fixed share of the task);
RL trains on every problem, familiar and unfamiliar, and pass@k is measured
on that same set, the RL training distribution (docs/demo.md says why).
"""

from __future__ import annotations

import copy
import dataclasses
import io
import math
import os
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from verl_focal.lab.demo.arms import (
    BASE_LR,
    DEFAULT_ARMS,
    INTERPOLATION_ESTIMATOR,
    MIXTURE_ESTIMATOR,
    REFERENCE_ARM,
    Arm,
)
from verl_focal.lab.demo.metrics import (
    answer_logprobs,
    build_rare_set,
    correct_set,
    delta_nll,
    encode_correct_set,
    exact_auc,
    exact_pass_curve,
    group_strategy_stats,
    retained_mass,
    strategy_mass,
)
from verl_focal.lab.demo.model import RESPONSE_LEN, ModelSpec, build_model, build_tokenizer, encode_pairs, sft
from verl_focal.lab.demo.stats import mean_eval, metric_table, run_claims
from verl_focal.lab.demo.task import STRATEGIES, sft_examples, split_problems

__all__ = ["DEFAULT_SEEDS", "DemoConfig", "SeedEval", "preset", "run_experiment", "evaluate", "metrics_from_logp",
           "estimate_seconds", "duration_text", "MAX_UNBUDGETED_S",
           "mixture_eval", "interpolate_state", "metric_table"]

#: the default run's seeds (``verl-focal demo --help`` prints them)
DEFAULT_SEEDS: tuple[int, ...] = tuple(range(24))


@dataclass
class DemoConfig:
    """Every knob of the demo (defaults = the CPU default run, fixed before comparing arms)."""

    mode: str = "default"
    device: str = "cpu"
    threads: int = 1
    jobs: int = 0  # worker processes; 0 = min(2, CPU count, seeds) (the CLI refuses --jobs 0)
    seeds: tuple[int, ...] = DEFAULT_SEEDS
    budget_s: float | None = None  # wall-clock budget: no new seed starts once it would overrun
    task_seed: int = 0
    unfamiliar_frac: float = 0.5  # share of the problems with no SFT demonstration (RL trains on all)
    prior: dict[str, float] = field(default_factory=lambda: {"add": 0.55, "sub": 0.30, "mul": 0.15})
    model: ModelSpec = field(default_factory=ModelSpec)
    sft_examples: int = 20000
    sft_steps: int = 500
    sft_batch: int = 128
    sft_lr: float = 3e-3
    rl_steps: int = 60
    prompts_per_step: int = 8
    lr: float = BASE_LR  # one constant with the lower-lr family's zero point
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
        if not (0.0 < self.unfamiliar_frac < 1.0):
            raise ValueError(f"unfamiliar_frac={self.unfamiliar_frac} must lie strictly between 0 and 1")
        if self.budget_s is not None and self.budget_s <= 0:
            raise ValueError(f"--budget={self.budget_s} must be > 0 seconds")
        if not any(a.trained for a in self.arms):
            raise ValueError("no arms to run")
        mixtures = [a.name for a in self.arms if not a.trained]
        if mixtures and REFERENCE_ARM not in {a.name for a in self.arms if a.trained}:
            raise ValueError(f"--arms: the output mixture and the weight interpolation ({', '.join(mixtures)}) are "
                             f"made from {REFERENCE_ARM}'s policy and the SFT policy; add {REFERENCE_ARM!r} to --arms")
        if 256 not in self.ks or 16 not in self.ks or 1 not in self.ks:
            raise ValueError(f"ks={self.ks} must include 1, 16 and 256 (the claims' metrics)")
        for arm in self.arms:
            if arm.n < 2:
                raise ValueError(f"arm {arm.name!r}: group size N={arm.n} must be >= 2 for a group-relative advantage")


#: CPU seconds of one seed's SFT and base evaluation per 500 SFT steps, and of one arm per 60 RL steps at N = 8, on an
#: idle 2-core machine (docs/demo.md, "Run time and power": run A, 16.0 s a seed, 2.5 s an RL run); a loaded machine
#: is up to about twice slower
SFT_CPU_S, ARM_CPU_S = 16.0, 2.5
#: CPU seconds of one reference point, at most (an output mixture's ~0.02, a weight interpolation's one evaluation,
#: 2.9 s for its 12 points on seed 100 on a loaded machine)
REFERENCE_CPU_S = 0.25
#: the longest run the CLI starts without a --budget (24 h): a longer one is refused with its estimate
MAX_UNBUDGETED_S = 24 * 3600.0


def estimate_seconds(cfg: DemoConfig) -> float:
    """The run's wall time on an idle machine, from :data:`SFT_CPU_S` and :data:`ARM_CPU_S` scaled by the steps and
    the group size: seeds × (SFT · sft_steps/500 + Σ_arms ARM · rl_steps/60 · N/8 + references) / workers."""
    per_seed = SFT_CPU_S * cfg.sft_steps / 500 + sum(
        ARM_CPU_S * cfg.rl_steps / 60 * a.n / 8 if a.trained else REFERENCE_CPU_S for a in cfg.arms)
    return len(cfg.seeds) * per_seed / _auto_jobs(cfg, len(cfg.seeds))


def duration_text(seconds: float) -> str:
    """``42 s``, ``12 min``, ``5.3 h``, ``16.5 days``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def preset(mode: str) -> DemoConfig:
    """The settings of ``default`` / ``quick`` / ``cuda`` (docs/demo.md lists them)."""
    if mode == "default":
        return DemoConfig()
    if mode == "quick":
        return DemoConfig(mode="quick", seeds=(0,), jobs=1, sft_examples=10000, sft_steps=400, sft_batch=64,
                          rl_steps=8, prompts_per_step=8, rare_rollouts=64)
    if mode == "cuda":
        return DemoConfig(mode="cuda", device="cuda", jobs=1, seeds=tuple(range(20)),
                          model=ModelSpec(hidden=128, layers=4, heads=4, intermediate=512),
                          sft_steps=1000, sft_batch=256, rl_steps=300, prompts_per_step=32, lr=1e-4)
    raise ValueError(f"unknown demo mode {mode!r}; choose default, quick or cuda")


@dataclass(frozen=True)
class SeedEval:
    """What every evaluation of one seed shares, computed once per seed: the RL problems' correct answers (``cs``)
    and their teacher-forcing batch, which of its problems are unfamiliar, the SFT policy's log-probs of the
    answers and its rare-correct set with its batch.  Policies evaluated with it get the same numbers as with
    :func:`evaluate`'s own encoding (the same ids, the same forward pass)."""

    cs: Any
    encoded: tuple
    unfamiliar_mask: np.ndarray
    base_logp: np.ndarray | None = None
    rare: Any = None
    rare_encoded: tuple | None = None

    @classmethod
    def build(cls, tokenizer, problems, unfamiliar, base_logp=None, rare=None) -> SeedEval:
        cs = correct_set(problems)
        unfam = set(unfamiliar)
        return cls(cs, encode_correct_set(tokenizer, cs), np.array([pr in unfam for pr in cs.problems]), base_logp,
                   rare, encode_pairs(tokenizer, rare.pairs) if rare is not None and rare.pairs else None)


def evaluate(model, tokenizer, problems, unfamiliar, base_logp: np.ndarray | None, rare,
             cfg: DemoConfig, shared: SeedEval | None = None) -> dict[str, Any]:
    """Exact pass@k and AUC@256 on the RL training problems (all of them) and on their unfamiliar subset, strategy
    masses, retained rare-correct mass, ΔNLL_rare and the exact strategy diversity of N=8 groups.  ``shared``: the
    seed's :class:`SeedEval` (built from the same problems, base log-probs and rare set), to skip re-encoding."""
    shared = SeedEval.build(tokenizer, problems, unfamiliar, base_logp, rare) if shared is None else shared
    logp = answer_logprobs(model, tokenizer, shared.cs, shared.encoded)
    out = metrics_from_logp(logp, shared, cfg)
    if shared.rare is not None:
        out["delta_nll_rare"] = delta_nll(model, tokenizer, shared.rare, shared.rare_encoded)
    return out


def metrics_from_logp(logp: np.ndarray, shared: SeedEval, cfg: DemoConfig) -> dict[str, Any]:
    """:func:`evaluate`'s metrics but ΔNLL_rare, from a policy's log-probs ``logp`` of the seed's correct answers."""
    cs = shared.cs
    mass = strategy_mass(cs, logp)
    p = mass.sum(1)
    sel = shared.unfamiliar_mask
    out: dict[str, Any] = {
        "pass_at_k": exact_pass_curve(p, cfg.ks),
        "auc_at_k": exact_auc(p, max(cfg.ks)),
        "p_correct_mean": float(p.mean()),
        "unfamiliar_pass_at_k": exact_pass_curve(p[sel], (1, 256)),
        "strategy_mass": {s: float(mass[:, i].mean()) for i, s in enumerate(STRATEGIES)},
        "unsolved_frac": float((p < 1e-3).mean()),
        "groups_n8": group_strategy_stats(mass, 8),
    }
    if shared.base_logp is not None:
        base_logp = shared.base_logp
        base_mass = strategy_mass(cs, base_logp)
        dominant = base_mass.argmax(1)
        rare_sel = cs.strategy != dominant[cs.owner]
        out["rare_retained"] = retained_mass(np.exp(base_logp), np.exp(logp), rare_sel)
    return out


def mixture_eval(lam: float, logp: np.ndarray, shared: SeedEval, cfg: DemoConfig) -> dict[str, Any]:
    """The output mixture λ·π + (1 − λ)·π_SFT of a policy π (its log-probs ``logp`` of the seed's correct answers)
    and the seed's SFT policy (``shared.base_logp``), evaluated exactly: an answer's probability under the mixture
    is λ·π(a|x) + (1 − λ)·π_SFT(a|x), so every metric of :func:`metrics_from_logp` follows from the two policies'
    log-probs, and ΔNLL_rare = mean over the rare set of −log π_λ(a)/|a| − (−log π_SFT(a)/|a|) (every rare answer is
    a correct answer, ``shared.rare.rows``).  Nothing is trained or sampled."""
    if not 0.0 < lam < 1.0:
        raise ValueError(f"mixture λ={lam} must lie strictly between 0 (the SFT policy) and 1 (the policy itself)")
    mixed = np.logaddexp(math.log(lam) + logp, math.log1p(-lam) + shared.base_logp)
    out = metrics_from_logp(mixed, shared, cfg)
    rare = shared.rare
    if rare is not None:
        out["delta_nll_rare"] = (float(np.mean(-mixed[rare.rows] / RESPONSE_LEN - rare.base_nll)) if len(rare.pairs)
                                 else float("nan"))
    return out


def interpolate_state(lam: float, rl_state: dict, sft_state: dict) -> dict:
    """Weight interpolation θ_λ = λ·θ_RL + (1 − λ)·θ_SFT of two state dicts of one architecture, tensor by tensor
    (WiSE-FT; Dang et al., arXiv 2504.10478), the formula of ``verl-focal eval interpolate``: floating-point tensors
    interpolated in their dtype, every other tensor (buffers) taken from ``rl_state``.  0 < λ < 1."""
    if not 0.0 < lam < 1.0:
        raise ValueError(f"interpolation λ={lam} must lie strictly between 0 (the SFT policy) and 1 (the RL policy)")
    out = {}
    for k, v in rl_state.items():
        out[k] = v * lam + sft_state[k] * (1.0 - lam) if v.is_floating_point() else v.clone()
    return out


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
# one seed (SFT, base evaluation, every arm): a module-level function so worker processes can run it
# ------------------------------------------------------------------------------------------------
def _init_worker(threads: int) -> None:
    torch.set_num_threads(threads)
    import verl_focal.lab.demo.rl  # noqa: F401  imports verl once per worker process


def fit_sft(cfg: DemoConfig, familiar, seed: int, progress=None, tokenizer=None):
    """The seed's SFT policy: initialisation, demonstrations (on the familiar problems) and batch order from ``seed``;
    returns (model, per-step losses).  ``tokenizer``: the seed's (:func:`build_tokenizer` when not given)."""
    tok = build_tokenizer() if tokenizer is None else tokenizer
    model = build_model(tok, cfg.model, seed=seed).to(cfg.device)
    pairs = sft_examples(familiar, cfg.prior, cfg.sft_examples, seed=seed)
    losses = sft(model, tok, pairs, cfg.sft_steps, cfg.sft_batch, cfg.sft_lr, seed=seed, progress=progress)
    return model, losses


def _run_arm(cfg: DemoConfig, arm: Arm, seed: int, start, tok, problems, shared: SeedEval,
             progress=None) -> tuple[dict[str, Any], np.ndarray, Any]:
    """One arm from a copy of the seed's SFT policy ``start``: its run record, its log-probs of the seed's correct
    answers (``shared.cs``) and the trained model."""
    from verl_focal.lab.demo.rl import RLConfig, train_rl

    t0, c0 = time.time(), time.process_time()
    model = copy.deepcopy(start)
    rl_cfg = RLConfig(steps=cfg.rl_steps, prompts_per_step=cfg.prompts_per_step, lr=cfg.lr, clip_ratio=cfg.clip_ratio)
    hist = train_rl(model, tok, problems, arm, rl_cfg, seed=seed, progress=progress)
    logp = answer_logprobs(model, tok, shared.cs, shared.encoded)
    ev = metrics_from_logp(logp, shared, cfg)
    if shared.rare is not None:
        ev["delta_nll_rare"] = delta_nll(model, tok, shared.rare, shared.rare_encoded)
    ev.update(_summarise_history(hist))
    run = {"arm": arm.name, "estimator": arm.estimator, "n": arm.n, "settings": dict(arm.settings), "seed": seed,
           "seconds": time.time() - t0, "cpu_s": time.process_time() - c0, "eval": ev, "history": hist}
    if arm.focal_weights:  # the focal weight's controls: GRPO's estimator, other advantages (runs of others unchanged)
        run["focal_weights"] = arm.focal_weights
    return run, logp, model


def _interpolation_eval(lam: float, grpo, start, tok, shared: SeedEval, cfg: DemoConfig) -> dict[str, Any]:
    """The weight interpolation of GRPO N=8's trained policy ``grpo`` and the seed's SFT policy ``start`` at λ,
    evaluated as every arm is (exact pass@k from the policy's probabilities, ΔNLL_rare on the seed's rare set)."""
    model = copy.deepcopy(start)
    model.load_state_dict(interpolate_state(lam, grpo.state_dict(), start.state_dict()))
    model.eval()
    logp = answer_logprobs(model, tok, shared.cs, shared.encoded)
    ev = metrics_from_logp(logp, shared, cfg)
    if shared.rare is not None:
        ev["delta_nll_rare"] = delta_nll(model, tok, shared.rare, shared.rare_encoded)
    return ev


def _run_seed(job: dict[str, Any], progress=None) -> dict[str, Any]:
    """One seed: fit its SFT policy, evaluate it (the base), build its rare-correct set, then train every arm.

    One tokenizer, one encoding of the evaluation answers and one copy of the SFT policy to start the arms from
    serve the whole seed; every arm starts from a fresh copy of that policy (loaded back from its saved state, as a
    new process would load it)."""
    cfg: DemoConfig = job["cfg"]
    seed: int = job["seed"]
    t0, c0 = time.time(), time.process_time()
    familiar, unfamiliar = split_problems(cfg.task_seed, cfg.unfamiliar_frac)
    problems = sorted(familiar + unfamiliar)
    if progress is not None:
        progress.set_description(f"SFT seed {seed}")
    tok = build_tokenizer()
    base, losses = fit_sft(cfg, familiar, seed, progress, tokenizer=tok)
    shared = SeedEval.build(tok, problems, unfamiliar)
    base_logp = answer_logprobs(base, tok, shared.cs, shared.encoded)
    rare = build_rare_set(base, tok, problems, cfg.rare_rollouts, cfg.rare_top_frac, seed=seed, logp=base_logp)
    shared = dataclasses.replace(shared, base_logp=base_logp, rare=rare,
                                 rare_encoded=encode_pairs(tok, rare.pairs) if rare.pairs else None)
    base_eval = metrics_from_logp(base_logp, shared, cfg)
    base_eval["delta_nll_rare"] = delta_nll(base, tok, rare, shared.rare_encoded)
    base_eval["sft_final_loss"] = float(np.mean(losses[-10:]))
    base_eval["rare_set_size"], base_eval["rare_set_sampled_correct"] = len(rare.pairs), rare.n_sampled_correct
    buf = io.BytesIO()
    torch.save({k: v.cpu() for k, v in base.state_dict().items()}, buf)
    start = build_model(tok, cfg.model, seed=seed)
    start.load_state_dict(torch.load(io.BytesIO(buf.getvalue()), map_location=cfg.device))
    start.to(cfg.device).eval()
    sft_s, sft_cpu = time.time() - t0, time.process_time() - c0
    if progress is not None:
        progress.set_description(f"RL seed {seed}")
    runs, logps = [], {}
    made = job.get("mixtures") or []
    grpo = None
    for arm in job["arms"]:
        run, logps[arm.name], model = _run_arm(cfg, arm, seed, start, tok, problems, shared, progress)
        if arm.name == REFERENCE_ARM and any(a.interpolation is not None for a in made):
            grpo = model  # kept for the weight interpolation
        runs.append(run)
    if made:  # the references: made from GRPO N=8 and the SFT policy, not trained
        t_ref = time.process_time()
        out_refs = []
        for a in made:
            if a.mixture is not None:
                out_refs.append({"arm": a.name, "estimator": MIXTURE_ESTIMATOR, "lambda": a.mixture, "seed": seed,
                                 "eval": mixture_eval(a.mixture, logps[REFERENCE_ARM], shared, cfg)})
            else:
                out_refs.append({"arm": a.name, "estimator": INTERPOLATION_ESTIMATOR, "lambda": a.interpolation,
                                 "seed": seed, "eval": _interpolation_eval(a.interpolation, grpo, start, tok, shared,
                                                                           cfg)})
    out = {"seed": seed, "base": base_eval, "runs": runs}
    if made:
        out["references"] = out_refs
        out["references_cpu_s"] = time.process_time() - t_ref
    out.update({"seconds": time.time() - t0, "cpu_s": time.process_time() - c0, "sft_seconds": sft_s,
                "sft_cpu_s": sft_cpu})
    return out


def _auto_jobs(cfg: DemoConfig, n_seeds: int) -> int:
    if cfg.jobs:
        return cfg.jobs
    if cfg.device == "cuda":
        return 1
    return max(1, min(2, os.cpu_count() or 1, n_seeds))


def require_verl() -> None:
    """The verl names the demo's RL loop uses (integration/compat.py), checked before anything runs: a missing
    one is a :class:`~verl_focal.config.errors.ConfigError` naming it."""
    from verl_focal.integration.compat import require

    require(["demo", "estimators", "advantage"], "verl-focal demo")


def run_experiment(cfg: DemoConfig, progress_factory: Callable[[int], Any] | None = None, log=print) -> dict[str, Any]:
    """Run every seed (its own SFT policy, then every arm from it); return all results (JSON-ready), with claims.

    ``claims``: every arm against its seed's SFT policy and against GRPO N=8, plus each arm's ``compare_with``;
    with GRPO at three or more group sizes, F-GRPO N=8 also against GRPO at the trough (``group_size``).
    ``log`` gets one line per finished seed.  A KeyboardInterrupt (Ctrl-C) stops the run: the results of the
    seeds that finished are returned, with ``interrupted`` true and the others in ``seeds_not_finished``."""
    cfg.validate()
    require_verl()
    from verl_focal.lab.demo.rl import estimator_available  # imports verl (7-10 s)

    torch.set_num_threads(cfg.threads)
    t_start, cpu_start = time.time(), time.process_time()
    familiar, unfamiliar = split_problems(cfg.task_seed, cfg.unfamiliar_frac)
    arms, skipped = [], []
    mixtures = [a for a in cfg.arms if not a.trained]  # made after each seed's arms, from GRPO N=8's policy
    for arm in (a for a in cfg.arms if a.trained):
        if estimator_available(arm.estimator):
            arms.append(arm)
        else:  # reported in results.json and report.md, never silently dropped
            skipped.append(
                {"arm": arm.name, "reason": f"advantage estimator {arm.estimator!r} is not registered in this install"}
            )
            log(f"verl-focal demo: skipping arm {arm.name!r}: estimator {arm.estimator!r} is not registered")
    per_seed_steps = cfg.sft_steps + cfg.rl_steps * len(arms)
    bar = progress_factory(per_seed_steps * len(cfg.seeds)) if progress_factory else None
    if mixtures and REFERENCE_ARM not in {a.name for a in arms}:
        raise ValueError(f"the output mixture and the weight interpolation need {REFERENCE_ARM}, which did not run")
    jobs_list = [{"cfg": cfg, "arms": arms, "mixtures": mixtures, "seed": seed} for seed in cfg.seeds]
    n_jobs = _auto_jobs(cfg, len(jobs_list))
    seed_results, stopped, interrupted = _run_all(jobs_list, n_jobs, cfg, t_start, bar, per_seed_steps, log)
    if bar is not None:
        bar.close()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    runs = [r for sr in seed_results for r in sr["runs"]]
    seeds_done = sorted(sr["seed"] for sr in seed_results)
    cfg_json = dataclasses.asdict(cfg)
    cfg_json["arms"] = [a.as_json() for a in cfg.arms]
    claims, group_size = run_claims(runs, {sr["seed"]: sr["base"] for sr in seed_results}, cfg_json["arms"],
                                    [a.as_json() for a in arms])
    bases = [sr["base"] for sr in seed_results]
    references = [x for sr in seed_results for x in sr.get("references", [])]
    out = {
        "config": cfg_json,
        "problems": {"rl": len(familiar) + len(unfamiliar), "familiar": len(familiar), "unfamiliar": len(unfamiliar)},
        # the base (SFT) policy of every seed, and their mean
        "base": {"eval": mean_eval(bases) if bases else {},
                 "per_seed": {sr["seed"]: sr["base"] for sr in seed_results}},
        "runs": runs,
        "seeds_completed": seeds_done,
        "seeds_not_started": stopped,
        "interrupted": interrupted,
        "seeds_not_finished": [s for s in cfg.seeds if s not in seeds_done] if interrupted else [],
        "skipped_arms": skipped,
        "claims": [c.as_json() for c in claims],
        "group_size": group_size,
        "jobs": n_jobs,
        # cpu: this process + finished worker processes (imports included); seed_cpu: the seeds' own CPU time
        "seconds": {"total": time.time() - t_start,
                    "cpu": time.process_time() - cpu_start + ru.ru_utime + ru.ru_stime,
                    "seed_cpu": float(sum(sr["cpu_s"] for sr in seed_results)),
                    "sft_cpu": float(sum(sr["sft_cpu_s"] for sr in seed_results)),
                    "rl_cpu": float(sum(r["cpu_s"] for r in runs)),
                    # the references' CPU time (the output mixture's and the weight interpolation's points)
                    "references_cpu": float(sum(sr.get("references_cpu_s", 0.0) for sr in seed_results))},
    }
    if references:  # the output mixture's points (only runs that hold it carry the key)
        out["references"] = references
    return out


def _run_all(jobs_list, n_jobs, cfg, t_start, bar, per_seed_steps, log) -> tuple[list[dict], list[int], bool]:
    """Run the seeds in order on ``n_jobs`` processes; no seed starts once the wall-clock budget would be overrun.

    Returns (finished seeds' results, seeds not started for the budget, whether Ctrl-C stopped the run)."""
    results: list[dict] = []
    stopped: list[int] = []

    def done(r):
        results.append(r)
        if bar is not None and n_jobs > 1:
            bar.update(per_seed_steps)
            bar.set_postfix(seed=r["seed"])
        line = f"verl-focal demo: seed {r['seed']} finished ({len(results)} of {len(jobs_list)})"
        if hasattr(bar, "write"):  # tqdm: the line goes above the bar
            bar.write(line, file=sys.stderr)
        else:
            log(line)

    def over_budget(n_started: int) -> bool:
        if cfg.budget_s is None or not results:
            return False
        per_seed = float(np.mean([r["seconds"] for r in results]))
        # wall still needed: the seeds started but not finished, plus one more, shared out over the workers
        pending = n_started - len(results) + 1
        return time.time() - t_start + per_seed * pending / n_jobs > cfg.budget_s

    interrupted = False
    try:
        if n_jobs == 1:
            for i, job in enumerate(jobs_list):
                if over_budget(i):
                    stopped = [j["seed"] for j in jobs_list[i:]]
                    break
                done(_run_seed(job, bar))
        else:
            stopped = _run_pool(jobs_list, n_jobs, cfg, over_budget, done)
    except KeyboardInterrupt:  # Ctrl-C: keep what finished (the CLI reports it in one line)
        interrupted = True
    if stopped:
        log(f"verl-focal demo: budget of {cfg.budget_s:.0f} s reached; seeds not started: {stopped}")
    order = {j["seed"]: k for k, j in enumerate(jobs_list)}
    results.sort(key=lambda r: order[r["seed"]])
    return results, stopped, interrupted


def _run_pool(jobs_list, n_jobs, cfg, over_budget, done) -> list[int]:
    """The seeds on ``n_jobs`` spawned worker processes, one queued per worker; returns the seeds not started.

    The workers never see SIGINT (they are spawned with it blocked and inherit the mask), so a Ctrl-C reaches only
    this process, which stops them and lets the KeyboardInterrupt go up: no worker prints a traceback.  Blocked,
    not ignored: a Ctrl-C that arrives while a worker is being spawned stays pending and is raised right after."""
    import concurrent.futures as cf
    import multiprocessing as mp
    import signal

    pool = cf.ProcessPoolExecutor(n_jobs, mp_context=mp.get_context("spawn"), initializer=_init_worker,
                                  initargs=(cfg.threads,))

    def submit(job):  # a worker process is spawned on submit: it starts with SIGINT blocked
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            return pool.submit(_run_seed, job)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    stopped: list[int] = []
    try:
        pending: set = set()
        i = 0
        while i < len(jobs_list) or pending:
            # keep one seed queued per worker; start the next seed only within the budget
            while i < len(jobs_list) and len(pending) < n_jobs:
                if over_budget(i):
                    stopped = [j["seed"] for j in jobs_list[i:]]
                    i = len(jobs_list)
                    break
                pending.add(submit(jobs_list[i]))
                i += 1
            if not pending:
                break
            finished, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for f in finished:
                done(f.result())
    except BaseException:
        for proc in mp.active_children():  # the pool's workers: a seed in progress is abandoned
            proc.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return stopped
