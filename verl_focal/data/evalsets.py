"""The evaluation sets of F-GRPO (in-domain math; OOD GPQA-Diamond, IFEval, SynLogic) and where
to find them.

The Hugging Face names are defaults for machines with network access; every set can instead be
read from a local file (``--source NAME=PATH``).  Field names are looked up in the listed order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class EvalSpec:
    """Where an evaluation set lives and which fields hold problem and answer."""

    name: str
    hf_name: str
    hf_config: str | None
    hf_split: str
    problem_fields: tuple[str, ...]
    answer_fields: tuple[str, ...]
    multiple_choice: bool = False
    kind: str = "math"  # "math" | "choice" | "ifeval" | "synlogic": which row builder and scorer


_P = ("problem", "question", "Problem", "Question")
_A = ("answer", "final_answer", "Answer", "expected_answer")

EVAL_SETS: dict[str, EvalSpec] = {
    s.name: s
    for s in [
        EvalSpec("aime24", "HuggingFaceH4/aime_2024", None, "train", _P, _A),
        EvalSpec("aime25", "math-ai/aime25", None, "test", _P, _A),
        EvalSpec("amc23", "math-ai/amc23", None, "test", _P, _A),
        EvalSpec("math500", "HuggingFaceH4/MATH-500", None, "test", _P, _A),
        EvalSpec("minerva_math", "math-ai/minervamath", None, "test", _P, _A),
        EvalSpec("olympiadbench", "math-ai/olympiadbench", None, "test", _P, _A),
        # gated on the hub: accept its terms there first
        EvalSpec("gpqa_diamond", "Idavidrein/gpqa", "gpqa_diamond", "train",
                 ("Question", "question", "problem"), ("Correct Answer", "answer"), multiple_choice=True,
                 kind="choice"),
        # the 541 prompts; the answer is the instruction list (see IFEVAL_FIELDS)
        EvalSpec("ifeval", "google/IFEval", None, "train", ("prompt",), ("instruction_id_list",), kind="ifeval"),
        # SynLogic's validation split of the "easy" config (the 7B-scale data); see docs/eval.md
        EvalSpec("synlogic", "MiniMaxAI/SynLogic", "easy", "validation", ("question", "problem", "prompt"),
                 ("answer", "ground_truth"), kind="synlogic"),
    ]
}

# Field names (first present wins) of the OOD sets' source records.
IFEVAL_FIELDS = {
    "prompt": ("prompt", "instruction", "question"),
    "instruction_id_list": ("instruction_id_list", "instruction_ids"),
    "kwargs": ("kwargs", "instruction_kwargs"),
    "key": ("key", "id"),
}
SYNLOGIC_FIELDS = {
    # a JSON string of SynLogic's Data record {question, answer, difficulty, metadata}, top level
    # or inside extra_info; when present it supplies question/answer/metadata
    "game_data": ("game_data_str", "game_data"),
    "task": ("data_source", "task", "task_name", "source"),
    "question": ("question", "problem", "prompt"),
    "answer": ("answer", "ground_truth", "solution"),
    "metadata": ("metadata",),
}

GPQA_WRONG_FIELDS = ("Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3")
LETTERS = "ABCDEFGHIJ"


def format_choices(question: str, correct: str, wrong: list[str], *, seed: int, index: int) -> tuple[str, str]:
    """(user text, gold letter) for one multiple-choice question.

    The options (correct + wrong) are shuffled with ``numpy.random.default_rng([seed, index])``,
    so the order is reproducible per row and does not depend on the other rows, then listed as
    ``A) ...`` lines under the question.
    """
    options = [correct.strip()] + [w.strip() for w in wrong]
    if len(options) > len(LETTERS):
        raise ValueError(f"{len(options)} options; at most {len(LETTERS)} are supported")
    order = np.random.default_rng([seed, index]).permutation(len(options))
    lines = [f"{LETTERS[k]}) {options[j]}" for k, j in enumerate(order)]
    gold = LETTERS[int(np.where(order == 0)[0][0])]
    return question.strip() + "\n\n" + "\n".join(lines), gold
