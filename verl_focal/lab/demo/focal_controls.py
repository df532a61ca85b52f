"""The focal weight taken apart (docs/demo.md, "The controls"): pure numpy, no verl import.

F-GRPO multiplies each group's GRPO advantage by w_g = (1 − p̂_g)^γ (arXiv 2602.06717, §3.3).  That does two
things at once: it makes the average advantage smaller (mean w_g < 1), and it moves the step's weight between
groups, away from the ones the policy already solves.  The lower-lr control matches the first only roughly (AdamW
divides each step by a running gradient RMS).  Each mode below keeps one of the two and takes the other away
(the mixed groups: 0 < p̂ < 1, the only groups with a nonzero GRPO advantage):

* ``shuffled`` (a control): each step's weights of the mixed groups are permuted at random among those groups:
  same multiset of weights, placed without regard to p̂; a method that beats it does so by *where* it puts the step;
* ``batch-mean`` (a control of the second round, no longer in the controls set): every mixed group gets the mean of
  the step's mixed-group weights: the same total weight, spread evenly;
* ``renormalised`` (a method, F-GRPO at GRPO's step size): the focal weights divided by their mean over the step's
  mixed groups, w_g / mean_{mixed g'} w_g': F-GRPO's allocation between groups, at a mean weight of 1.

Groups that are all right or all wrong keep their weight; their GRPO advantage is 0 either way.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MODES", "focal_weights", "rearranged_weights", "row_weights"]

#: the rearrangements, as ``Arm.focal_weights`` names them
MODES = ("shuffled", "batch-mean", "renormalised")


def focal_weights(p_hat: np.ndarray, gamma: float) -> np.ndarray:
    """F-GRPO's weight w_g = (1 − p̂_g)^γ per group (§3.3 of arXiv 2602.06717); ``p_hat``: (G,) success rates in
    [0, 1]; returns (G,) floats."""
    return (1.0 - np.asarray(p_hat, dtype=float)) ** float(gamma)


def rearranged_weights(p_hat: np.ndarray, gamma: float, mode: str, rng: np.random.Generator) -> np.ndarray:
    """The focal weights of (G,) groups with success rates ``p_hat``, rearranged over the mixed groups by
    ``mode`` (module docstring): ``shuffled`` permutes them with ``rng``; ``batch-mean`` sets each to their
    mean; ``renormalised`` divides each by their mean (``rng`` unused).  Returns (G,); the weights of groups that
    are all right or all wrong are F-GRPO's own."""
    if mode not in MODES:
        raise ValueError(f"focal weights mode {mode!r}: choose from {list(MODES)}")
    p = np.asarray(p_hat, dtype=float)
    w = focal_weights(p, gamma)
    mixed = (p > 0) & (p < 1)
    if mixed.any():
        if mode == "shuffled":
            w[mixed] = rng.permutation(w[mixed])
        elif mode == "batch-mean":
            w[mixed] = w[mixed].mean()
        else:  # renormalised: mean 1 over the mixed groups (each mixed weight is > 0, so the mean is)
            w[mixed] = w[mixed] / w[mixed].mean()
    return w


def row_weights(acc: np.ndarray, n: int, gamma: float, mode: str, rng: np.random.Generator) -> np.ndarray:
    """Per-row weights for a batch of contiguous groups of ``n`` rows (the demo's layout): p̂_g is the mean of
    the group's 0/1 ``acc``; ``acc``: (B,) with B = G·n; returns (B,), each row carrying its group's weight."""
    acc = np.asarray(acc, dtype=float)
    if acc.size % n:
        raise ValueError(f"{acc.size} rows are not groups of {n}")
    p_hat = acc.reshape(-1, n).mean(axis=1)
    return np.repeat(rearranged_weights(p_hat, gamma, mode, rng), n)
