"""The demo experiment: SFT a tiny policy on a skewed strategy mixture, then RL it under every arm.

All settings live in :class:`DemoConfig`; :func:`preset` gives the three modes
(``default``: CPU, minutes; ``quick``: CI smoke run; ``cuda``: the scale-up).
The defaults were fixed before any arm comparison -- see docs/demo.md
"How the settings were chosen".
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from verl_focal.demo.metrics import (
    answer_logprobs,
    auc_curve,
    build_rare_set,
    correct_set,
    delta_nll,
    pass_curve,
    retained_mass,
    strategy_mass,
)
from verl_focal.demo.model import ModelSpec, build_model, build_tokenizer, sft
from verl_focal.demo.task import STRATEGIES, sft_examples, split_problems

__all__ = ["DemoConfig", "DEFAULT_ARMS", "preset", "run_experiment", "evaluate"]

#: (name, estimator, N, focal γ, cue α) -- the arms of issue 7.
DEFAULT_ARMS: tuple[tuple[str, str, int, float, float], ...] = (
    ("GRPO N=2", "grpo", 2, 0.0, 0.0),
    ("GRPO N=8", "grpo", 8, 0.0, 0.0),
    ("GRPO N=32", "grpo", 32, 0.0, 0.0),
    ("F-GRPO N=8 γ=0.5", "f_grpo", 8, 0.5, 0.0),
    ("F-GRPO N=8 γ=1", "f_grpo", 8, 1.0, 0.0),
    ("Cue-GRPO N=8", "cue_grpo", 8, 0.0, 0.8),
    ("F-Cue-GRPO N=8", "f_cue_grpo", 8, 0.5, 0.8),
)


@dataclass
class DemoConfig:
    """Every knob of the demo (defaults = the CPU default run)."""

    mode: str = "default"
    device: str = "cpu"
    threads: int = 1
    seeds: tuple[int, ...] = (0, 1, 2)
    task_seed: int = 0
    held_out_frac: float = 0.2
    prior: dict[str, float] = field(default_factory=lambda: {"add": 0.70, "sub": 0.22, "mul": 0.08})
    model: ModelSpec = field(default_factory=ModelSpec)
    sft_examples: int = 20000
    sft_steps: int = 200
    sft_batch: int = 128
    sft_lr: float = 3e-3
    rl_steps: int = 60
    prompts_per_step: int = 8
    lr: float = 1e-3
    clip_ratio: float = 0.2
    eval_samples: int = 1024
    ks: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256)
    rare_rollouts: int = 800
    rare_top_frac: float = 0.01
    arms: tuple[tuple[str, str, int, float, float], ...] = DEFAULT_ARMS

    def validate(self) -> None:
        if self.device not in ("cpu", "cuda"):
            raise ValueError(f"--device={self.device!r}: choose cpu or cuda")
        if self.device == "cuda" and not torch.cuda.is_available():
            raise ValueError("--device=cuda but torch sees no CUDA device; run with --device cpu")
        if not self.seeds:
            raise ValueError("--seeds must name at least one seed")
        if max(self.ks) > self.eval_samples:
            raise ValueError(f"pass@{max(self.ks)} needs eval_samples >= {max(self.ks)}, got {self.eval_samples}")
        for name, est, n, g, a in self.arms:
            if n < 2:
                raise ValueError(f"arm {name!r}: group size N={n} must be >= 2 for a group-relative advantage")


def preset(mode: str) -> DemoConfig:
    """The settings of ``default`` / ``quick`` / ``cuda`` (docs/demo.md lists them)."""
    if mode == "default":
        return DemoConfig()
    if mode == "quick":
        return DemoConfig(mode="quick", seeds=(0,), sft_examples=2000, sft_steps=30, sft_batch=32, rl_steps=2,
                          prompts_per_step=4, eval_samples=256, rare_rollouts=64)
    if mode == "cuda":
        return DemoConfig(mode="cuda", device="cuda", seeds=(0, 1, 2, 3, 4), model=ModelSpec(hidden=128, layers=4, heads=4, intermediate=512),
                          sft_steps=400, sft_batch=256, rl_steps=300, prompts_per_step=32, lr=3e-4)
    raise ValueError(f"unknown demo mode {mode!r}; choose default, quick or cuda")


def evaluate(model, tokenizer, train, held, base_held_logp: np.ndarray | None, rare, cfg: DemoConfig, seed: int) -> dict[str, Any]:
    """Held-out pass@k, strategy masses, retained rare-correct mass, ΔNLL_rare, train pass@1."""
    cs = correct_set(held)
    logp = answer_logprobs(model, tokenizer, cs)
    mass = strategy_mass(cs, logp)
    p = mass.sum(1)
    out: dict[str, Any] = {
        "pass_at_k": pass_curve(p, cfg.eval_samples, cfg.ks, seed=10_000 + seed),
        "auc_at_k": auc_curve(p, cfg.eval_samples, max(cfg.ks), seed=10_000 + seed),
        "p_correct_mean": float(p.mean()),
        "strategy_mass": {s: float(mass[:, i].mean()) for i, s in enumerate(STRATEGIES)},
        "unsolved_frac": float((p < 1e-3).mean()),
    }
    cs_tr = correct_set(train)
    out["train_p_correct"] = float(np.exp(answer_logprobs(model, tokenizer, cs_tr)).sum() / len(train))
    if base_held_logp is not None:
        base_mass = strategy_mass(cs, base_held_logp)
        dominant = base_mass.argmax(1)
        rare_sel = cs.strategy != dominant[cs.owner]
        out["rare_retained"] = retained_mass(np.exp(base_held_logp), np.exp(logp), rare_sel)
    if rare is not None:
        out["delta_nll_rare"] = delta_nll(model, tokenizer, rare)
    return out


def _summarise_history(h: list[dict[str, float]]) -> dict[str, float]:
    tail = h[-max(1, len(h) // 5):]
    return {
        "entropy_final": float(np.mean([x["entropy"] for x in tail])),
        "zero_adv_group_frac": float(np.mean([x["zero_adv_group_frac"] for x in h])),
        "train_acc_final": float(np.mean([x["train_acc"] for x in tail])),
        "loss_finite": bool(all(math.isfinite(x["loss"]) for x in h)),
    }


def run_experiment(cfg: DemoConfig, progress_factory=None, log=print) -> dict[str, Any]:
    """Run SFT once, then every arm × seed from the same SFT policy; return all results (JSON-ready)."""
    from verl_focal.demo.rl import Arm, RLConfig, estimator_available, train_rl  # imports verl (7-10 s)

    cfg.validate()
    torch.set_num_threads(cfg.threads)
    t_start = time.time()
    train, held = split_problems(cfg.task_seed, cfg.held_out_frac)
    tok = build_tokenizer()
    arms, skipped = [], []
    for a in cfg.arms:
        arm = Arm(name=a[0], estimator=a[1], n=a[2], focal_gamma=a[3], cue_alpha=a[4])
        if estimator_available(arm.estimator):
            arms.append(arm)
        else:  # reported in results.json and report.md, never silently dropped
            skipped.append({"arm": arm.name, "reason": f"advantage estimator {arm.estimator!r} is not registered in this install"})
            log(f"verl-focal demo: skipping arm {arm.name!r}: estimator {arm.estimator!r} is not registered")
    total = cfg.sft_steps + cfg.rl_steps * len(arms) * len(cfg.seeds)
    bar = progress_factory(total) if progress_factory else None

    base = build_model(tok, cfg.model, seed=cfg.task_seed).to(cfg.device)
    pairs = sft_examples(train, cfg.prior, cfg.sft_examples, seed=cfg.task_seed)
    if bar is not None:
        bar.set_description("SFT")
    sft_losses = sft(base, tok, pairs, cfg.sft_steps, cfg.sft_batch, cfg.sft_lr, seed=cfg.task_seed, progress=bar)
    base_held_logp = answer_logprobs(base, tok, correct_set(held))
    rare = build_rare_set(base, tok, train, cfg.rare_rollouts, cfg.rare_top_frac, seed=cfg.task_seed)
    base_eval = evaluate(base, tok, train, held, base_held_logp, rare, cfg, seed=0)
    t_sft = time.time() - t_start

    runs = []
    rl_cfg = RLConfig(steps=cfg.rl_steps, prompts_per_step=cfg.prompts_per_step, lr=cfg.lr, clip_ratio=cfg.clip_ratio)
    for seed in cfg.seeds:
        for arm in arms:
            if bar is not None:
                bar.set_description(f"seed {seed}")
            t0 = time.time()
            model = copy.deepcopy(base)
            hist = train_rl(model, tok, train, arm, rl_cfg, seed=seed, progress=bar)
            ev = evaluate(model, tok, train, held, base_held_logp, rare, cfg, seed=seed)
            ev.update(_summarise_history(hist))
            runs.append({"arm": arm.name, "estimator": arm.estimator, "n": arm.n, "focal_gamma": arm.focal_gamma,
                         "cue_alpha": arm.cue_alpha, "seed": seed, "seconds": time.time() - t0, "eval": ev,
                         "history": hist})
    if bar is not None:
        bar.close()
    cfg_json = dataclasses.asdict(cfg)
    return {
        "config": cfg_json,
        "problems": {"train": len(train), "held_out": len(held)},
        "base": {"eval": base_eval, "sft_final_loss": float(np.mean(sft_losses[-10:])),
                 "rare_set_size": len(rare.pairs), "rare_set_sampled_correct": rare.n_sampled_correct},
        "runs": runs,
        "skipped_arms": skipped,
        "seconds": {"sft_and_base_eval": t_sft, "total": time.time() - t_start},
    }
