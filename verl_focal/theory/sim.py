"""The categorical-policy simulation of F-GRPO App. J (methods spec §4).

A softmax policy over ``n_actions`` actions, ``n_correct`` of them correct (index 0
is the anchor, indices ``1..n_correct-1`` the other correct actions, the rest
incorrect), starts from logits anchor / other-correct / incorrect = 5 / 3 / 0
(correct mass ~0.63).  Each step samples a group of N actions, scores them +-1,
forms group-centred advantages ``rt_j = R_j - mean_k R_k``, weights the group by
``g = (1 - p_hat)^gamma`` and takes one gradient-ascent step of size ``eta`` on
``(g/N) sum_j rt_j p_j`` (:mod:`verl_focal.theory.categorical`).  After ``steps``
steps the retained correct mass

    M_ret(t) = 1 - sum_{a in P} max(0, pi_0(a) - pi_t(a)) / sum_{a in P} pi_0(a)

measures how much of the initial correct mass survived where it was.

Implementation: every (seed, gamma) pair of one N is a row of one batched float64
torch computation.  Sampling is by inverse CDF: per seed, a private
``torch.Generator`` draws N uniforms per step, and every gamma row of that seed
reuses them (common random numbers), so a seed's trajectory does not depend on
which other seeds or gammas run beside it, and gamma=0 vs gamma=1 differ only by
the weighting.  Only counts per action enter the update.
"""

from __future__ import annotations

import csv
import math
import os
import time
from dataclasses import dataclass, field, replace
from typing import Iterable, Sequence

import numpy as np
import torch

from . import categorical as cat
from .tail_miss import active_group_probability, tail_miss_probability

__all__ = [
    "SimConfig",
    "SimResult",
    "paper_config",
    "quick_config",
    "initial_logits",
    "initial_logits_from_masses",
    "retained_correct_mass",
    "run_simulation",
    "numpy_reference_step",
    "torch_step",
    "write_csv",
    "plot_results",
    "summarise",
]

PAPER_GROUP_SIZES: tuple[int, ...] = tuple(2**k for k in range(1, 18))  # 2 .. 131072


@dataclass(frozen=True)
class SimConfig:
    """All knobs of the App. J simulation; defaults are the paper's (methods spec §4)."""

    n_actions: int = 128_000
    n_correct: int = 10_000
    logit_anchor: float = 5.0
    logit_correct: float = 3.0
    logit_wrong: float = 0.0
    # optional override of the initial policy by masses: correct mass mu, per-action
    # mass tau of each non-anchor correct action (the anchor takes the remainder)
    mu: float | None = None
    tau: float | None = None
    r_correct: float = 1.0
    r_wrong: float = -1.0
    eta: float = 1e-2
    group_sizes: tuple[int, ...] = PAPER_GROUP_SIZES
    gammas: tuple[float, ...] = (0.0, 1.0)
    steps: int = 1000
    seeds: tuple[int, ...] = (0, 1, 2, 3)
    objective: str = "prob"  # "prob": spec App. J (sum rt_j p_j); "logprob": REINFORCE comparison
    record_every: int = 100

    def validate(self) -> "SimConfig":
        """Raise ValueError naming the bad field and the fix; return self."""
        if self.n_actions < 2:
            raise ValueError(f"n_actions must be >= 2, got {self.n_actions}")
        if not 1 <= self.n_correct < self.n_actions:
            raise ValueError(f"n_correct must be in [1, n_actions), got {self.n_correct} (n_actions={self.n_actions})")
        if (self.mu is None) != (self.tau is None):
            raise ValueError("give both mu and tau (initial policy by masses) or neither (logits 5/3/0)")
        if self.eta <= 0 or not math.isfinite(self.eta):
            raise ValueError(f"eta must be a positive finite step size, got {self.eta}")
        if not self.group_sizes or any(int(n) != n or n < 1 for n in self.group_sizes):
            raise ValueError(f"group_sizes must be a non-empty list of integers >= 1, got {self.group_sizes}")
        if not self.gammas or any(g < 0 or not math.isfinite(g) for g in self.gammas):
            raise ValueError(f"gammas must be a non-empty list of finite numbers >= 0, got {self.gammas}")
        if len(set(self.gammas)) != len(self.gammas):
            raise ValueError(f"gammas has duplicates: {self.gammas}")
        if self.steps < 1:
            raise ValueError(f"steps must be >= 1, got {self.steps}")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds) or any(s < 0 for s in self.seeds):
            raise ValueError(f"seeds must be distinct integers >= 0, got {self.seeds}")
        if self.objective not in ("prob", "logprob"):
            raise ValueError(f"objective must be 'prob' (spec App. J) or 'logprob' (REINFORCE), got {self.objective!r}")
        if self.record_every < 1:
            raise ValueError(f"record_every must be >= 1, got {self.record_every}")
        if self.r_correct <= self.r_wrong:
            raise ValueError(f"r_correct must exceed r_wrong, got {self.r_correct} <= {self.r_wrong}")
        initial_logits(self)  # validates mu/tau against n_correct
        return self


def paper_config(**overrides) -> SimConfig:
    """The full App. J sweep: N = 2..2^17, gamma in {0, 1}, 1000 steps, 4 seeds."""
    return replace(SimConfig(), **overrides).validate()


def quick_config(**overrides) -> SimConfig:
    """The ``--quick`` preset: the paper's policy, step size and gammas on a sparser run.

    N in {2, 8, 32, ..., 131072} (powers of 4 from 2: every regime has points),
    1 seed, 100 steps; under a minute on 2 cores.  M_ret moves linearly in the number of
    steps at the paper's step size, so the shape over N is already the full sweep's.
    """
    base = SimConfig(group_sizes=(2, 8, 32, 128, 512, 2048, 8192, 32768, 131072), seeds=(0,),
                     steps=100, record_every=25)
    return replace(base, **overrides).validate()


def initial_logits_from_masses(mu: float, tau: float, n_actions: int, n_correct: int) -> np.ndarray:
    """Logits of a policy with correct mass mu, each non-anchor correct action of mass tau.

    Anchor (index 0) mass ``mu - (n_correct - 1) * tau`` (must be >= tau so the anchor is
    the most likely correct action); incorrect actions share ``1 - mu`` equally.
    """
    if not 0 < mu < 1:
        raise ValueError(f"mu (initial correct mass) must lie in (0, 1), got {mu}")
    if not 0 < tau < mu:
        raise ValueError(f"tau (mass of one non-anchor correct action) must lie in (0, mu), got {tau}")
    anchor = mu - (n_correct - 1) * tau
    if anchor < tau:
        fit = int(math.floor(mu / tau))
        raise ValueError(
            f"mu={mu} cannot hold {n_correct} correct actions of mass tau={tau} plus an anchor >= tau; "
            f"use n_correct <= {max(fit, 1)} or a smaller tau"
        )
    masses = np.empty(n_actions, dtype=np.float64)
    masses[0] = anchor
    masses[1:n_correct] = tau
    masses[n_correct:] = (1 - mu) / (n_actions - n_correct)
    return np.log(masses)


def initial_logits(cfg: SimConfig) -> np.ndarray:
    """Initial logits of the App. J policy (5 / 3 / 0) or, if cfg.mu is set, from masses."""
    if cfg.mu is not None:
        return initial_logits_from_masses(cfg.mu, cfg.tau, cfg.n_actions, cfg.n_correct)
    z = np.full(cfg.n_actions, cfg.logit_wrong, dtype=np.float64)
    z[:cfg.n_correct] = cfg.logit_correct
    z[0] = cfg.logit_anchor
    return z


def retained_correct_mass(pi0, pit, n_correct: int):
    """M_ret = 1 - sum_{a in P} max(0, pi0(a) - pit(a)) / sum_{a in P} pi0(a) (F-GRPO App. J).

    The correct set P is the first ``n_correct`` actions; works on numpy arrays or
    torch tensors, batched over leading dimensions.
    """
    p0 = pi0[..., :n_correct]
    pt = pit[..., :n_correct]
    if isinstance(p0, torch.Tensor):
        loss = torch.clamp(p0 - pt, min=0).sum(-1)
    else:
        loss = np.maximum(p0 - pt, 0).sum(-1)
    return 1 - loss / p0.sum(-1)


def numpy_reference_step(z: np.ndarray, counts: np.ndarray, n_correct: int, eta: float, gamma: float,
                         r_correct: float = 1.0, r_wrong: float = -1.0) -> np.ndarray:
    """One App. J logit step for one row, written plainly in NumPy (reference for tests/bench).

    ``rt_j = R_j - mean R``; ``dz_i = (eta g / N) pi_i (c_i rt_i - sum_k c_k rt_k pi_k)``,
    ``g = (1 - p_hat)^gamma``.  Returns the new logits.
    """
    pi = np.exp(z - z.max())
    pi /= pi.sum()
    n = counts.sum()
    x = counts[:n_correct].sum()
    p_hat = x / n
    mean_r = r_correct * p_hat + r_wrong * (1 - p_hat)
    adv = np.full(z.shape, r_wrong - mean_r)
    adv[:n_correct] = r_correct - mean_r
    w = counts * adv
    g = (1 - p_hat) ** gamma if gamma > 0 else 1.0
    return z + eta * g / n * pi * (w - np.dot(w, pi))


def torch_step(z: torch.Tensor, counts: torch.Tensor, n: int, n_correct: int, eta: float,
               gammas: torch.Tensor, objective: str = "prob",
               r_correct: float = 1.0, r_wrong: float = -1.0) -> torch.Tensor:
    """Batched App. J logit step from dense counts (rows = runs); updates z in place and returns it.

    Same maths as :func:`numpy_reference_step` and
    :func:`categorical.surrogate_logit_update` / :func:`categorical.reinforce_logit_update`,
    specialised to a correct set that is an index prefix.  (The sweep itself uses the
    sparse form in :func:`_sparse_step`; tests check the two agree.)
    """
    probs = torch.softmax(z, dim=-1)
    x = counts[:, :n_correct].sum(-1)
    p_hat = x / n
    mean_r = r_correct * p_hat + r_wrong * (1 - p_hat)
    a_c = (r_correct - mean_r).unsqueeze(-1)
    a_w = (r_wrong - mean_r).unsqueeze(-1)
    w = counts.clone()
    w[:, :n_correct] *= a_c
    w[:, n_correct:] *= a_w
    g = cat.focal_group_weight(p_hat, gammas).unsqueeze(-1)
    scale = eta * g / n
    if objective == "prob":
        s = (w * probs).sum(-1, keepdim=True)
        z.add_(scale * probs * (w - s))
    else:  # logprob / REINFORCE
        z.add_(scale * (w - probs * w.sum(-1, keepdim=True)))
    return z


def _sparse_step(z: torch.Tensor, e: torch.Tensor, zsum: torch.Tensor, idx: torch.Tensor,
                 mult: torch.Tensor | None, n: int, n_correct: int, eta: float, gammas: torch.Tensor,
                 objective: str, r_correct: float, r_wrong: float) -> torch.Tensor:
    """App. J step from sampled indices and unnormalised probs ``e = exp(z - shift)``.

    ``idx`` (R, M) holds action indices, ``mult`` (R, M) how often each was drawn
    (``None``: once each, i.e. idx lists the N samples).  ``pi = e / zsum``.  The
    sampled part of the update, ``(eta g/N) c_i rt_i pi_i``, is scattered; the part
    common to every action, ``-(eta g/N) S pi`` (prob) or ``-(eta g/N) pi sum_k w_k``
    (logprob), is one fused dense pass.  Updates z in place; returns p_hat per row.
    """
    is_c = idx < n_correct
    m = torch.ones_like(idx, dtype=z.dtype) if mult is None else mult
    x = (m * is_c).sum(-1)
    p_hat = x / n
    mean_r = r_correct * p_hat + r_wrong * (1 - p_hat)
    a_c = (r_correct - mean_r).unsqueeze(-1)
    a_w = (r_wrong - mean_r).unsqueeze(-1)
    w = m * torch.where(is_c, a_c, a_w)  # c_i * rt_i per entry
    g = cat.focal_group_weight(p_hat, gammas).unsqueeze(-1)
    scale = eta * g / n  # (R, 1)
    if objective == "prob":
        pi_s = torch.gather(e, 1, idx) / zsum
        wp = w * pi_s
        s = wp.sum(-1, keepdim=True)  # S = sum_k c_k rt_k pi_k
        z.scatter_add_(1, idx, scale * wp)
        z.addcmul_(e, -(scale * s) / zsum)
    else:
        z.scatter_add_(1, idx, scale * w)
        z.addcmul_(e, -(scale * w.sum(-1, keepdim=True)) / zsum)
    return p_hat


@dataclass
class SimResult:
    """Per (N, gamma, seed) trajectories of M_ret and companions."""

    config: SimConfig
    records: list[dict] = field(default_factory=list)  # one dict per (N, gamma, seed, step)
    seconds: dict[int, float] = field(default_factory=dict)  # wall time per N

    def final(self) -> list[dict]:
        """Records of the last step only."""
        last = self.config.steps
        return [r for r in self.records if r["step"] == last]


def _seed_generator(seed: int, n: int) -> torch.Generator:
    # SeedSequence mixes (seed, N) deterministically, independent of Python's hash order.
    state = np.random.SeedSequence([int(seed), int(n)]).generate_state(2, dtype=np.uint32)
    g = torch.Generator(device="cpu")
    g.manual_seed(int(state[0]) << 32 | int(state[1]))
    return g


def _sorted_uniforms(gen: np.random.Generator, n: int) -> np.ndarray:
    """n sorted i.i.d. U(0,1) draws in O(n): normalised partial sums of n+1 exponentials.

    Sorted queries make the inverse-CDF search cache-friendly (numpy's searchsorted
    reuses the previous bracket), several times faster than unsorted ones at large n.
    """
    c = np.cumsum(gen.standard_exponential(n + 1))
    return c[:-1] / c[-1]


def _seed_generators(cfg: SimConfig, n: int) -> list[np.random.Generator]:
    """One numpy Generator per seed, seeded by (seed, N) through SeedSequence (no hash order).

    Every gamma row of a seed uses the same uniforms (common random numbers), and no
    run's stream depends on which other seeds or gammas run beside it.
    """
    return [np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(s), int(n)]))) for s in cfg.seeds]


def run_simulation(cfg: SimConfig, progress: bool = True, threads: int | None = None) -> SimResult:
    """Run the App. J sweep for every N of ``cfg.group_sizes`` (methods spec §4).

    Args:
        cfg: the configuration (validated here).
        progress: show a tqdm bar over all (N, step) pairs.
        threads: torch intra-op threads (default: leave torch's setting).

    Returns:
        :class:`SimResult` with a record per (N, gamma, seed, recorded step): M_ret,
        correct mass, anchor mass, fraction of active steps so far; wall time per N.
    """
    cfg.validate()
    if threads is not None:
        torch.set_num_threads(int(threads))
    z0 = torch.from_numpy(initial_logits(cfg))
    pi0 = torch.softmax(z0, -1)
    nc, k = cfg.n_correct, cfg.n_actions
    n_s, n_g = len(cfg.seeds), len(cfg.gammas)
    rows = n_s * n_g
    gam = torch.tensor(cfg.gammas, dtype=torch.float64).repeat(n_s)  # rows: seed-major, gamma-minor
    result = SimResult(config=cfg)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=cfg.steps * len(cfg.group_sizes), desc="App. J sim", unit="step", smoothing=0.05)
    try:
        for n in cfg.group_sizes:
            n = int(n)
            t0 = time.perf_counter()
            gens = _seed_generators(cfg, n)
            z = z0.repeat(rows, 1)
            active = torch.zeros(rows, dtype=torch.float64)
            if bar is not None:
                bar.set_postfix_str(f"N={n}")
            shift = torch.amax(z, -1, keepdim=True)
            for step in range(1, cfg.steps + 1):
                if step % 16 == 1:
                    shift = torch.amax(z, -1, keepdim=True)  # keeps exp(z - shift) <= ~1
                e = torch.exp(z - shift)
                cdf = torch.cumsum(e, -1)
                zsum = cdf[:, -1:].clone()
                cdf_np = cdf.numpy()
                idx = np.empty((rows, n), dtype=np.int64)
                for si, g in enumerate(gens):
                    u = _sorted_uniforms(g, n)
                    for r in range(si * n_g, (si + 1) * n_g):
                        idx[r] = np.searchsorted(cdf_np[r], u * cdf_np[r, -1], side="right")
                np.minimum(idx, k - 1, out=idx)
                idx_t = torch.from_numpy(idx)
                x = (idx_t < nc).sum(-1)
                active += ((x > 0) & (x < n)).to(torch.float64)
                _sparse_step(z, e, zsum, idx_t, None, n, nc, cfg.eta, gam, cfg.objective,
                             cfg.r_correct, cfg.r_wrong)
                if step % cfg.record_every == 0 or step == cfg.steps:
                    pit = torch.softmax(z, -1)
                    m = retained_correct_mass(pi0, pit, nc)
                    q = pit[:, :nc].sum(-1)
                    for row in range(rows):
                        result.records.append({
                            "n": n,
                            "gamma": cfg.gammas[row % n_g],
                            "seed": cfg.seeds[row // n_g],
                            "step": step,
                            "m_ret": float(m[row]),
                            "correct_mass": float(q[row]),
                            "anchor_mass": float(pit[row, 0]),
                            "active_fraction": float(active[row] / step),
                        })
                if bar is not None:
                    bar.update(1)
            result.seconds[n] = time.perf_counter() - t0
    finally:
        if bar is not None:
            bar.close()
    return result


def summarise(result: SimResult) -> list[dict]:
    """Mean / min / max over seeds of final M_ret per (N, gamma), sorted by N then gamma."""
    out = []
    fin = result.final()
    for n in result.config.group_sizes:
        for gm in result.config.gammas:
            vals = np.array([r["m_ret"] for r in fin if r["n"] == n and r["gamma"] == gm])
            q = np.array([r["correct_mass"] for r in fin if r["n"] == n and r["gamma"] == gm])
            out.append({"n": int(n), "gamma": gm, "m_ret_mean": float(vals.mean()), "m_ret_min": float(vals.min()),
                        "m_ret_max": float(vals.max()), "correct_mass_mean": float(q.mean())})
    return out


def initial_masses(cfg: SimConfig) -> tuple[float, float]:
    """(correct mass mu, mass of one non-anchor correct action tau) of the initial policy."""
    pi0 = torch.softmax(torch.from_numpy(initial_logits(cfg)), -1)
    tau = float(pi0[1]) if cfg.n_correct > 1 else float(pi0[0])
    return float(pi0[: cfg.n_correct].sum()), tau


def write_json(result: SimResult, path: str | os.PathLike, wall_seconds: float | None = None) -> None:
    """Write the run's configuration, per-N wall times and the summary table as JSON."""
    import json
    from dataclasses import asdict

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    meta = {
        "config": asdict(result.config),
        "seconds_per_n": {str(k): v for k, v in result.seconds.items()},
        "wall_seconds": wall_seconds,
        "torch_threads": torch.get_num_threads(),
        "summary": summarise(result),
    }
    meta["config"]["group_sizes"] = list(result.config.group_sizes)
    with open(path, "w") as f:
        json.dump(meta, f, indent=1)


def read_results(csv_path: str | os.PathLike, json_path: str | os.PathLike) -> SimResult:
    """Rebuild a :class:`SimResult` from the CSV and JSON a run wrote (e.g. to re-plot)."""
    import json

    with open(json_path) as f:
        meta = json.load(f)
    c = meta["config"]
    for key in ("group_sizes", "gammas", "seeds"):
        c[key] = tuple(c[key])
    res = SimResult(config=SimConfig(**c).validate())
    with open(csv_path, newline="") as f:
        for r in csv.DictReader(f):
            res.records.append({"n": int(r["n"]), "gamma": float(r["gamma"]), "seed": int(r["seed"]),
                                "step": int(r["step"]), "m_ret": float(r["m_ret"]),
                                "correct_mass": float(r["correct_mass"]), "anchor_mass": float(r["anchor_mass"]),
                                "active_fraction": float(r["active_fraction"])})
    res.seconds = {int(k): float(v) for k, v in meta.get("seconds_per_n", {}).items()}
    return res


def write_csv(result: SimResult, path: str | os.PathLike) -> None:
    """Write every record (N, gamma, seed, step, M_ret, ...) to a CSV file."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fields = ["n", "gamma", "seed", "step", "m_ret", "correct_mass", "anchor_mass", "active_fraction"]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in result.records:
            w.writerow({k: r[k] for k in fields})


def plot_results(result: SimResult, path: str | os.PathLike, mu: float | None = None,
                 tau: float | None = None) -> None:
    """PNG: M_ret after training vs N (one line per gamma, seed range shaded) and a tail-miss panel.

    The tail-miss panel plots P(N) and the active-group probability for the initial
    policy's (mu, tau) unless others are given.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cfg = result.config
    mu0, tau0 = initial_masses(cfg)
    mu = mu0 if mu is None else mu
    tau = tau0 if tau is None else tau
    rows = summarise(result)
    fig, (ax1, ax3, ax2) = plt.subplots(3, 1, figsize=(7.5, 10), sharex=True,
                                        gridspec_kw={"height_ratios": [3, 3, 2]})
    ns = np.array(sorted(set(cfg.group_sizes)))
    for gm in cfg.gammas:
        sel = [r for r in rows if r["gamma"] == gm]
        x = np.array([r["n"] for r in sel])
        y = np.array([r["m_ret_mean"] for r in sel])
        lo = np.array([r["m_ret_min"] for r in sel])
        hi = np.array([r["m_ret_max"] for r in sel])
        label = f"γ={gm:g}" + (" (GRPO)" if gm == 0 else " (F-GRPO)")
        ax1.plot(x, y, marker="o", label=label)
        ax1.fill_between(x, lo, hi, alpha=0.2)
        # log panel: exact zeros (no correct action lost mass) are left out of the line
        loss = np.where(1 - y > 0, 1 - y, np.nan)
        ax3.plot(x, loss, marker="o", label=label)
        ax3.fill_between(x, np.where(1 - hi > 0, 1 - hi, np.nan), np.where(1 - lo > 0, 1 - lo, np.nan), alpha=0.2)
    ax1.set_xscale("log", base=2)
    ax1.set_ylabel(f"M_ret after {cfg.steps} steps")
    ax1.ticklabel_format(axis="y", useOffset=True)
    ax1.set_title(f"Categorical simulation (F-GRPO App. J): K={cfg.n_actions}, |P|={cfg.n_correct}, "
                  f"η={cfg.eta:g}, objective={cfg.objective}, {len(cfg.seeds)} seed(s), "
                  "mean and seed range", fontsize=8)
    ax1.grid(alpha=0.3)
    ax1.legend()
    ax3.set_yscale("log")
    ax3.set_ylabel("1 - M_ret (log; 0 not drawn)")
    ax3.grid(alpha=0.3, which="both")
    ax3.legend()
    grid = np.unique(np.geomspace(1, max(ns.max(), 2), 400).round())
    ax2.plot(grid, tail_miss_probability(mu, tau, grid), label=f"tail-miss P(N), μ={mu:.3g}, τ={tau:.2g}")
    ax2.plot(grid, active_group_probability(mu, grid), ls="--", label="active group 1-μ^N-(1-μ)^N")
    ax2.set_xscale("log", base=2)
    ax2.set_xlabel("group size N")
    ax2.set_ylabel("probability")
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=130)
    plt.close(fig)


def parse_group_sizes(text: str | Sequence[str]) -> tuple[int, ...]:
    """Parse an N grid: ``"2..131072"`` (powers of two), ``"8,16,64"`` or a list of strings."""
    parts: Iterable[str] = [text] if isinstance(text, str) else text
    out: list[int] = []
    for part in parts:
        for tok in str(part).replace(" ", ",").split(","):
            if not tok:
                continue
            if ".." in tok:
                a, b = tok.split("..", 1)
                lo, hi = int(a), int(b)
                if lo < 1 or hi < lo:
                    raise ValueError(f"bad N range {tok!r}: need 1 <= lo <= hi")
                k = lo
                while k <= hi:
                    out.append(k)
                    k *= 2
            else:
                try:
                    v = int(float(tok))
                except ValueError:
                    raise ValueError(f"bad group size {tok!r}: expected an integer or a range like 2..1024") from None
                if v < 1 or v != float(tok):
                    raise ValueError(f"bad group size {tok!r}: must be an integer >= 1")
                out.append(v)
    if not out:
        raise ValueError("empty N grid")
    return tuple(out)
