"""The App. J run loop: sampling with common random numbers, the batched steps, M_ret.

Every (seed, gamma) pair of one N is a row of one batched float64 torch computation.
Sampling is by inverse CDF: per seed, a numpy Generator seeded from
``SeedSequence([seed, N])`` draws N sorted uniforms per step, and every gamma row of
that seed reuses them (common random numbers), so a seed's trajectory does not depend
on which other seeds or gammas run beside it, and gamma=0 vs gamma=1 differ only by the
weighting.  Below ``DENSE_FROM_N`` the sampled part of the update is scattered
(:func:`.kernels.sparse_step`); from it on, dense per-action counts are cheaper
(:func:`.kernels.dense_step`).  After every ``record_every`` steps the retained
correct mass

    M_ret(t) = 1 - sum_{a in P} max(0, pi_0(a) - pi_t(a)) / sum_{a in P} pi_0(a)

is recorded (F-GRPO App. J; docs/methods.md §4).
"""

from __future__ import annotations

import time

import numpy as np
import torch

from .config import SimConfig, initial_logits
from .kernels import dense_step, sparse_step
from .result import SimResult

__all__ = ["DENSE_FROM_N", "retained_correct_mass", "sorted_uniforms", "run_simulation"]

# From this N on, the update uses dense counts (see kernels.dense_step) instead of N-sized arrays.
DENSE_FROM_N = 32768


def sorted_uniforms(gen: np.random.Generator, n: int) -> np.ndarray:
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


def run_simulation(cfg: SimConfig, progress: bool = True, threads: int | None = None) -> SimResult:
    """Run the App. J sweep for every N of ``cfg.group_sizes`` (docs/methods.md §4).

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
                    u = sorted_uniforms(g, n)
                    for r in range(si * n_g, (si + 1) * n_g):
                        idx[r] = np.searchsorted(cdf_np[r], u * cdf_np[r, -1], side="right")
                np.minimum(idx, k - 1, out=idx)
                if n >= DENSE_FROM_N:
                    dense = np.stack([np.bincount(row, minlength=k) for row in idx])
                    counts = torch.from_numpy(dense.astype(np.float64))
                    x = counts[:, :nc].sum(-1)
                    active += ((x > 0) & (x < n)).to(torch.float64)
                    dense_step(z, e, zsum, counts, n, nc, cfg.eta, gam, cfg.objective, cfg.r_correct, cfg.r_wrong)
                else:
                    idx_t = torch.from_numpy(idx)
                    x = (idx_t < nc).sum(-1)
                    active += ((x > 0) & (x < n)).to(torch.float64)
                    sparse_step(z, e, zsum, idx_t, None, n, nc, cfg.eta, gam, cfg.objective,
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
