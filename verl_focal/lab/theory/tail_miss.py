"""Tail-miss probability of a sampled group (F-GRPO Lemma 3.1, docs/methods.md §3).

A prompt's policy puts mass ``mu`` on correct answers; a rare-correct subset of the
correct set has mass ``tau <= mu``.  A group of ``n`` i.i.d. rollouts *tail-misses*
when it is **active** (it mixes correct and incorrect rollouts, so GRPO updates on
it) and yet contains **no** rollout from the rare subset:

    P(n) = (1 - tau)^n - (mu - tau)^n - (1 - mu)^n.

Numerics.  Writing ``a = (mu - tau)/(1 - tau)`` and ``b = (1 - mu)/(1 - tau)``
(so ``a + b = 1``) gives

    P(n) = (1 - tau)^n * (1 - a^n - b^n).

With ``s = min(a, b)`` the bracket is ``-expm1(n*log1p(-s)) - s^n``: both terms are
computed to full relative precision, and the prefactor lives in log space as
``n*log1p(-tau)``.  So the value stays accurate where the raw powers round to
equal numbers or underflow (n up to 1e6 and beyond), and
:func:`log_tail_miss_probability` stays finite even where ``P`` itself underflows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "tail_miss_probability",
    "log_tail_miss_probability",
    "active_group_probability",
    "tail_miss_argmax",
    "TailMissPeak",
    "SPEC_ARGMAX_TABLE",
]

# (mu, rho = tau/mu) -> argmax N, as printed in the F-GRPO paper (docs/methods.md §3).
SPEC_ARGMAX_TABLE: tuple[tuple[float, float, int], ...] = (
    (0.5, 0.05, 6),
    (0.8, 0.05, 8),
    (0.8, 0.01, 15),
    (0.2, 0.01, 21),
)


def _validate(mu, tau, n):
    mu = np.asarray(mu, dtype=np.float64)
    tau = np.asarray(tau, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if np.any(~np.isfinite(mu)) or np.any((mu < 0) | (mu > 1)):
        raise ValueError(f"mu (correct mass) must lie in [0, 1], got {mu!r}")
    if np.any(~np.isfinite(tau)) or np.any(tau < 0):
        raise ValueError(f"tau (rare-correct mass) must be >= 0, got {tau!r}")
    if np.any(tau > mu):
        raise ValueError(
            f"tau (rare-correct mass) must not exceed mu (correct mass): got tau={tau!r}, mu={mu!r}; "
            "the rare subset is part of the correct set"
        )
    if np.any(~np.isfinite(n)) or np.any(n < 0):
        raise ValueError(f"n (group size) must be a finite number >= 0, got {n!r}")
    return np.broadcast_arrays(mu, tau, n)


def _log_prefactor_and_bracket(mu, tau, n):
    """Return (n*log(1-tau), 1 - a^n - b^n) elementwise, see the module docstring."""
    with np.errstate(divide="ignore", invalid="ignore"):
        one_minus_tau = 1.0 - tau
        # tau == 1 forces mu == 1: P = 0 for every n >= 1; handled by the bracket (s = 0).
        safe = np.where(one_minus_tau > 0, one_minus_tau, 1.0)
        a = (mu - tau) / safe
        b = (1.0 - mu) / safe
        s = np.clip(np.minimum(a, b), 0.0, 0.5)
        one_minus_l_pow = -np.expm1(n * np.log1p(-s))  # 1 - (1 - s)^n
        s_pow = np.where(s > 0, np.exp(n * np.log(np.where(s > 0, s, 1.0))), np.where(n == 0, 1.0, 0.0))
        bracket = one_minus_l_pow - s_pow
        # n <= 1 gives exactly 0 (n=1: a + b - 1 = 0; n=0: 1 - 1 - 1 < 0 is not a probability).
        bracket = np.where(n <= 1, 0.0, np.maximum(bracket, 0.0))
        bracket = np.where(one_minus_tau > 0, bracket, 0.0)
        log_pref = n * np.log1p(-np.where(one_minus_tau > 0, tau, 0.0))
    return log_pref, bracket


def tail_miss_probability(mu, tau, n):
    """P(group of size n is active and misses the rare-correct subset), F-GRPO Lemma 3.1.

    ``P(n) = (1-tau)^n - (mu-tau)^n - (1-mu)^n`` (docs/methods.md §3), evaluated stably.

    Args:
        mu: correct mass in [0, 1] (array-like, broadcast).
        tau: rare-correct mass, ``0 <= tau <= mu``.
        n: group size (>= 0; integers in practice, reals are accepted).

    Returns:
        ``np.ndarray`` (0-d for scalar inputs) of probabilities in [0, 1].
        ``P(0) = P(1) = 0``.

    Raises:
        ValueError: naming the offending argument when it is out of range.
    """
    mu, tau, n = _validate(mu, tau, n)
    log_pref, bracket = _log_prefactor_and_bracket(mu, tau, n)
    return np.exp(log_pref) * bracket


def log_tail_miss_probability(mu, tau, n):
    """Natural log of :func:`tail_miss_probability` (F-GRPO Lemma 3.1), finite where P underflows.

    ``log P(n) = n*log1p(-tau) + log(1 - a^n - b^n)``; ``-inf`` where ``P == 0`` exactly.
    """
    mu, tau, n = _validate(mu, tau, n)
    log_pref, bracket = _log_prefactor_and_bracket(mu, tau, n)
    with np.errstate(divide="ignore"):
        return log_pref + np.log(bracket)


def active_group_probability(mu, n):
    """P(group of size n mixes correct and incorrect rollouts) = 1 - mu^n - (1-mu)^n.

    Only such groups carry a GRPO signal under binary rewards (docs/methods.md §1-§3);
    it is the tail-miss probability with an empty rare subset (tau = 0).
    """
    return tail_miss_probability(mu, 0.0, n)


@dataclass(frozen=True)
class TailMissPeak:
    """Integer group size maximising the tail-miss probability, and the maximum."""

    n: int
    probability: float


def tail_miss_argmax(mu: float, tau: float, n_max: int = 10**8) -> TailMissPeak:
    """argmax over integer N >= 1 of the tail-miss probability P(N) (F-GRPO §3, argmax table).

    P(1) = 0, P rises, peaks once and decays like (1-tau)^N.  The search doubles N
    until P(2^k) <= P(2^(k-1)) (the peak then lies in [2^(k-2), 2^k]) and scans
    every integer of that bracket; ties go to the smaller N.

    Raises:
        ValueError: for out-of-range arguments, for a degenerate case where P is 0
            for every N (tau == mu, mu in {0, 1}), or when no peak lies below ``n_max``.
    """
    mu_f, tau_f = float(mu), float(tau)
    _validate(mu_f, tau_f, 1)
    if tau_f >= mu_f or mu_f >= 1.0 or mu_f <= 0.0:
        raise ValueError(
            f"tail-miss probability is 0 for every N when tau >= mu, mu == 0 or mu == 1 "
            f"(got mu={mu_f}, tau={tau_f}); there is no peak"
        )
    prev = float(tail_miss_probability(mu_f, tau_f, 1))
    k = 1
    while True:
        n = 2**k
        if n > n_max:
            raise ValueError(
                f"no tail-miss peak below n_max={n_max} for mu={mu_f}, tau={tau_f}; raise n_max"
            )
        cur = float(tail_miss_probability(mu_f, tau_f, n))
        if cur <= prev and k >= 2:
            break
        prev = cur
        k += 1
    lo, hi = max(1, 2 ** (k - 2)), 2**k
    grid = np.arange(lo, hi + 1, dtype=np.float64)
    # compare in log space: exact ordering even where P underflows to 0
    logp = log_tail_miss_probability(mu_f, tau_f, grid)
    i = int(np.argmax(logp))
    return TailMissPeak(n=int(grid[i]), probability=float(np.exp(logp[i])))
