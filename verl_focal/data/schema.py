"""verl's RL parquet schema and the papers' prompts.

One output row (what ``verl.utils.dataset.rl_dataset.RLHFDataset`` reads, ``data.prompt_key=prompt``
and ``data.reward_fn_key=data_source``)::

    data_source:  "verl_focal/<set>"            # routed to verl_focal.reward.compute_score
    prompt:       [{"role": "system", ...}, {"role": "user", "content": problem}]
    ability:      "math" | "science_mc" | "instruction_following" | "logic"
    reward_model: {"style": "rule", "ground_truth": answer}
    extra_info:   {"split", "index", "source_index", "problem", "answer", "answer_type"}

IFEval and SynLogic rows have the same columns and ``extra_info`` keys (verl concatenates the
validation files, which needs one schema); their ``ground_truth`` is a JSON string (the
instruction list and arguments; the task, answer and generator metadata): see
``verl_focal/ood/``.

``extra_info["problem"]`` is the raw problem text (the user turn without any prompt decoration),
which the Cue-GRPO judge partition and the evaluation reports read back.
"""

from __future__ import annotations

from verl_focal.reward import DATA_SOURCE_PREFIX

# F-GRPO (arXiv 2602.06717) training/evaluation system prompt, verbatim.
MATH_SYSTEM_PROMPT = "Please reason step by step, and put your final answer within \\boxed{}."
# Our multiple-choice prompt (the paper's GPQA prompt is not published): the same instruction,
# asking for the option letter so that verl_focal.reward.extract_choice can read it.
MC_SYSTEM_PROMPT = (
    "Please reason step by step, and put the letter of the correct option "
    "(for example \\boxed{A}) within \\boxed{}."
)
# F-GRPO Table 9's system prompt for the OOD sets (IFEval, SynLogic), verbatim; the question
# carries its own answer-format instructions.
OOD_SYSTEM_PROMPT = "You are a helpful assistant."
PROMPT_STYLES = ("system", "user-suffix")


def data_source(name: str) -> str:
    """``verl_focal/<name>``: the prefix keeps verl's built-in scorers from claiming the rows."""
    return DATA_SOURCE_PREFIX + name


def chat_prompt(problem: str, system_prompt: str, style: str = "system") -> list[dict]:
    """Chat messages for one problem.

    ``system``: a system turn with ``system_prompt``, then the problem as the user turn (the
    paper's "system prompt").  ``user-suffix``: one user turn, problem + blank line + prompt (for
    chat templates that ignore or reject system turns).
    """
    if style == "system":
        if not system_prompt:
            return [{"role": "user", "content": problem}]
        return [{"role": "system", "content": system_prompt}, {"role": "user", "content": problem}]
    if style == "user-suffix":
        if not system_prompt:
            return [{"role": "user", "content": problem}]
        return [{"role": "user", "content": f"{problem}\n\n{system_prompt}"}]
    raise ValueError(f"prompt style {style!r} is not one of {PROMPT_STYLES}")


def make_row(*, name: str, split: str, index: int, source_index: int, problem: str, answer: str,
             prompt: list[dict], ability: str = "math", answer_type: str = "math") -> dict:
    """One row of verl's RL parquet schema (see the module docstring)."""
    return {
        "data_source": data_source(name),
        "prompt": prompt,
        "ability": ability,
        "reward_model": {"style": "rule", "ground_truth": answer},
        "extra_info": {
            "split": split,
            "index": int(index),
            "source_index": int(source_index),
            "problem": problem,
            "answer": answer,
            "answer_type": answer_type,
        },
    }
