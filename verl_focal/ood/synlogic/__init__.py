"""SynLogic scoring (Liu et al. 2025, arXiv 2505.19641): one verifier module per task.

Each task module ``verl_focal.ood.synlogic.<task>`` defines ``verify(text, answer, metadata)
-> (correct, pred)``, where ``text`` is :func:`~verl_focal.ood.synlogic._common.answer_text`
of the response, and ``answer``/``metadata`` are the task instance's gold answer and
generator metadata (the ``answer`` and ``metadata`` of SynLogic's ``Data`` records).  The
verifiers are our own; they check the same properties as the SynLogic authors' verifiers
(github.com/MiniMax-AI/SynLogic, ``games/tasks/*/scripts/*_verifier.py``), deterministically,
without ``eval``, and on bounded input.  Where the authors' check is weaker than the task
(e.g. their Game-of-24 check never compares the value with the target) we check the task.

Ground truth (``reward_model.ground_truth`` written by ``verl-focal prep-data eval --sets
synlogic``): a JSON object ``{"task": ..., "answer": ..., "metadata": {...}}``, plus
``"question"`` for the tasks whose check reads the puzzle text (``NEEDS_QUESTION``: futoshiki);
the verifier then sees it as ``metadata["question"]``.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

from verl_focal.ood import json_object
from verl_focal.ood.synlogic._common import answer_text, explicit_empty_answer

# SynLogic task name -> module under verl_focal.ood.synlogic.  "mathador" is Game of 24 with
# another target (the authors verify it with the same verifier).
TASK_MODULES: dict[str, str] = {
    "arrow_maze": "arrow_maze",
    "boolean_expressions": "boolean_expressions",
    "buggy_tables": "buggy_tables",
    "calcudoko": "calcudoko",
    "campsite": "campsite",
    "cipher": "cipher",
    "cryptarithm": "cryptarithm",
    "dyck_language": "dyck_language",
    "dyck_language_errors": "dyck_language_errors",
    "dyck_language_reasoning_errors": "dyck_language_reasoning_errors",
    "futoshiki": "futoshiki",
    "game_of_24": "game_of_24",
    "goods_exchange": "goods_exchange",
    "kukurasu": "kukurasu",
    "math_path": "math_path",
    "mathador": "game_of_24",
    "minesweeper": "minesweeper",
    "norinori": "norinori",
    "number_wall": "number_wall",
    "numbrix": "numbrix",
    "object_counting": "object_counting",
    "object_properties": "object_properties",
    "operation": "operation",
    "skyscraper_puzzle": "skyscraper_puzzle",
    "space_reasoning": "space_reasoning",
    "space_reasoning_tree": "space_reasoning_tree",
    "star_placement_puzzle": "star_placement_puzzle",
    "sudoku": "sudoku",
    "survo": "survo",
    "time_sequence": "time_sequence",
    "web_of_lies": "web_of_lies",
    "word_sorting": "word_sorting",
    "word_sorting_mistake": "word_sorting_mistake",
    "wordscapes": "wordscapes",
    "zebra_puzzle": "zebra_puzzle",
}

# SynLogic tasks without a verifier here.  Rows of these tasks are rejected by `prep-data` (or
# dropped and counted with --synlogic-skip-unverified).  Empty: all 35 tasks are covered.
TASKS_WITHOUT_VERIFIER: tuple[str, ...] = ()


class SynLogicGroundTruthError(ValueError):
    """A malformed SynLogic ground truth or an unknown task (a data preparation problem)."""


def normalize_task(name: str) -> str:
    """Task name as in :data:`TASK_MODULES`: ``verl_focal/synlogic/sudoku``, ``synlogic/sudoku``
    and ``Sudoku`` all give ``sudoku``."""
    s = str(name).strip()
    for prefix in ("verl_focal/", "synlogic/"):
        if s.startswith(prefix):
            s = s[len(prefix):]
    return s.lower().replace("-", "_").replace(" ", "_")


def verifier_module(task: str):
    """The verifier module of ``task`` (error lists the known tasks)."""
    t = normalize_task(task)
    if t not in TASK_MODULES:
        state = "has no verifier yet" if t in TASKS_WITHOUT_VERIFIER else "is not a SynLogic task"
        raise SynLogicGroundTruthError(
            f"SynLogic task {task!r} {state}; verified tasks: {', '.join(sorted(TASK_MODULES))}"
        )
    return importlib.import_module(f"verl_focal.ood.synlogic.{TASK_MODULES[t]}")


def check_gold(task: str, answer: Any, metadata: dict) -> None:
    """Raise :class:`SynLogicGroundTruthError` when the gold lacks what ``task``'s verifier reads
    (its ``REQUIRED_METADATA`` keys; a non-empty answer when ``NEEDS_ANSWER``)."""
    mod = verifier_module(task)
    missing = [k for k in getattr(mod, "REQUIRED_METADATA", ()) if k not in metadata]
    if missing:
        raise SynLogicGroundTruthError(f"SynLogic task {task!r}: metadata lacks {missing} (has {sorted(metadata)})")
    if getattr(mod, "NEEDS_QUESTION", False) and not isinstance(metadata.get("question"), str):
        raise SynLogicGroundTruthError(f"SynLogic task {task!r}: the ground truth lacks the puzzle 'question'")
    if getattr(mod, "NEEDS_ANSWER", False) and (answer is None or str(answer).strip() == ""):
        raise SynLogicGroundTruthError(f"SynLogic task {task!r}: the gold answer is empty")


def parse_ground_truth(ground_truth: Any, data_source: str | None = None) -> tuple[str, Any, dict]:
    """(task, answer, metadata) from the JSON ground truth.  The task comes from the ground
    truth's ``task`` or, failing that, from a ``synlogic/<task>`` data source."""
    gt = json_object(ground_truth, "SynLogic", "synlogic", SynLogicGroundTruthError)
    task = gt.get("task")
    if not task and data_source and "synlogic/" in data_source:
        task = data_source.rsplit("synlogic/", 1)[1]
    if not task:
        raise SynLogicGroundTruthError("SynLogic ground truth has no 'task' (and the data_source names none)")
    meta = gt.get("metadata") or {}
    if isinstance(meta, str):
        try:
            meta = json.loads(meta)
        except json.JSONDecodeError:
            raise SynLogicGroundTruthError("SynLogic 'metadata' is a string but not JSON") from None
    if not isinstance(meta, dict):
        raise SynLogicGroundTruthError(f"SynLogic 'metadata' must be an object, got {type(meta).__name__}")
    if isinstance(gt.get("question"), str):
        meta = {**meta, "question": gt["question"]}
    return normalize_task(task), gt.get("answer"), meta


def score(solution_str: str, ground_truth: Any, data_source: str | None = None) -> tuple[float, str]:
    """(acc, pred) for one response: 1.0 when the task's verifier accepts the answer.

    An empty answer text scores 0, except an explicitly empty ``<answer></answer>`` for a task whose
    prompt asks for an empty answer in some case (``ACCEPTS_EMPTY_ANSWER``: a dyck trace without
    errors).  A verifier that raises on a response scores it 0 (malformed answers are the model's fault);
    a malformed ground truth or unknown task raises :class:`SynLogicGroundTruthError`.
    """
    task, answer, meta = parse_ground_truth(ground_truth, data_source)
    check_gold(task, answer, meta)
    mod = verifier_module(task)
    text = answer_text(solution_str)
    if not text and not (getattr(mod, "ACCEPTS_EMPTY_ANSWER", False) and explicit_empty_answer(solution_str)):
        return 0.0, ""
    try:
        ok, pred = mod.verify(text, answer, meta)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, ZeroDivisionError,
            OverflowError, RecursionError, MemoryError):
        return 0.0, ""
    return (1.0 if ok else 0.0), str(pred)[:200]
