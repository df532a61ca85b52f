"""Versioned strategy-cue catalogues (Cue-GRPO, docs/methods.md §6 step 1).

A catalogue is data: a YAML (or JSON) file in this package, ``<cue_set>.yaml``,
or any file path given as ``algorithm.cue.cue_set``.  This module loads and
validates it; it does not match anything (see :mod:`.engine`).

The pattern dialect is the intersection of the ``regex`` module and Hyperscan, and
nothing in it may match a newline: steps are separated by newlines, so every match
lies inside one step, and the two backends then agree on which cues occur in which
step (the proof is in :mod:`.engine`).  :func:`lint_pattern` enforces the rule.
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

__all__ = ["Cue", "Catalogue", "load_catalogue", "list_cue_sets", "lint_pattern"]

_CODE = re.compile(r"^[a-z][a-z0-9_]{0,7}$")
_VERSION = re.compile(r"^[A-Za-z0-9_.-]+$")
_KINDS = ("symbolic", "natural")


@dataclass(frozen=True)
class Cue:
    """One technique cue: ``pattern`` labels a step with ``code`` when it has the highest ``priority``."""

    name: str
    code: str
    kind: str
    priority: int
    pattern: str
    generic: bool = False
    caseless: bool = False
    positive: tuple[str, ...] = ()
    negative: tuple[str, ...] = ()


@dataclass(frozen=True)
class Catalogue:
    """An ordered, validated set of cues with a version string (part of every signature)."""

    version: str
    cues: tuple[Cue, ...]
    description: str = ""

    @functools.cached_property
    def rank(self) -> tuple[int, ...]:
        """rank[i]: position of cue i when sorted by (priority, earlier-listed wins ties)."""
        order = sorted(range(len(self.cues)), key=lambda i: (self.cues[i].priority, -i))
        r = [0] * len(self.cues)
        for pos, i in enumerate(order):
            r[i] = pos
        return tuple(r)

    @functools.cached_property
    def code_index(self) -> dict[str, int]:
        return {c.code: i for i, c in enumerate(self.cues)}

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(c.code for c in self.cues)


def lint_pattern(pattern: str) -> str | None:
    """Return why ``pattern`` is outside the shared dialect, or None if it is fine.

    Rules: ASCII; no ``\\s \\W \\D \\n \\r`` (they can match a newline); every negated
    class ``[^...]`` lists ``\\n``; no anchors, backreferences or ``(?`` groups other
    than ``(?:``.  A pattern must not match the empty string (checked by the loader).
    """
    if not pattern.isascii():
        return "non-ASCII character"
    for bad in (r"\s", r"\W", r"\D", r"\n", r"\r", r"\A", r"\Z", r"\z", r"\G", r"\K", r"\Q"):
        # count only unescaped occurrences: an even run of backslashes before it means literal
        for m in re.finditer(re.escape(bad), pattern):
            k, j = 0, m.start() - 1
            while j >= 0 and pattern[j] == "\\":
                k, j = k + 1, j - 1
            if k % 2 == 0 and not (bad == r"\n" and _inside_negated_class(pattern, m.start())):
                return f"{bad} may match a newline or is unsupported by Hyperscan"
    if re.search(r"(?<!\\)(?:\\\\)*\\[1-9]", pattern):
        return "backreference"
    if re.search(r"(?<!\\)(?:\\\\)*\((?!\?:)\?", pattern):
        return "only (?:...) groups are allowed (no lookaround, inline flags or named groups)"
    if re.search(r"(?<!\\)(?:\\\\)*[\^$]", pattern.replace("[^", "[")):
        return "anchors ^ and $ are not allowed"
    for m in re.finditer(r"(?<!\\)(?:\\\\)*\[\^([^\]]*)\]", pattern):
        if r"\n" not in m.group(1):
            return "a negated class [^...] must list \\n so it cannot cross a step"
    if "." in re.sub(r"\\.|\[[^\]]*\]", "", pattern):
        return "'.' is not allowed (write an explicit class without \\n)"
    return None


def _inside_negated_class(pattern: str, pos: int) -> bool:
    start = pattern.rfind("[^", 0, pos)
    return start != -1 and pattern.find("]", start) > pos


def _as_str_tuple(v: Any, where: str) -> tuple[str, ...]:
    if v is None:
        return ()
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ValueError(f"{where}: must be a list of strings")
    return tuple(v)


def _parse(data: Any, source: str) -> Catalogue:
    import regex

    if not isinstance(data, dict) or "version" not in data or "cues" not in data:
        raise ValueError(f"cue catalogue {source}: needs top-level keys 'version' and 'cues'")
    version = str(data["version"])
    if not _VERSION.match(version):
        raise ValueError(f"cue catalogue {source}: version {version!r} must match {_VERSION.pattern}")
    if not isinstance(data["cues"], list) or not data["cues"]:
        raise ValueError(f"cue catalogue {source}: 'cues' must be a non-empty list")
    allowed = {"name", "code", "kind", "priority", "pattern", "generic", "caseless", "positive", "negative"}
    cues, names, codes = [], set(), set()
    for i, raw in enumerate(data["cues"]):
        where = f"cue catalogue {source}, cue #{i}"
        if not isinstance(raw, dict):
            raise ValueError(f"{where}: must be a mapping")
        extra = set(raw) - allowed
        if extra:
            raise ValueError(f"{where} ({raw.get('name')}): unknown keys {sorted(extra)}; allowed {sorted(allowed)}")
        for key in ("name", "code", "kind", "priority", "pattern"):
            if key not in raw:
                raise ValueError(f"{where}: missing key {key!r}")
        name, code, kind, prio, pat = raw["name"], raw["code"], raw["kind"], raw["priority"], raw["pattern"]
        where = f"cue catalogue {source}, cue {name!r}"
        if name in names:
            raise ValueError(f"{where}: duplicate name")
        if not isinstance(code, str) or not _CODE.match(code) or code in codes:
            raise ValueError(f"{where}: code {code!r} must be unique and match {_CODE.pattern}")
        if kind not in _KINDS:
            raise ValueError(f"{where}: kind {kind!r} must be one of {_KINDS}")
        if not isinstance(prio, int) or isinstance(prio, bool):
            raise ValueError(f"{where}: priority {prio!r} must be an integer")
        if not isinstance(pat, str) or not pat:
            raise ValueError(f"{where}: pattern must be a non-empty string")
        why = lint_pattern(pat)
        if why:
            raise ValueError(f"{where}: pattern {pat!r} is outside the shared regex/Hyperscan dialect: {why}")
        try:
            compiled = regex.compile(pat.encode("ascii"))
        except regex.error as e:
            raise ValueError(f"{where}: pattern {pat!r} does not compile: {e}") from None
        if compiled.fullmatch(b"") is not None:
            raise ValueError(f"{where}: pattern {pat!r} matches the empty string")
        names.add(name)
        codes.add(code)
        cues.append(
            Cue(
                name=name, code=code, kind=kind, priority=prio, pattern=pat,
                generic=bool(raw.get("generic", False)), caseless=bool(raw.get("caseless", False)),
                positive=_as_str_tuple(raw.get("positive"), f"{where}: positive"),
                negative=_as_str_tuple(raw.get("negative"), f"{where}: negative"),
            )
        )
    return Catalogue(version=version, cues=tuple(cues), description=str(data.get("description", "")))


def list_cue_sets() -> list[str]:
    """Names of the catalogues shipped in this package (``math_v1``, ...)."""
    files = resources.files(__package__)
    return sorted(p.name.rsplit(".", 1)[0] for p in files.iterdir() if p.name.endswith((".yaml", ".json")))


@functools.lru_cache(maxsize=16)
def load_catalogue(cue_set: str = "math_v1") -> Catalogue:
    """Load and validate a catalogue by packaged name (``math_v1``) or by file path (.yaml/.json)."""
    if not isinstance(cue_set, str) or not cue_set:
        raise ValueError(
            f"algorithm.cue.cue_set={cue_set!r}: give a packaged name {list_cue_sets()} or a .yaml/.json path"
        )
    if cue_set.endswith((".yaml", ".yml", ".json")) or os.sep in cue_set:
        if not os.path.isfile(cue_set):
            raise ValueError(f"algorithm.cue.cue_set={cue_set!r}: file not found")
        with open(cue_set, encoding="utf-8") as f:
            text, source = f.read(), cue_set
    else:
        names = list_cue_sets()
        if cue_set not in names:
            raise ValueError(
                f"algorithm.cue.cue_set={cue_set!r}: unknown catalogue; packaged ones are {names}, or give a file path"
            )
        files = resources.files(__package__)
        path = files / f"{cue_set}.yaml"
        if not path.is_file():
            path = files / f"{cue_set}.json"
        text, source = path.read_text(encoding="utf-8"), f"{cue_set} ({path.name})"
    if source.endswith(".json") or source.endswith(".json)"):
        data = json.loads(text)
    else:
        import yaml

        data = yaml.safe_load(text)
    return _parse(data, source)


_ESCAPED_LITERAL = set("\\.^$|?*+()[]{}-/'\"!#%&,:;<=>@`~ ")
_QUANT = set("?*+{")


def _split_top(pattern: str, sep: str = "|") -> list[str]:
    """Split at top-level ``|`` (outside groups and classes)."""
    parts, depth, cls, i, start = [], 0, False, 0, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if cls:
            cls = ch != "]"
        elif ch == "[":
            cls = True
            if pattern[i + 1 : i + 2] == "]" or pattern[i + 1 : i + 3] == "^]":
                i += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    parts.append(pattern[start:])
    return parts


def _atoms(branch: str):
    """Yield (literal_char_or_None, quantifier) for the top-level atoms of one branch."""
    i = 0
    while i < len(branch):
        ch = branch[i]
        if ch == "\\":
            nxt = branch[i + 1]
            lit = nxt if nxt in _ESCAPED_LITERAL else ({"t": "\t"}.get(nxt))
            i += 2
        elif ch == "[":
            j = i + 1
            if branch[j : j + 1] == "^":
                j += 1
            if branch[j : j + 1] == "]":
                j += 1
            j = branch.index("]", j)
            lit, i = None, j + 1
        elif ch == "(":
            depth, j = 1, i + 1
            while depth:
                c = branch[j]
                if c == "\\":
                    j += 2
                    continue
                if c == "[":
                    j = branch.index("]", j + 1 + (branch[j + 1] == "^") + 1)
                depth += {"(": 1, ")": -1}.get(c, 0)
                j += 1
            lit, i = None, j
        else:
            lit = None if ch == "." else ch
            i += 1
        q = ""
        if i < len(branch) and branch[i] in _QUANT:
            if branch[i] == "{":
                j = branch.index("}", i)
                q, i = branch[i : j + 1], j + 1
            else:
                q, i = branch[i], i + 1
            if i < len(branch) and branch[i] in "?+":  # lazy / possessive marker
                i += 1
        yield lit, q


def required_literals(pattern: str, caseless: bool) -> tuple[bytes, ...] | None:
    """A set of byte strings, one of which every match of ``pattern`` contains, or None.

    For each top-level alternative, the longest run of literal characters that the
    alternative must match (not optional, not inside a group or class).  Used by the
    regex backend to skip a cue whose literals are absent from a response: a sound
    prefilter, so it never changes a result.  Lower-cased when ``caseless``.
    """
    out = []
    for branch in _split_top(pattern):
        best, run = "", ""
        for lit, q in _atoms(branch):
            if lit is None or q in ("?", "*") or (q.startswith("{") and q[1:2] == "0"):
                best, run = max(best, run, key=len), ""
                continue
            run += lit
            if q:  # repeated: the character is required once, but the run cannot continue
                best, run = max(best, run, key=len), ""
        best = max(best, run, key=len)
        if not best:
            return None
        out.append(best.lower() if caseless else best)
    return tuple(sorted({s.encode("ascii") for s in out}))
