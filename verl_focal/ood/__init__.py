"""Out-of-domain scorers of F-GRPO's Table 1 (arXiv 2602.06717): IFEval and SynLogic.

GPQA-Diamond, the third OOD benchmark, is scored by the multiple-choice path of
:mod:`verl_focal.reward`.  Nothing here imports verl.  See ``docs/eval.md`` ("Out-of-domain
sets") for the metric each scorer matches to the paper.
"""

from __future__ import annotations

IFEVAL_SOURCE = "verl_focal/ifeval"
SYNLOGIC_SOURCE = "verl_focal/synlogic"


def ood_kind(data_source: str | None) -> str | None:
    """``"ifeval"``, ``"synlogic"`` or None for a ``data_source`` value.

    Accepted names: ``verl_focal/ifeval`` and ``ifeval``; ``verl_focal/synlogic``,
    ``synlogic`` and ``[verl_focal/]synlogic/<task>`` (the task is then read from the name).
    """
    if not isinstance(data_source, str):
        return None
    s = data_source[len("verl_focal/"):] if data_source.startswith("verl_focal/") else data_source
    if s == "ifeval":
        return "ifeval"
    if s == "synlogic" or s.startswith("synlogic/"):
        return "synlogic"
    return None
