"""One App. J update step, in a plain reference form and the batched forms the sweep uses.

F-GRPO App. J (docs/methods.md §4): a group of N sampled actions scored +-1 gives
group-centred advantages ``rt_j = R_j - mean_k R_k``; the step is gradient ascent of
size ``eta`` on ``(g/N) sum_j rt_j p_j`` (objective ``"prob"``) or on
``(g/N) sum_j rt_j log p_j`` (``"logprob"``, REINFORCE, for comparison), with the
focal weight ``g = (1 - p_hat)^gamma`` of :func:`verl_focal.core.focal.focal_weight`.
Only per-action counts enter the update.  Every kernel here is specialised to a
correct set that is an index prefix ``[0, n_correct)``; the general forms are in
:mod:`verl_focal.lab.theory.categorical`, and tests check that all of them agree.
"""

from __future__ import annotations

import numpy as np
import torch

from verl_focal.core.focal import focal_weight

__all__ = ["numpy_reference_step", "torch_step", "sparse_step", "dense_step"]

def numpy_reference_step(z: np.ndarray, counts: np.ndarray, n_correct: int, eta: float, gamma: float,
                         r_correct: float = 1.0, r_wrong: float = -1.0) -> np.ndarray:
    """One App. J logit step for one row, written plainly in NumPy (reference for tests/bench).

    Deliberately self-contained (it spells out ``g`` instead of calling
    :func:`~verl_focal.core.focal.focal_weight`): the tests and ``bench/theory_sim.py`` use it as
    an independent check of the batched kernels.

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
    :func:`~verl_focal.lab.theory.categorical.surrogate_logit_update` /
    :func:`~verl_focal.lab.theory.categorical.reinforce_logit_update`,
    specialised to a correct set that is an index prefix.  (The sweep itself uses the
    sparse form in :func:`sparse_step`; tests check the two agree.)
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
    g = focal_weight(p_hat, gammas).unsqueeze(-1)
    scale = eta * g / n
    if objective == "prob":
        s = (w * probs).sum(-1, keepdim=True)
        z.add_(scale * probs * (w - s))
    else:  # logprob / REINFORCE
        z.add_(scale * (w - probs * w.sum(-1, keepdim=True)))
    return z


def sparse_step(z: torch.Tensor, e: torch.Tensor, zsum: torch.Tensor, idx: torch.Tensor,
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
    g = focal_weight(p_hat, gammas).unsqueeze(-1)
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


def dense_step(z: torch.Tensor, e: torch.Tensor, zsum: torch.Tensor, counts: torch.Tensor, n: int,
                n_correct: int, eta: float, gammas: torch.Tensor, objective: str,
                r_correct: float, r_wrong: float) -> torch.Tensor:
    """Same update as :func:`sparse_step` from dense per-action counts (R, K).

    Cheaper than the sparse form once N is comparable to K (fewer passes over N-sized
    arrays).  Updates z in place; returns p_hat per row.
    """
    x = counts[:, :n_correct].sum(-1)
    p_hat = x / n
    mean_r = r_correct * p_hat + r_wrong * (1 - p_hat)
    w = counts  # reused in place: w_i = c_i * rt_i
    w[:, :n_correct] *= (r_correct - mean_r).unsqueeze(-1)
    w[:, n_correct:] *= (r_wrong - mean_r).unsqueeze(-1)
    g = focal_weight(p_hat, gammas).unsqueeze(-1)
    scale = eta * g / n
    if objective == "prob":
        s = (w * e).sum(-1, keepdim=True) / zsum  # S = sum_k w_k pi_k
        w.sub_(s)
        z.addcmul_(e, w * (scale / zsum))
    else:
        tot = w.sum(-1, keepdim=True)
        z.add_(scale * (w - e * (tot / zsum)))
    return p_hat
