"""Independent reference implementations for tests (plain Python loops over the
formulas of docs/methods.md; never the vectorised code under test)."""

from __future__ import annotations

import math

import numpy as np
import torch


def make_grouped_batch(seed: int, sizes, n_padding: int = 2, length: int = 6, reward_values=(0.0, 1.0), shuffle=True):
    """A verl-shaped outcome-reward batch: uneven groups, singletons and padding rows.

    Padding rows have their own uid, an all-zero response_mask and reward 0, as
    verl's batch balancing makes them.
    """
    rng = np.random.default_rng(seed)
    uids = [f"u{k}" for k, s in enumerate(sizes) for _ in range(s)] + [f"pad{j}" for j in range(n_padding)]
    order = rng.permutation(len(uids)) if shuffle else np.arange(len(uids))
    index = np.array([uids[i] for i in order], dtype=object)
    bs = len(index)
    lengths = rng.integers(1, length + 1, size=bs)
    mask = (torch.arange(length)[None, :] < torch.as_tensor(lengths)[:, None]).float()
    is_pad = np.array([u.startswith("pad") for u in index])
    mask[torch.as_tensor(is_pad)] = 0.0
    vals = np.asarray(reward_values, dtype=np.float32)
    r = vals[rng.integers(0, len(vals), size=bs)]
    r[is_pad] = 0.0
    rewards = torch.zeros(bs, length)
    last = torch.as_tensor(np.maximum(lengths - 1, 0))
    rewards[torch.arange(bs), last] = torch.as_tensor(r)
    rewards = rewards * mask
    return rewards, mask, index


def reference_advantages(scores, index, valid, base="grpo", gamma=0.0, correct=None, eps=1e-6):
    """Loop-based reference of docs/methods.md §1-2 (with verl's singleton conventions)."""
    scores = [float(s) for s in scores]
    valid = [bool(v) for v in valid]
    correct = [float(c) for c in correct] if correct is not None else [1.0 if s > 0.5 else 0.0 for s in scores]
    groups: dict = {}
    for i, u in enumerate(index):
        if valid[i]:
            groups.setdefault(u, []).append(i)
    out = [0.0] * len(scores)
    for rows in groups.values():
        n = len(rows)
        vals = [scores[i] for i in rows]
        mean = sum(vals) / n if n > 1 else 0.0
        if n > 1:
            std = math.sqrt(sum((v - sum(vals) / n) ** 2 for v in vals) / (n - 1))
        else:
            std = 1.0
        p_hat = sum(correct[i] for i in rows) / n
        g = 1.0 if gamma == 0 else (1.0 - p_hat) ** gamma
        for i in rows:
            if base == "grpo":
                a = (scores[i] - mean) / (std + eps)
            elif base == "drgrpo":
                a = scores[i] - mean
            else:  # rloo
                a = (scores[i] - mean) * n / (n - 1) if n > 1 else scores[i]
            out[i] = g * a
    return out
