"""Per-sample scoring time of the OOD scorers (IFEval, SynLogic) on long responses, against the
math scorer, measured in the same run.

Each response is ~8k tokens (default 32,000 characters of reasoning text, ~4 characters per
token) followed by a final answer in the format the task asks for.  Every case goes through
``verl_focal.reward.compute_score`` in the main thread (the path ``verl-focal eval score`` uses,
under its alarm); imports are paid by ``warm_up`` before timing.  Baseline: the math path on a
response of the same length ending in ``\\boxed{...}``.

Usage:  PYTHONPATH=$PWD python bench/ood_scorers.py [--chars 32000] [--reps 20]
Prints CPU milliseconds per sample (steadier than wall time on a shared machine) and the ratio
to the math scorer.  IFEval's cost is dominated by ``language:response_language`` (langdetect
reads the whole text) and ``change_case:capital_word_frequency`` (word tokenisation); the
library's checkers are used as they are.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from verl_focal.reward import compute_score, warm_up


def reasoning(chars: int, seed: int = 0) -> str:
    """Plausible-looking reasoning text (words, numbers, some LaTeX, commas, newlines)."""
    rng = random.Random(seed)
    words = ["so", "we", "have", "the", "value", "then", "check", "case", "sum", "thus", "note", "that",
             "$x^2 + 1$", "\\frac{a}{b}", "=", "12", "7", "(3, 4)", "[1, 2]", "is", "not", "correct,"]
    out, n = [], 0
    while n < chars:
        w = rng.choice(words)
        out.append(w)
        n += len(w) + 1
        if rng.random() < 0.02:
            out.append("\n")
    return " ".join(out)[:chars]


SUDOKU = [[(r * 3 + r // 3 + c) % 9 + 1 for c in range(9)] for r in range(9)]
IFEVAL_GT = json.dumps(
    {
        "instruction_id_list": [
            "punctuation:no_comma",
            "length_constraints:number_sentences",
            "change_case:capital_word_frequency",
            "language:response_language",
            "detectable_format:number_bullet_lists",
        ],
        "kwargs": [
            {},
            {"num_sentences": 5, "relation": "at least"},
            {"capital_frequency": 3, "capital_relation": "at least"},
            {"language": "en"},
            {"num_bullets": 3},
        ],
        "prompt": "p",
    }
)
# IFEval prompts carry 1.5 instructions on average; a typical pair without langdetect/word_tokenize
IFEVAL_GT_TYPICAL = json.dumps({
    "instruction_id_list": ["punctuation:no_comma", "length_constraints:number_words"],
    "kwargs": [{}, {"num_words": 300, "relation": "at least"}], "prompt": "p"})


def cases(chars: int) -> dict[str, tuple[str, str, str]]:
    body = reasoning(chars)
    syn = lambda task, answer, meta: json.dumps({"task": task, "answer": answer, "metadata": meta})  # noqa: E731
    return {
        "math (baseline)": ("verl_focal/math500", body + "\n\nThe answer is $\\boxed{\\frac{3}{4}}$.", "0.75"),
        "gpqa (multiple choice)": ("verl_focal/gpqa_diamond", body + "\n\nThe answer is \\boxed{C}.", "C"),
        "ifeval (5 instr., incl. language)": ("verl_focal/ifeval", body + "\n* one\n* two\n* three\n", IFEVAL_GT),
        "ifeval (2 instr., typical)": ("verl_focal/ifeval", body, IFEVAL_GT_TYPICAL),
        "synlogic/sudoku": ("verl_focal/synlogic", body + f"\n```python\n{SUDOKU}\n```",
                            syn("sudoku", None, {"original_sudoku": SUDOKU})),
        "synlogic/game_of_24": ("verl_focal/synlogic", body + "\n```python\n(7 - 8 / 8) * 4\n```",
                                syn("game_of_24", None, {"numbers": [4, 7, 8, 8], "operators": list("+-*/"),
                                                         "result": 24})),
        "synlogic/web_of_lies": ("verl_focal/synlogic", body + "\nThe answer is: **yes, no, yes**",
                                 syn("web_of_lies", "yes, no, yes", {})),
        "synlogic/operation (math-verify)": ("verl_focal/synlogic", body + "\n\\boxed{0.5}",
                                             syn("operation", "\\frac{1}{2}", {})),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chars", type=int, default=32_000, help="reasoning characters per response (~4 per token)")
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    cs = cases(args.chars)
    warm_up({ds for ds, _, _ in cs.values()})
    timing: dict[str, tuple[float, float, float]] = {}
    for name, (ds, resp, gt) in cs.items():
        first = compute_score(ds, resp, gt)  # also warms per-task caches
        w, c = time.perf_counter(), time.process_time()
        for _ in range(args.reps):
            out = compute_score(ds, resp, gt)
        timing[name] = ((time.perf_counter() - w) / args.reps, (time.process_time() - c) / args.reps, out["acc"])
        assert out == first, f"{name}: not deterministic"
    base_cpu = timing["math (baseline)"][1]
    print(f"response length: {args.chars} reasoning chars (~{args.chars // 4} tokens) + answer; {args.reps} reps")
    print(f"{'scorer':<34} {'cpu ms/sample':>14} {'wall ms/sample':>15} {'x math (cpu)':>13} {'acc':>5}")
    for name, (wall, cpu, acc) in timing.items():
        print(f"{name:<34} {1e3 * cpu:>14.2f} {1e3 * wall:>15.2f} {cpu / base_cpu:>13.2f} {acc:>5.1f}")


if __name__ == "__main__":
    main()
