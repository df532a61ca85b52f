"""The demo's synthetic verifiable task: "reach t on a clock of M hours, using the digit d".

Clock (modular) arithmetic with M = 16 symbols ``0-9a-f``.  A problem is a pair
(t, d); an answer is one expression ``A op B`` with symbols A, B and op in
{+, -, *} such that d is one of the two operands and ``(A op B) mod M == t``.
Prompt text ``T7D3=`` (target 7, digit 3); answers ``3+4``, ``4+3``, ``3-c``,
``a-3``, ``3*d``, ``d*3`` (0xd·3 = 39 ≡ 7).

Why this task (docs/demo.md has the full argument and the design criteria):

* several correct strategies on *every* problem -- ``add`` and ``sub`` always
  work (b = t − d and b = d − t, or a = t + d, mod M); ``mul`` works when
  gcd(d, M) divides t.  The operators are the strategies, the analogue of
  the distinct solution techniques Cue-GRPO partitions (arXiv 2608.03467, Sec. 3)
  and of the routes of F-GRPO's maze testbed (arXiv 2602.06717, App. K);
* problems differ: one answer has one value and two operands, so it solves at
  most two of the 256 problems (no prompt-independent shortcut);
* a tiny answer space: a response is exactly 4 tokens ``A op B <eos>`` and a
  problem has at most a few dozen correct answers, so the probability of
  answering correctly is an exact finite sum (:mod:`verl_focal.lab.demo.metrics`).

Pure Python: no torch, no verl.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "MODULUS",
    "SYMBOLS",
    "STRATEGIES",
    "Problem",
    "all_problems",
    "split_problems",
    "solutions",
    "verify",
    "strategy_of",
    "sft_examples",
]

#: the clock size and its symbols (one token each)
MODULUS = 16
SYMBOLS = "0123456789abcdef"
_VAL = {c: i for i, c in enumerate(SYMBOLS)}
#: strategy name -> operator character.  Order fixed: it is the label order.
STRATEGIES: dict[str, str] = {"add": "+", "sub": "-", "mul": "*"}
_OP_TO_STRATEGY = {v: k for k, v in STRATEGIES.items()}
_ANSWER_RE = re.compile(r"^([0-9a-f])([+\-*])([0-9a-f])$")
_PROMPT_RE = re.compile(r"^T([0-9a-f])D([0-9a-f])=$")


def _apply(a: int, op: str, b: int) -> int:
    if op == "+":
        return (a + b) % MODULUS
    if op == "-":
        return (a - b) % MODULUS
    if op == "*":
        return (a * b) % MODULUS
    raise ValueError(f"unknown operator {op!r}; expected one of {sorted(_OP_TO_STRATEGY)}")


@dataclass(frozen=True, order=True)
class Problem:
    """One problem: reach ``t`` (mod :data:`MODULUS`) with an expression using the symbol ``d``."""

    t: int
    d: int

    def __post_init__(self) -> None:
        for name, v in (("t", self.t), ("d", self.d)):
            if not (0 <= v < MODULUS):
                raise ValueError(f"Problem.{name}={v} must lie in 0..{MODULUS - 1} (one clock symbol)")

    @property
    def prompt(self) -> str:
        """Fixed-width prompt text, e.g. ``T7D3=``."""
        return f"T{SYMBOLS[self.t]}D{SYMBOLS[self.d]}="

    @classmethod
    def from_prompt(cls, text: str) -> Problem:
        m = _PROMPT_RE.match(text)
        if m is None:
            raise ValueError(f"not a demo prompt: {text!r} (expected e.g. 'T7D3=')")
        return cls(t=_VAL[m.group(1)], d=_VAL[m.group(2)])


def _text(a: int, op: str, b: int) -> str:
    return f"{SYMBOLS[a]}{op}{SYMBOLS[b]}"


def solutions(p: Problem) -> dict[str, list[str]]:
    """All correct answers of ``p``, grouped by strategy (every strategy key present, answers sorted)."""
    out: dict[str, list[str]] = {s: [] for s in STRATEGIES}
    for s, op in STRATEGIES.items():
        found = set()
        for x in range(MODULUS):
            for a, b in ((p.d, x), (x, p.d)):
                if _apply(a, op, b) == p.t:
                    found.add(_text(a, op, b))
        out[s] = sorted(found)
    return out


def all_problems() -> list[Problem]:
    """Every (t, d), sorted: the task's whole problem set (M² = 256 problems, all solvable)."""
    return [Problem(t=t, d=d) for t in range(MODULUS) for d in range(MODULUS)]


def split_problems(seed: int, held_out_frac: float = 0.25) -> tuple[list[Problem], list[Problem]]:
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
    """The verifier: ``answer`` is exactly ``A op B``, uses symbol ``p.d`` and ``(A op B) mod M == p.t``."""
    m = _ANSWER_RE.match(answer.strip())
    if m is None:
        return False
    a, op, b = _VAL[m.group(1)], m.group(2), _VAL[m.group(3)]
    return p.d in (a, b) and _apply(a, op, b) == p.t


def sft_examples(
    problems: Iterable[Problem], prior: dict[str, float], n: int, seed: int
) -> list[tuple[Problem, str]]:
    """Demonstrations from a teacher with a skewed strategy preference.

    Each example: draw a problem uniformly, draw a strategy from ``prior``
    (e.g. add 0.65 / sub 0.27 / mul 0.08), and keep a uniformly drawn correct
    answer of that strategy if the strategy works on the problem; otherwise
    draw again.  The rare strategy is rarely demonstrated, so the policy
    fitted to this data gives it little probability: the rare-correct mode
    of F-GRPO Sec. 3.
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
