"""Defensive reading of a judge's reply.

Rules (also in docs/judge.md):

1. **Finding the JSON.**  Text after the last ``</think>`` is searched first,
   then the whole reply.  Every ``{`` starts a decode attempt; the *last*
   top-level object carrying a ``groups`` key wins (reasoning may quote
   drafts; the final answer comes last).  Code fences and prose around it are
   ignored.  If nothing in a region decodes, that region is searched again
   with trailing commas (``[1, 2,]``, ``{...,}``) removed.  No such object -> reason
   ``malformed``; a blank reply -> ``empty``.
2. **Shapes accepted for ``groups``:** a list of ``{"label": ..., "members": [...]}``
   (``members`` may also be called ``solutions``, ``indices`` or ``ids``), a
   list of lists of numbers, or a mapping ``label -> list of numbers``.
3. **Numbers.**  Solutions are numbered from 1.  Integers, integral floats and
   strings such as ``"3"``, ``"#3"`` or ``"Solution 3"`` are read as numbers.
   If 0 appears and ``n`` does not, the whole reply is read as 0-based.
4. **Repairs.**  A number outside 1..n (or unreadable) is dropped; a solution
   listed again after its first group stays in its first group; a solution in
   no group becomes a singleton cluster.  ``damage = dropped entries +
   solutions listed twice + solutions missing``.  If no solution was placed,
   or ``damage > max_repair_fraction * n``, the reply is rejected with reason
   ``bad_indices`` (the caller then falls back); otherwise the repaired
   partition is used and counted as repaired.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import regex

from verl_focal.partition.base import canonical_labels

__all__ = ["JudgeReplyError", "JudgeParse", "parse_reply", "extract_json_object"]

_NUMBER = regex.compile(r"^\s*(?:solution\s*)?#?\s*(\d{1,6})\s*$", regex.IGNORECASE)
_MEMBER_KEYS = ("members", "solutions", "indices", "ids")
_TRAILING_COMMA = regex.compile(r",\s*([}\]])")


class JudgeReplyError(ValueError):
    """The reply could not be turned into a partition; ``reason`` names the metric bucket."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass
class JudgeParse:
    labels: list[int]  # canonical cluster label per solution (0..m-1, first appearance)
    names: list[str]  # strategy label per cluster
    dropped: int = 0
    duplicates: int = 0
    missing: int = 0
    zero_based: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def repaired(self) -> bool:
        return bool(self.dropped or self.duplicates or self.missing)


def extract_json_object(text: str) -> dict | None:
    """The last top-level JSON object with a ``groups`` key in ``text`` (see rule 1), or None."""
    regions = []
    end_think = text.rfind("</think>")
    if end_think >= 0:
        regions.append(text[end_think + len("</think>"):])
    regions.append(text)
    for region in regions:
        found = _last_groups_object(region)
        if found is None:
            relaxed = _TRAILING_COMMA.sub(r"\1", region)
            if relaxed != region:
                found = _last_groups_object(relaxed)
        if found is not None:
            return found
    return None


def _last_groups_object(region: str) -> dict | None:
    decoder = json.JSONDecoder()
    found = None
    i = region.find("{")
    while i >= 0:
        try:
            obj, end = decoder.raw_decode(region, i)
        except ValueError:
            i = region.find("{", i + 1)
            continue
        if isinstance(obj, dict) and "groups" in obj:
            found = obj
        i = region.find("{", end)
    return found


def _as_number(x: Any) -> int | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return x
    if isinstance(x, float) and x.is_integer():
        return int(x)
    if isinstance(x, str):
        m = _NUMBER.match(x)
        if m:
            return int(m.group(1))
    return None


def _groups_as_pairs(groups: Any) -> list[tuple[str, list[Any]]]:
    """Normalise the accepted shapes of ``groups`` to ``[(label, members), ...]``."""
    pairs: list[tuple[str, list[Any]]] = []
    if isinstance(groups, dict):
        for label, members in groups.items():
            pairs.append((str(label), members if isinstance(members, list) else [members]))
        return pairs
    if not isinstance(groups, list):
        raise JudgeReplyError("malformed", f"'groups' is a {type(groups).__name__}, expected a list")
    for k, g in enumerate(groups):
        if isinstance(g, list):
            pairs.append((f"group {k + 1}", g))
        elif isinstance(g, dict):
            members = next((g[key] for key in _MEMBER_KEYS if key in g), None)
            if members is None:
                raise JudgeReplyError("malformed", f"group {k + 1} has no 'members' list")
            label = g.get("label", g.get("name", g.get("strategy", f"group {k + 1}")))
            pairs.append((str(label), members if isinstance(members, list) else [members]))
        else:
            raise JudgeReplyError("malformed", f"group {k + 1} is a {type(g).__name__}, expected an object or list")
    return pairs


def parse_reply(text: str | None, n: int, max_repair_fraction: float = 0.5) -> JudgeParse:
    """Turn a judge reply into one cluster label per solution (rules in the module docstring).

    Raises :class:`JudgeReplyError` with ``reason`` in {empty, malformed, bad_indices}.
    """
    if text is None or not str(text).strip():
        raise JudgeReplyError("empty", "the judge returned no text")
    obj = extract_json_object(str(text))
    if obj is None:
        raise JudgeReplyError("malformed", "no JSON object with a 'groups' key in the reply")
    pairs = _groups_as_pairs(obj["groups"])

    numbers = [[_as_number(m) for m in members] for _, members in pairs]
    flat = [x for ms in numbers for x in ms if x is not None]
    zero_based = 0 in flat and n not in flat
    shift = 1 if zero_based else 0

    owner: dict[int, int] = {}  # solution (0-based) -> group position
    dropped = 0
    twice: set[int] = set()
    for gpos, ms in enumerate(numbers):
        for x in ms:
            if x is None or not 1 <= x + shift <= n:
                dropped += 1
                continue
            j = x + shift - 1
            if j in owner:
                if owner[j] != gpos:
                    twice.add(j)
                continue  # a repeat inside the same group is harmless
            owner[j] = gpos
    missing = [j for j in range(n) if j not in owner]
    damage = dropped + len(twice) + len(missing)
    if not owner:
        raise JudgeReplyError("bad_indices", f"no solution number in 1..{n} was placed in a group")
    if damage > max_repair_fraction * n:
        raise JudgeReplyError(
            "bad_indices",
            f"{dropped} invalid entries, {len(twice)} solutions in two groups, {len(missing)} missing "
            f"(damage {damage} > {max_repair_fraction} x {n})",
        )
    raw = [owner[j] if j in owner else len(pairs) + j for j in range(n)]
    labels = canonical_labels(raw)
    names: list[str] = []
    for j in range(n):
        if labels[j] == len(names):
            names.append(pairs[owner[j]][0] if j in owner else "(unassigned)")
    return JudgeParse(labels, names, dropped, len(twice), len(missing), zero_based)
