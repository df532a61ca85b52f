"""The judge prompt (versioned) and the fair truncation of solutions.

A prompt version is frozen once released: its text is part of the cache key
(through ``prompt_version``), so changing the wording means adding a version.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = ["PROMPT_VERSIONS", "build_messages", "fair_caps", "clip_text"]


def fair_caps(lengths: Sequence[int], mean_budget: int) -> list[int]:
    """Per-solution character caps sharing a total budget ``B = n * mean_budget`` fairly.

    Water-filling: find the largest common cap ``t`` with ``sum_i min(L_i, t) <= B``.
    Solutions shorter than ``t`` are sent whole and their unused share goes to the
    longer ones, which are all cut to the same ``t`` (so no solution is favoured
    by its position, and a short solution never starves a long one).  If the
    texts fit, every cap equals the text's own length.
    """
    n = len(lengths)
    budget = n * int(mean_budget)
    if sum(lengths) <= budget:
        return list(lengths)
    remaining, left = budget, n
    cap = 0
    for length in sorted(lengths):
        share = remaining // left
        if length <= share:
            remaining -= length
            left -= 1
        else:
            cap = share
            break
    return [min(length, cap) for length in lengths]


def clip_text(text: str, cap: int) -> str:
    """Keep the first two thirds and the last third of ``cap`` characters, marking the cut.

    The opening usually names the approach and the end states the result, so
    both are kept; the marker tells the judge how much was left out.
    """
    if len(text) <= cap:
        return text
    head = (2 * cap + 2) // 3
    tail = cap - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[... {omitted} characters omitted ...]\n{text[len(text) - tail:] if tail else ''}"


_SYSTEM_V1 = (
    "You are an expert grader who sorts correct solutions of a problem by the high-level strategy "
    "they use. You answer with a single JSON object and nothing else."
)

_TASK_V1 = """\
Task: put the {n} solutions above into groups, one group per high-level strategy. Two solutions share \
a group when they rest on the same main idea or method (for example the same key substitution, the \
same case split, the same theorem, counting argument or construction). Ignore surface differences: \
notation, wording, length, order of routine algebra, small detours, and the final answer (all are correct).
A solution whose main idea differs from all the others forms a group of its own.

Answer with JSON only, in exactly this form:
{{"groups": [{{"label": "<a few words naming the strategy>", "members": [<solution numbers>]}}]}}
Every solution number from 1 to {n} must appear in exactly one group."""


def _messages_v1(problem: str | None, solutions: Sequence[str], max_chars_per_solution: int) -> list[dict]:
    solutions = [s.strip() for s in solutions]
    caps = fair_caps([len(s) for s in solutions], max_chars_per_solution)
    parts = ["Problem:", (problem or "").strip() or "(the problem statement was not provided)", ""]
    parts.append(f"Below are {len(solutions)} correct solutions, numbered 1 to {len(solutions)}.")
    for i, (text, cap) in enumerate(zip(solutions, caps), start=1):
        parts += ["", f"=== Solution {i} ===", clip_text(text, cap)]
    parts += ["", "=== End of solutions ===", "", _TASK_V1.format(n=len(solutions))]
    return [{"role": "system", "content": _SYSTEM_V1}, {"role": "user", "content": "\n".join(parts)}]


PROMPT_VERSIONS: dict[str, Callable[[str | None, Sequence[str], int], list[dict]]] = {"v1": _messages_v1}


def build_messages(
    problem: str | None, solutions: Sequence[str], max_chars_per_solution: int, prompt_version: str = "v1"
) -> list[dict]:
    """Chat messages asking the judge to group ``solutions`` (numbered from 1) by strategy."""
    try:
        builder = PROMPT_VERSIONS[prompt_version]
    except KeyError:
        raise ValueError(
            f"algorithm.cue.judge.prompt_version={prompt_version!r} is unknown; choose one of {sorted(PROMPT_VERSIONS)}"
        ) from None
    return builder(problem, list(solutions), int(max_chars_per_solution))
