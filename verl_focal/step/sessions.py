"""Agent sessions with several outputs, for our estimators (v1 trainer).

verl's v1 trainer stores each output of an agent session under the key ``{uid}_{session}_{index}``
(``index`` counts the session's outputs; a multi-turn agent loop may return several) and copies the
final output's reward and reward extras onto the earlier ones.  verl's own ``grpo`` then takes the
group advantage over each session's *final* output only and gives it to every output of that
session; for every other estimator verl counts each output as a group member, so a session with
three outputs would weigh three times in its group's success rate.

Our rule, the same for all seven estimators (docs/methods.md §1): verl's final-output rule.  The
group of a prompt is its sessions, each represented by its final output (its ``acc``, text,
``cue_sig`` and old log-probs); the estimator runs on those rows, and each session's advantage is
given to all of its outputs (masked by their response masks).  A batch in which every session has
one output (single-turn loops) is computed exactly as before.

The v1 hook narrows the step's context to the final outputs
(:attr:`~verl_focal.estimators.context.AdvantageContext.sessions`), and the hook around verl's
``compute_advantage`` computes the advantage on those rows and spreads it (:func:`spread_session_advantages`).
No verl import: the DataProto is duck-typed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

__all__ = ["session_finals", "spread_session_advantages"]


def session_finals(keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray] | None:
    """``(final_rows, owner)`` for batch ``keys`` of the form ``{uid}_{session}_{index}``, or None
    when every session has a single output (or a key has another form).

    ``final_rows``: the row of each session's highest ``index``, ascending; ``owner[r]``: the
    position in ``final_rows`` of row r's session.

    >>> session_finals(["a_0_0", "a_0_1", "a_1_0", "b_0_0"])
    (array([1, 2, 3]), array([0, 0, 1, 2]))
    >>> session_finals(["a_0_0", "a_1_0"]) is None
    True
    """
    best: dict[str, tuple[int, int]] = {}
    sessions = []
    for row, key in enumerate(keys):
        parts = str(key).rsplit("_", 2)
        if len(parts) != 3 or not parts[2].isdigit():
            return None
        session, index = f"{parts[0]}_{parts[1]}", int(parts[2])
        sessions.append(session)
        if session not in best or best[session][0] < index:
            best[session] = (index, row)
    if len(best) == len(sessions):
        return None
    final_rows = np.array(sorted(row for _, row in best.values()), dtype=np.int64)
    position = {sessions[r]: i for i, r in enumerate(final_rows.tolist())}
    owner = np.array([position[s] for s in sessions], dtype=np.int64)
    return final_rows, owner


def spread_session_advantages(data: Any, sessions: tuple[np.ndarray, np.ndarray],
                               compute: Callable[[Any], Any]) -> Any:
    """The final-output rule on a DataProto ``data`` of every output (module docstring).

    ``sessions`` is ``(final_rows, owner)`` from :func:`session_finals`; ``compute(sub)`` returns ``sub``
    (the final outputs' rows, a DataProto) with ``advantages`` (bs_final, L).  Each output's advantage
    is its session's, under its own ``response_mask``; ``returns`` equal the advantages, as verl's
    outcome estimators write them.  Returns ``data``.
    """
    final_rows, owner = sessions
    sub = compute(data.select_idxs(final_rows))
    first = sub.batch["response_mask"].argmax(dim=1)  # every token of a row carries one advantage: read the first
    adv = sub.batch["advantages"]
    per_session = adv[torch.arange(len(final_rows), device=adv.device), first]
    scores = per_session[torch.as_tensor(owner, device=adv.device)].unsqueeze(-1) * data.batch["response_mask"]
    data.batch["advantages"] = scores
    data.batch["returns"] = scores
    return data
