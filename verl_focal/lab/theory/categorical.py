"""One-step analysis of a softmax (categorical) policy under group-relative updates.

F-GRPO §2.3/§3.2 and App. C-J (docs/methods.md §4).  The policy is ``pi = softmax(z)``
over K actions, some of them correct.  A group of N i.i.d. samples gives each action
i a count ``c_i``; every function here takes counts, never sample lists, because
the updates depend on the sample only through them.

Two update rules appear in docs/methods.md §4, both of the form

    dz_i = (eta * g / N) * pi_i * (w_i - S),   S = sum_k w_k pi_k,           (*)

i.e. gradient ascent with step ``eta`` on the surrogate ``(g/N) * sum_k w_k pi_k``:

* App. J simulation (:func:`sampled_weights` with ``kind="group"``):
  ``w_i = c_i * rt_i`` with the group-centred advantage ``rt_j = R_j - mean_k R_k``,
  i.e. ascent on ``(g/N) sum_j rt_j p_j`` over the N samples, ``g = (1-p_hat)^gamma``
  (:func:`verl_focal.core.focal.focal_weight`, the same function the estimators use).
* The BroRL-style one-step update of F-GRPO §3.2 (``kind="batch"``): ``w_i = R_i`` for every
  *distinct* sampled action, ``w_i = 0`` for unsampled ones, so
  ``S = S_R = R_c P_pos + R_w P_neg`` and unsampled actions get ``-(eta/N) S_R pi_i``.

The first-order change of the mass ``Q_A = sum_{i in A} pi_i`` of any action set A
under (*) is (our derivation; ``Q2_A = sum_{i in A} pi_i^2``)

    dQ_A = (eta g / N) * [ sum_{i in A} w_i pi_i^2 - S Q2_A - Q_A (sum_k w_k pi_k^2 - S Q2_all) ].

:func:`unsampled_correct_mass_change` (Proposition 3.2: it can be negative while
:func:`correct_mass_change` is positive) and :func:`correct_mass_change` specialise it.

All functions are pure torch, batch over leading dimensions, and never import verl.
"""

from __future__ import annotations

import torch

__all__ = [
    "group_centered_advantages",
    "sampled_weights",
    "surrogate_logit_update",
    "reinforce_logit_update",
    "first_order_mass_change",
    "correct_mass_change",
    "unsampled_correct_mass_change",
    "correct_mass_change_identity",
    "unsampled_correct_mass_change_identity",
    "exact_mass_change",
]


def _check_counts(counts: torch.Tensor, correct: torch.Tensor) -> None:
    if counts.shape[-1] != correct.shape[-1]:
        raise ValueError(
            f"counts has {counts.shape[-1]} actions but correct has {correct.shape[-1]}; "
            "both must index the same action set"
        )
    if correct.dtype != torch.bool:
        raise ValueError(f"correct must be a bool mask, got dtype {correct.dtype}")
    if torch.any(counts < 0):
        raise ValueError("counts must be >= 0 (number of times each action was sampled)")


def group_centered_advantages(
    counts: torch.Tensor, correct: torch.Tensor, r_correct: float = 1.0, r_wrong: float = -1.0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Group-centred advantages rt = R - mean(R) of a group given by per-action counts.

    docs/methods.md §4 (App. J): ``rt_j = R_j - (1/N) sum_k R_k``; no std division.

    Returns:
        ``(adv_correct, adv_wrong, p_hat)``, each of shape ``counts.shape[:-1]``: the
        advantage of any correct / incorrect sample, and the empirical success rate
        ``p_hat = X/N``.
    """
    _check_counts(counts, correct)
    n = counts.sum(-1)
    if torch.any(n <= 0):
        raise ValueError("every group needs at least one sample (counts.sum(-1) > 0)")
    x = (counts * correct).sum(-1)
    p_hat = x / n
    mean_r = r_correct * p_hat + r_wrong * (1 - p_hat)
    return r_correct - mean_r, r_wrong - mean_r, p_hat


def sampled_weights(
    counts: torch.Tensor,
    correct: torch.Tensor,
    kind: str = "group",
    r_correct: float = 1.0,
    r_wrong: float = -1.0,
) -> torch.Tensor:
    """Per-action coefficients w of the surrogate (g/N) sum_k w_k pi_k (module docstring (*)).

    ``kind="group"`` (App. J): ``w_i = c_i * rt_i`` with group-centred advantages.
    ``kind="batch"`` (docs/methods.md §4, BroRL form): ``w_i = R_i`` if action i was sampled, else 0.
    """
    _check_counts(counts, correct)
    if kind == "group":
        a_c, a_w, _ = group_centered_advantages(counts, correct, r_correct, r_wrong)
        adv = torch.where(correct, a_c.unsqueeze(-1), a_w.unsqueeze(-1))
        return counts * adv
    if kind == "batch":
        r = torch.where(correct, torch.as_tensor(r_correct, dtype=counts.dtype),
                        torch.as_tensor(r_wrong, dtype=counts.dtype))
        return torch.where(counts > 0, r, torch.zeros_like(r))
    raise ValueError(f"kind must be 'group' (App. J) or 'batch' (docs/methods.md §4 BroRL form), got {kind!r}")


def surrogate_logit_update(
    probs: torch.Tensor, weights: torch.Tensor, n: torch.Tensor | float, eta: float, g: torch.Tensor | float = 1.0
) -> torch.Tensor:
    """Logit step of ascent on (g/N) sum_k w_k pi_k: dz = (eta g/N) pi (w - <w, pi>).

    docs/methods.md §4, Eq. (*) of this module; ``probs = softmax(z)`` along the last dim.
    ``n`` and ``g`` broadcast over the leading (batch) dimensions.
    """
    n_t = torch.as_tensor(n, dtype=probs.dtype)
    g_t = torch.as_tensor(g, dtype=probs.dtype)
    s = (weights * probs).sum(-1, keepdim=True)
    scale = (eta * g_t / n_t)
    if scale.dim() > 0:
        scale = scale.unsqueeze(-1)
    return scale * probs * (weights - s)


def reinforce_logit_update(
    probs: torch.Tensor, weights: torch.Tensor, n: torch.Tensor | float, eta: float, g: torch.Tensor | float = 1.0
) -> torch.Tensor:
    """Logit step of ascent on (g/N) sum_j rt_j log p_j (REINFORCE form, not App. J's).

    ``dz = (eta g/N) (w - pi * sum_k w_k)``; with group-centred advantages ``sum_k w_k = 0``
    and the step is ``(eta g/N) c_i rt_i``.  Offered as a comparison objective.
    """
    n_t = torch.as_tensor(n, dtype=probs.dtype)
    g_t = torch.as_tensor(g, dtype=probs.dtype)
    scale = eta * g_t / n_t
    if scale.dim() > 0:
        scale = scale.unsqueeze(-1)
    return scale * (weights - probs * weights.sum(-1, keepdim=True))


def first_order_mass_change(
    probs: torch.Tensor, weights: torch.Tensor, subset: torch.Tensor, n, eta: float, g=1.0
) -> torch.Tensor:
    """First-order change of Q_A = sum_{i in A} pi_i under the surrogate update (*).

    ``dQ_A = (eta g/N)[sum_A w pi^2 - S Q2_A - Q_A (sum w pi^2 - S Q2_all)]`` (module
    docstring; equivalently ``sum_A pi_i (dz_i - <pi, dz>)``).
    """
    p2 = probs * probs
    s = (weights * probs).sum(-1)
    wp2 = weights * p2
    q_a = (probs * subset).sum(-1)
    inner_a = (wp2 * subset).sum(-1) - s * (p2 * subset).sum(-1)
    inner_all = wp2.sum(-1) - s * p2.sum(-1)
    n_t = torch.as_tensor(n, dtype=probs.dtype)
    g_t = torch.as_tensor(g, dtype=probs.dtype)
    return eta * g_t / n_t * (inner_a - q_a * inner_all)


def correct_mass_change(probs, weights, correct, n, eta, g=1.0) -> torch.Tensor:
    """First-order change of the total correct mass Q_pos (F-GRPO §3.2, docs/methods.md §4)."""
    return first_order_mass_change(probs, weights, correct, n, eta, g)


def unsampled_correct_mass_change(probs, weights, correct, counts, n, eta, g=1.0) -> torch.Tensor:
    """First-order change of the unsampled-correct mass Q_{u,pos} (F-GRPO Proposition 3.2).

    The subset is ``correct & (counts == 0)``.  It can be negative while
    :func:`correct_mass_change` is positive: the group sharpens onto what it sampled.
    """
    return first_order_mass_change(probs, weights, correct & (counts == 0), n, eta, g)


def _aggregates(probs, counts, correct):
    sampled = counts > 0
    p2 = probs * probs
    q_pos = (probs * correct).sum(-1)
    q_neg = (probs * ~correct).sum(-1)
    q_u_pos = (probs * (correct & ~sampled)).sum(-1)
    p_pos = (probs * (correct & sampled)).sum(-1)
    p_neg = (probs * (~correct & sampled)).sum(-1)
    q2 = {
        "pos": (p2 * correct).sum(-1),
        "neg": (p2 * ~correct).sum(-1),
        "s_pos": (p2 * (correct & sampled)).sum(-1),
        "s_neg": (p2 * (~correct & sampled)).sum(-1),
        "u_pos": (p2 * (correct & ~sampled)).sum(-1),
    }
    return q_pos, q_neg, q_u_pos, p_pos, p_neg, q2


def correct_mass_change_identity(probs, counts, correct, n, eta, r_correct=1.0, r_wrong=-1.0):
    """Closed form of dQ_pos for the BroRL-style update of docs/methods.md §4, first order in eta.

    With ``S_R = R_c P_pos + R_w P_neg`` and ``Q2_X`` the sum of squared probabilities over X:

        dQ_pos = (eta/N) [ Q_neg R_c Q2_{S,pos} - Q_pos R_w Q2_{S,neg}
                           - S_R (Q_neg Q2_pos - Q_pos Q2_neg) ].

    For R_c > 0 > R_w the sampled terms push correct mass up; the S_R term is the
    redistribution through the unsampled actions.
    """
    q_pos, q_neg, _, p_pos, p_neg, q2 = _aggregates(probs, counts, correct)
    s_r = r_correct * p_pos + r_wrong * p_neg
    return eta / n * (q_neg * r_correct * q2["s_pos"] - q_pos * r_wrong * q2["s_neg"]
                      - s_r * (q_neg * q2["pos"] - q_pos * q2["neg"]))


def unsampled_correct_mass_change_identity(probs, counts, correct, n, eta, r_correct=1.0, r_wrong=-1.0):
    """Closed form of dQ_{u,pos} for the BroRL-style update (Prop. 3.2; docs/methods.md §4), first order in eta.

        dQ_{u,pos} = -(eta/N) [ Q_{u,pos} (R_c Q2_{S,pos} + R_w Q2_{S,neg})
                                + S_R (Q2_{u,pos} - Q_{u,pos} Q2_all) ].
    """
    _, _, q_u_pos, p_pos, p_neg, q2 = _aggregates(probs, counts, correct)
    s_r = r_correct * p_pos + r_wrong * p_neg
    q2_all = q2["pos"] + q2["neg"]
    return -eta / n * (q_u_pos * (r_correct * q2["s_pos"] + r_wrong * q2["s_neg"])
                       + s_r * (q2["u_pos"] - q_u_pos * q2_all))


def exact_mass_change(logits: torch.Tensor, dz: torch.Tensor, subset: torch.Tensor) -> torch.Tensor:
    """Exact (all orders) change of Q_A after the logit step z -> z + dz."""
    before = (torch.softmax(logits, -1) * subset).sum(-1)
    after = (torch.softmax(logits + dz, -1) * subset).sum(-1)
    return after - before
