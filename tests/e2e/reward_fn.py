"""Reward for the tiny arithmetic task of the CPU end-to-end runs.

verl calls ``compute_score(data_source, solution_str, ground_truth, extra_info, **reward_kwargs)``
once per response (``reward.custom_reward_function.{path,name}``).  A dict result puts
``score`` into the token-level reward and every other key into the reward extras, which
the v1 trainer stores in TransferQueue under ``reward_extra_info``.

- ``acc``: 1.0 when the answer digit appears in the response, else 0.0 (a random tiny
  model gets roughly a third right, so groups mix right and wrong answers);
- ``score``: equal to ``acc``;
- ``pred``: the first digit of the response ("" when there is none);
- ``cue_sig``: with reward kwarg ``cue_set`` (``+reward.reward_kwargs.cue_set=math_v1``),
  the project's cue signature ``verl_focal.partition.cues.signature(text, cue_set)``
  (what Cue-GRPO's ``strategy_cue`` partitioner clusters on); without it, a coarse
  label of the cue classes the response shows among ``digits``, ``words`` and
  ``symbols``, joined in a fixed order (e.g. ``"digits+words"``, or ``"none"``).
"""

from __future__ import annotations

CUE_CLASSES = ("digits", "words", "symbols")


def cue_signature(text: str) -> str:
    """Fixed-order join of the cue classes present in ``text``; ``"none"`` if none."""
    present = {
        "digits": any(c.isdigit() for c in text),
        "words": any(c.isalpha() for c in text),
        "symbols": any(c in "+?.=" for c in text),
    }
    label = "+".join(name for name in CUE_CLASSES if present[name])
    return label or "none"


def compute_score(data_source, solution_str, ground_truth, extra_info=None, cue_set=None, **kwargs) -> dict:
    """Score one response: ``acc`` = answer digit present; see the module docstring."""
    answer = str(ground_truth).strip()
    acc = 1.0 if answer and answer in solution_str else 0.0
    digits = [c for c in solution_str if c.isdigit()]
    if cue_set:
        from verl_focal.partition.cues import signature

        sig = signature(solution_str, cue_set)
    else:
        sig = cue_signature(solution_str)
    return {"score": acc, "acc": acc, "pred": digits[0] if digits else "", "cue_sig": sig}
