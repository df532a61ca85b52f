"""The demo's synthetic verifiable task: "make the target with the given digit".

A problem is a pair (t, d): write one expression ``A op B`` with single digits
A, B in 0..9 and op in {+, -, *}, such that the digit d is one of the two
operands and the expression evaluates to t.  Prompt text ``T+24D3=`` (target
+24, digit 3); answers ``3*8`` or ``8*3``.

Why this task (docs/demo.md has the full argument):

* several correct strategies per problem -- the three operations are the
  strategies (``add``, ``sub``, ``mul``), the analogue of the distinct solution
  techniques that Cue-GRPO partitions (arXiv 2608.03467, Sec. 3);
* problems differ: one answer evaluates to one target and contains two digits,
  so a prompt-independent answer solves at most two of the ~300 problems;
* graded difficulty: targets > 18 are reachable only by ``mul`` and negative
  targets only by ``sub``, so how hard a problem is depends on how much
  probability the policy gives the strategies that work there.

Pure Python: no torch, no verl.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Iterable

__all__ = [
    "STRATEGIES",
    "Problem",
    "all_problems",
    "split_problems",
    "solutions",
    "verify",
    "strategy_of",
    "sft_examples",
]

#: strategy name -> operator character.  Order fixed: it is the label order.
STRATEGIES: dict[str, str] = {"add": "+", "sub": "-", "mul": "*"}
_OP_TO_STRATEGY = {v: k for k, v in STRATEGIES.items()}
_ANSWER_RE = re.compile(r"^([0-9])([+\-*])([0-9])$")
_PROMPT_RE = re.compile(r"^T([+-])([0-9]{2})D([0-9])=$")


def _apply(a: int, op: str, b: int) -> int:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    raise ValueError(f"unknown operator {op!r}; expected one of {sorted(_OP_TO_STRATEGY)}")


@dataclass(frozen=True, order=True)
class Problem:
    """One problem: reach target ``t`` with an expression using digit ``d``."""

    t: int
    d: int

    def __post_init__(self) -> None:
        if not (0 <= self.d <= 9):
            raise ValueError(f"Problem.d={self.d} must be a single digit 0..9")
        if not (-99 <= self.t <= 99):
            raise ValueError(f"Problem.t={self.t} must lie in -99..99 (two digits and a sign)")

    @property
    def prompt(self) -> str:
        """Fixed-width prompt text, e.g. ``T+24D3=``."""
        sign = "-" if self.t < 0 else "+"
        return f"T{sign}{abs(self.t):02d}D{self.d}="

    @classmethod
    def from_prompt(cls, text: str) -> "Problem":
        m = _PROMPT_RE.match(text)
        if m is None:
            raise ValueError(f"not a demo prompt: {text!r} (expected e.g. 'T+24D3=')")
        t = int(m.group(2)) * (-1 if m.group(1) == "-" else 1)
        return cls(t=t, d=int(m.group(3)))


def solutions(p: Problem) -> dict[str, list[str]]:
    """All correct answers of ``p``, grouped by strategy (every strategy key present)."""
    out: dict[str, list[str]] = {s: [] for s in STRATEGIES}
    for s, op in STRATEGIES.items():
        for a in range(10):
            for b in range(10):
                if p.d in (a, b) and _apply(a, op, b) == p.t:
                    out[s].append(f"{a}{op}{b}")
    return out


def all_problems() -> list[Problem]:
    """Every solvable (t, d), sorted: the task's whole problem set."""
    seen: set[Problem] = set()
    for d in range(10):
        for other in range(10):
            for op in STRATEGIES.values():
                for a, b in ((d, other), (other, d)):
                    seen.add(Problem(t=_apply(a, op, b), d=d))
    return sorted(seen)


def split_problems(seed: int, held_out_frac: float = 0.2) -> tuple[list[Problem], list[Problem]]:
    """Deterministic train / held-out split of :func:`all_problems` (shuffled with ``seed``)."""
    if not (0.0 < held_out_frac < 1.0):
        raise ValueError(f"held_out_frac={held_out_frac} must lie strictly between 0 and 1")
    probs = all_problems()
    rng = random.Random(seed)
    rng.shuffle(probs)
    n_held = max(1, round(held_out_frac * len(probs)))
    return sorted(probs[n_held:]), sorted(probs[:n_held])


def strategy_of(answer: str) -> str | None:
    """Strategy label of an answer text (``add``/``sub``/``mul``), or None if it is not of the form ``A op B``."""
    m = _ANSWER_RE.match(answer.strip())
    return None if m is None else _OP_TO_STRATEGY[m.group(2)]


def verify(p: Problem, answer: str) -> bool:
    """The verifier: ``answer`` is exactly ``A op B``, uses digit ``p.d`` and evaluates to ``p.t``."""
    m = _ANSWER_RE.match(answer.strip())
    if m is None:
        return False
    a, op, b = int(m.group(1)), m.group(2), int(m.group(3))
    return p.d in (a, b) and _apply(a, op, b) == p.t


def sft_examples(
    problems: Iterable[Problem], prior: dict[str, float], n: int, seed: int
) -> list[tuple[Problem, str]]:
    """Demonstrations from a teacher with a skewed strategy preference.

    Each example: draw a problem uniformly, draw a strategy from ``prior``
    (e.g. add 0.70 / sub 0.22 / mul 0.08), and keep a uniformly drawn correct
    answer of that strategy if the strategy works on the problem; otherwise
    draw again.  Problems solvable only by a rare strategy are therefore rarely
    demonstrated -- the policy fitted to this data is weak exactly where it
    needs its rare modes (the rare-correct modes of F-GRPO Sec. 3).
    """
    if set(prior) != set(STRATEGIES):
        raise ValueError(f"prior keys {sorted(prior)} must be exactly {sorted(STRATEGIES)}")
    if any(v < 0 for v in prior.values()) or sum(prior.values()) <= 0:
        raise ValueError(f"prior={prior} must be non-negative with a positive sum")
    probs = sorted(problems)
    if not probs:
        raise ValueError("sft_examples needs at least one problem")
    sols = {p: solutions(p) for p in probs}
    names = list(STRATEGIES)
    weights = [prior[s] for s in names]
    rng = random.Random(seed)
    out: list[tuple[Problem, str]] = []
    while len(out) < n:
        p = probs[rng.randrange(len(probs))]
        s = rng.choices(names, weights=weights)[0]
        if sols[p][s]:
            out.append((p, rng.choice(sols[p][s])))
    return out
