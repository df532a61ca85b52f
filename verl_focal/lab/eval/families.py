"""The families file of ``verl-focal eval frontier``: which runs are the reference, the controls and the methods.

A small YAML file (docs/eval.md, "eval frontier")::

    reference:                       # every family's zero point (GRPO at the recipe's settings)
      name: GRPO
      seeds: {1: grpo-s1, 2: grpo-s2}          # training seed -> run
    controls:                        # the families a method is compared with, each one knob over a fixed grid
      - family: lower lr
        knob: lr
        points:                      # in knob order, away from the reference
          - {value: 5e-7, seeds: {1: grpo-lr5e-7-s1, 2: grpo-lr5e-7-s2}}
          - {value: 0 (base model), run: base}  # one untrained run stands for every seed
    methods:
      - {name: F-GRPO γ=1, seeds: {1: fgrpo-s1, 2: fgrpo-s2}}
      - family: Cue-GRPO             # a method swept over its own knob: every point is a method, drawn as a curve
        knob: α
        points: [{value: 0.8, seeds: {...}}, {value: 1.6, seeds: {...}}]

An optional ``references`` section lists families on the control side that are neither a method nor one of the
papers' controls (the demo's output mixture and weight interpolation): their points are compared with every control
family as a method's are, every method is compared with them as with a control family, and each reference family's
points with every other reference family.

A control family with ``trained: false`` is made without training (weight interpolation of each seed's RL run with
the base model, ``eval interpolate``): its points cost an evaluation each, no training (``eval plan`` counts them so).

``seeds`` maps each training seed to the run trained with it; ``run`` names one run that stands for every seed (an
untrained policy, or the only run of a one-seed design).  A point's name is ``name`` or ``<family> <knob>=<value>``.
Everything is checked here, before any run is read: unknown keys (with a did-you-mean), a family with no point, a
point without a value, a method given one run for several seeds, seeds that differ from the reference's, a name used
twice, a run used by two points (a method's run that is also a control point's or the reference's: D would be
0 by construction; two control points may share runs only as the same policy, e.g. the base model ending two
families).  Every refusal is one :class:`~verl_focal.config.errors.InputError` line naming the file and the entry.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verl_focal.config.errors import InputError, did_you_mean

__all__ = ["ALL_SEEDS", "Policy", "Family", "Families", "load_families", "parse_families"]

#: the seed key of a run that stands for every seed (``run: NAME``)
ALL_SEEDS = None

_TOP = ("reference", "controls", "methods", "references")
_POINT = ("name", "value", "seeds", "run")
_FAMILY = ("family", "knob", "points", "trained")


@dataclass(frozen=True)
class Policy:
    """One point: ``runs[seed]`` = the run trained with that seed (``{ALL_SEEDS: run}``: one run for every seed);
    ``value``: the knob's value (family points); ``where``: the entry, for messages."""

    name: str
    runs: dict[int | None, str]
    value: str | None
    where: str
    #: False for the points of a ``trained: false`` control family (made without training); a ``run:`` point of a
    #: design over seeds is untrained too (:attr:`untrained`)
    trained: bool = True

    def run_at(self, seed: int | None) -> str:
        """The run of this policy at training seed ``seed``."""
        return self.runs[seed] if seed in self.runs else self.runs[ALL_SEEDS]

    @property
    def untrained(self) -> bool:
        """One run stands for every seed (``run: NAME``)."""
        return set(self.runs) == {ALL_SEEDS}


@dataclass(frozen=True)
class Family:
    """A knob over a grid (``control``), or a method over its own knob (a single method is a family of one); a
    ``reference`` family is on the control side (``control`` False) but compared as the module docstring says."""

    name: str
    knob: str
    control: bool
    points: tuple[Policy, ...]
    reference: bool = False


@dataclass(frozen=True)
class Families:
    source: str
    reference: Policy
    controls: tuple[Family, ...]
    methods: tuple[Family, ...]
    references: tuple[Family, ...] = ()

    @property
    def seeds(self) -> list[int | None]:
        """The reference's training seeds (``[ALL_SEEDS]`` for a one-run reference)."""
        return sorted(self.reference.runs, key=lambda s: -1 if s is None else s)

    def policies(self) -> Iterator[Policy]:
        yield self.reference
        for fam in self.controls + self.methods + self.references:
            yield from fam.points

    def runs(self) -> list[str]:
        """Every run named, once, in file order."""
        return list(dict.fromkeys(r for p in self.policies() for r in p.runs.values()))


def load_families(path: str | Path) -> Families:
    """Read and check a families file (see the module docstring); one-line :class:`InputError` on bad input."""
    import yaml

    p = Path(path)
    if not p.is_file():
        raise InputError(f"--families {p}: {'is a folder' if p.is_dir() else 'no such file'}; give the families "
                         "YAML file (docs/eval.md, 'eval frontier')")
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        where = getattr(e, "problem_mark", None)
        at = f" (line {where.line + 1})" if where is not None else ""
        raise InputError(f"{p}: not YAML{at}: {getattr(e, 'problem', e)}") from None
    return parse_families(doc, str(p))


def _keys(entry: Any, allowed: tuple[str, ...], where: str, source: str) -> dict:
    if not isinstance(entry, dict):
        raise InputError(f"{source}: {where}: expected a mapping with keys {list(allowed)}, got {entry!r}")
    for k in entry:
        if k not in allowed:
            raise InputError(f"{source}: {where}: unknown key {k!r}{did_you_mean(str(k), allowed)}; "
                             f"allowed: {', '.join(allowed)}")
    return entry


def _runs(entry: dict, where: str, source: str) -> dict[int | None, str]:
    if ("seeds" in entry) == ("run" in entry):
        raise InputError(f"{source}: {where}: give either 'seeds' (training seed -> run) or 'run' (one run for "
                         "every seed), not " + ("both" if "seeds" in entry else "neither"))
    if "run" in entry:
        if not isinstance(entry["run"], str) or not entry["run"]:
            raise InputError(f"{source}: {where}: run: {entry['run']!r} must be a run name")
        return {ALL_SEEDS: entry["run"]}
    seeds = entry["seeds"]
    if not isinstance(seeds, dict) or not seeds:
        raise InputError(f"{source}: {where}: seeds: {seeds!r} must map training seeds to runs, e.g. "
                         "{1: grpo-s1, 2: grpo-s2}")
    out: dict[int | None, str] = {}
    for s, run in seeds.items():
        if isinstance(s, bool) or not isinstance(s, int):
            raise InputError(f"{source}: {where}: seeds: {s!r} is not an integer training seed")
        if not isinstance(run, str) or not run:
            raise InputError(f"{source}: {where}: seeds: {s}: {run!r} must be a run name")
        out[s] = run
    return out


def _text(v: Any) -> str:
    return v if isinstance(v, str) else f"{v:g}" if isinstance(v, float) else str(v)


def _family(entry: Any, i: int, section: str, source: str) -> Family:
    control = section in ("controls", "references")
    if isinstance(entry, dict) and "points" not in entry and not control:  # a single method
        e = _keys(entry, _POINT, f"{section}[{i}]", source)
        if "name" not in e:
            raise InputError(f"{source}: {section}[{i}]: a method needs a 'name'")
        name = _text(e["name"])
        pol = Policy(name, _runs(e, f"{section}[{i}] {name!r}", source), None, f"method {name!r}")
        return Family(name, "", False, (pol,))
    e = _keys(entry, _FAMILY, f"{section}[{i}]", source)
    if "family" not in e:
        raise InputError(f"{source}: {section}[{i}]: a family needs a 'family' name"
                         + ("" if control else " (or give a single method as name + seeds)"))
    fam, knob = _text(e["family"]), _text(e.get("knob", "knob"))
    where = f"{section}[{i}] {fam!r}"
    trained = e.get("trained", True)
    if not isinstance(trained, bool) or (not trained and not control):
        raise InputError(f"{source}: {where}: trained: {trained!r} must be true or false"
                         + ("" if control else ", and only a control family can be made without training"))
    pts = e.get("points")
    if not pts:
        raise InputError(f"{source}: {where}: the family has no point; list its points in knob order, each with "
                         "the knob's value and its runs (value: ..., seeds: {seed: run})")
    if not isinstance(pts, list):
        raise InputError(f"{source}: {where}: points: expected a list, got {pts!r}")
    points = []
    for j, pt in enumerate(pts):
        pw = f"{where} point {j + 1}"
        p = _keys(pt, _POINT, pw, source)
        if "value" not in p:
            raise InputError(f"{source}: {pw}: needs the knob's 'value'")
        value = _text(p["value"])
        name = _text(p["name"]) if "name" in p else f"{fam} {knob}={value}"
        runs = _runs(p, pw, source)
        points.append(Policy(name, runs, value, f"{section[:-1]} {fam!r} point {knob}={value}",
                             trained))
    if section == "references":
        return Family(fam, knob, False, tuple(points), reference=True)
    return Family(fam, knob, control, tuple(points))


def parse_families(doc: Any, source: str = "families file") -> Families:
    """Check a families document (the parsed YAML) and return it as :class:`Families`."""
    doc = _keys(doc, _TOP, "top level", source)
    if "reference" not in doc:
        raise InputError(f"{source}: no 'reference': name the run(s) every family starts from (reference: "
                         "{name: GRPO, seeds: {1: grpo-s1}})")
    ref_e = _keys(doc["reference"], _POINT, "reference", source)
    ref = Policy(_text(ref_e.get("name", "reference")), _runs(ref_e, "reference", source), None, "the reference")
    sections = {}
    for section in ("controls", "methods"):
        entries = doc.get(section) or []
        if not isinstance(entries, list) or not entries:
            raise InputError(f"{source}: '{section}' must list at least one "
                             f"{'control family' if section == 'controls' else 'method'}")
        sections[section] = tuple(_family(e, i, section, source) for i, e in enumerate(entries))
    refs = doc.get("references") or []
    if not isinstance(refs, list):
        raise InputError(f"{source}: 'references' must be a list of families")
    sections["references"] = tuple(_family(e, i, "references", source) for i, e in enumerate(refs))
    fams = Families(source, ref, sections["controls"], sections["methods"], sections["references"])
    _check_seeds(fams)
    _check_shared_runs(fams)
    seen: dict[str, str] = {}
    for p in fams.policies():
        if p.name in seen:
            raise InputError(f"{source}: the name {p.name!r} is used twice ({seen[p.name]} and {p.where}); give "
                             "each point its own name")
        seen[p.name] = p.where
    return fams


def _check_seeds(fams: Families) -> None:
    """Every trained point has the reference's seeds: the comparisons pair runs by training seed."""
    ref = set(fams.reference.runs)
    shown = sorted(s for s in ref if s is not None) or "one run"
    for fam in fams.controls + fams.methods + fams.references:
        for p in fam.points:
            if p.untrained and (fam.control or fam.reference or ref == {ALL_SEEDS}):
                continue  # an untrained point (the base model) is the same policy at every seed
            if p.untrained:
                raise InputError(f"{fams.source}: {p.where} gives one run for every seed, but the reference has "
                                 f"seeds {shown}; a trained method needs one run per training seed")
            if set(p.runs) != ref:
                raise InputError(f"{fams.source}: {p.where} has seeds {sorted(p.runs)}, the reference "
                                 f"{fams.reference.name!r} has {shown}; methods and families must be trained on the "
                                 "same seeds to be paired")


def _check_shared_runs(fams: Families) -> None:
    """A run belongs to one point.  A method whose runs are the reference's or a control point's has D = 0 by
    construction, and its zero-width interval would pull the power line down; so is refused.  Two control points may
    share their runs only when they are the same policy (identical runs at every seed: the base model ending two
    families); the reference's runs are no control point's (that point would sit at (0, 0))."""
    owner: dict[str, Policy] = {}
    for p in fams.policies():
        for run in dict.fromkeys(p.runs.values()):
            first = owner.get(run)
            if first is None:
                owner[run] = p
                continue
            is_method = any(p in f.points for f in fams.methods) or any(first in f.points for f in fams.methods)
            if not is_method and first is not fams.reference and first.runs == p.runs:
                continue  # one untrained policy at the far end of two control families
            raise InputError(f"{fams.source}: run {run!r} is used by two points, {first.where} and {p.where}; each "
                             "point needs its own runs (a method on another point's runs has D = 0 by construction)")
