"""What the App. J simulation runs: its configuration, presets, initial policy and N grid.

F-GRPO App. J (docs/methods.md §4).  A softmax policy over ``n_actions`` actions,
``n_correct`` of them correct (index 0 the anchor, ``1..n_correct-1`` the other
correct actions, the rest incorrect), starting from logits 5 / 3 / 0, or from
given masses (mu, tau).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch

__all__ = [
    "PAPER_GROUP_SIZES",
    "SimConfig",
    "paper_config",
    "quick_config",
    "initial_logits",
    "initial_logits_from_masses",
    "initial_masses",
    "parse_group_sizes",
]

PAPER_GROUP_SIZES: tuple[int, ...] = tuple(2**k for k in range(1, 18))  # 2 .. 131072


@dataclass(frozen=True)
class SimConfig:
    """All knobs of the App. J simulation; defaults are the paper's (docs/methods.md §4)."""

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
    objective: str = "prob"  # "prob": F-GRPO App. J (sum rt_j p_j); "logprob": REINFORCE comparison
    record_every: int = 100

    def validate(self) -> SimConfig:
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
            raise ValueError(f"objective must be 'prob' (F-GRPO App. J) or 'logprob' (REINFORCE), "
                             f"got {self.objective!r}")
        if self.record_every < 1:
            raise ValueError(f"record_every must be >= 1, got {self.record_every}")
        if self.r_correct <= self.r_wrong:
            raise ValueError(f"r_correct must exceed r_wrong, got {self.r_correct} <= {self.r_wrong}")
        initial_logits(self)  # validates mu/tau against n_correct
        return self


def paper_config(**overrides) -> SimConfig:
    """The full App. J sweep: N = 2, 4, ..., 2^17, gamma in {0, 1}, 1000 steps, 4 seeds."""
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


def initial_masses(cfg: SimConfig) -> tuple[float, float]:
    """(correct mass mu, mass of one non-anchor correct action tau) of the initial policy."""
    pi0 = torch.softmax(torch.from_numpy(initial_logits(cfg)), -1)
    tau = float(pi0[1]) if cfg.n_correct > 1 else float(pi0[0])
    return float(pi0[: cfg.n_correct].sum()), tau


def _check_power_range(tok: str, lo: int, hi: int) -> None:
    """A range LO-HI lists the powers of two from LO to HI, so both ends must be powers of two (nothing guessed).

    >>> _check_power_range("2-128", 2, 128)
    >>> _check_power_range("3-100", 3, 100)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: --n-grid 3-100: ... and 3 and 100 are not powers of two; write e.g. 4-64, or list sizes ... 3,6,12
    """
    bad = [v for v in (lo, hi) if v & (v - 1)]
    if not bad:
        return
    up, down = 1 << (lo - 1).bit_length(), 1 << (hi.bit_length() - 1)
    fix = f"{up}-{down}" if up <= down else f"{1 << (hi - 1).bit_length() >> 1 or 1}-{1 << (hi - 1).bit_length()}"
    raise ValueError(f"--n-grid {tok}: a range LO-HI lists the powers of two from LO to HI, and "
                     f"{' and '.join(map(str, bad))} {'is' if len(bad) == 1 else 'are'} not "
                     f"{'a power' if len(bad) == 1 else 'powers'} of two; write e.g. {fix}, or list sizes one by one, "
                     f"e.g. {lo},{2 * lo},{4 * lo}")


def parse_group_sizes(text: str | Sequence[str]) -> tuple[int, ...]:
    """Parse an N grid: ``"2-131072"`` (the powers of two from 2 to 131072, both ends powers of two;
    ``2..131072`` is accepted too), ``"8,16,64"`` or a list of strings."""
    import re

    parts: Iterable[str] = [text] if isinstance(text, str) else text
    out: list[int] = []
    for part in parts:
        for tok in str(part).replace(" ", ",").split(","):
            if not tok:
                continue
            rng = re.fullmatch(r"(\d+)(?:-|\.\.)(\d+)", tok)
            if rng or ".." in tok:
                if not rng:
                    raise ValueError(f"bad N range {tok!r}: expected LO-HI with integers, e.g. 2-1024")
                lo, hi = int(rng.group(1)), int(rng.group(2))
                if lo < 1 or hi < lo:
                    raise ValueError(f"bad N range {tok!r}: need 1 <= lo <= hi")
                _check_power_range(tok, lo, hi)
                k = lo
                while k <= hi:
                    out.append(k)
                    k *= 2
            else:
                try:
                    v = int(float(tok))
                except ValueError:
                    raise ValueError(f"bad group size {tok!r}: expected an integer or a range like 2-1024") from None
                if v < 1 or v != float(tok):
                    raise ValueError(f"bad group size {tok!r}: must be an integer >= 1")
                out.append(v)
    if not out:
        raise ValueError("empty N grid")
    return tuple(out)
