"""Out-of-domain scorers of F-GRPO's Table 1 (arXiv 2602.06717): IFEval and SynLogic.

GPQA-Diamond, the third OOD benchmark, is scored by the multiple-choice path of
:mod:`verl_focal.reward`.  Nothing here imports verl.  See ``docs/eval.md`` ("Out-of-domain
sets") for the metric each scorer matches to the paper.
"""

from __future__ import annotations

import json
from typing import Any


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


def json_object(ground_truth: Any, benchmark: str, prep_set: str, error: type[Exception]) -> dict:
    """The ground truth as a dict: a JSON string (or bytes) is parsed, a dict passes through.

    Raises ``error`` naming ``benchmark`` and, for bad JSON, the ``prep-data`` command that writes
    the file again (``--sets prep_set``)."""
    gt = ground_truth
    if isinstance(gt, (bytes, str)):
        try:
            gt = json.loads(gt)
        except json.JSONDecodeError as e:
            raise error(f"{benchmark} ground truth is not JSON ({e.msg}); re-run "
                        f"`verl-focal prep-data eval --sets {prep_set}`") from None
    if not isinstance(gt, dict):
        raise error(f"{benchmark} ground truth must be a JSON object, got {type(gt).__name__}")
    return gt
