"""``verl-focal eval families``: the families file of ``eval frontier``, written from run folders named as the recipes
name them, so nobody writes it by hand.

A recipe names its run ``<recipe>_<model tag>_n<N>_s<SEED>`` (recipes/lib/common.sh, ``EXP_NAME``; the tag is the
model folder's name in lower case).  A second grid point of one recipe is named with the knob's value right after the
recipe's name, e.g. ``EXP_NAME=grpo_low_lr3.4e-7_qwen2.5-7b_n8_s1`` for the lower-lr recipe at lr 3.4e-7; ``eval
interpolate`` names its checkpoints ``grpo_wise<λ>_<tag>_n<N>_s<SEED>``.  So every run name says its recipe, knob
value, group size and training seed, and :data:`RECIPES` says what each recipe is:

* ``grpo`` at N = 8: the reference (every family's zero point); GRPO at another N is a method (``GRPO N=16``);
* ``grpo_low_lr``, ``grpo_kl``, ``grpo_entropy``: the control families lower lr, KL to SFT and entropy bonus, at the
  recipe's value unless the name gives another; ``--base RUN`` (the base model, evaluated once) ends the lower-lr
  family at lr = 0 (and the weight-interpolation family at λ = 0);
* ``grpo_wise``: the weight-interpolation family (made by ``eval interpolate``, no training: ``trained: false``);
* every other recipe: a method, over its knob when its runs carry values.

A name that does not parse, or whose recipe is not one of :data:`RECIPES`, is left out and said on stderr; runs of
two model tags, a group without the reference's seeds, or no reference are refused in one line (exit 2).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from verl_focal.config.errors import InputError

__all__ = ["RECIPES", "CONTROLS", "parse_run_name", "families_from_runs", "add_families_parser", "run_families"]

#: every recipe's RECIPE_NAME (recipes/deepscaler/*.sh; grpo_n2/4/16/32.sh run as ``grpo`` at another N) and
#: ``grpo_wise`` (eval interpolate's checkpoints) -> the method's display name and knob (None: a control family)
RECIPES: dict[str, tuple[str, str] | None] = {
    "grpo": None, "grpo_low_lr": None, "grpo_kl": None, "grpo_entropy": None, "grpo_wise": None,
    "f_grpo": ("F-GRPO", "γ"), "cue_grpo": ("Cue-GRPO", "α"), "cue_grpo_judge": ("Cue-GRPO (judge)", "α"),
    "grpo_cue_control": ("GRPO cue control", "value"), "dapo": ("DAPO", "value"), "f_dapo": ("F-DAPO", "γ"),
    "cispo": ("CISPO", "value"), "f_cispo": ("F-CISPO", "γ"), "ds_grpo": ("DS-GRPO", "value"),
    "maxrl": ("MaxRL", "ε"), "passk_grpo": ("Pass@k-GRPO", "k"), "unlikely_grpo": ("Unlikely-GRPO", "β"),
}
#: control recipes -> (family, knob, the recipe's own value, whether the knob grows away from the reference, trained)
CONTROLS: dict[str, tuple[str, str, str | None, bool, bool]] = {
    "grpo_low_lr": ("lower lr", "lr", "6.8e-7", False, True),
    "grpo_kl": ("KL to SFT", "kl_loss_coef", "0.001", True, True),
    "grpo_entropy": ("entropy bonus", "entropy_coeff", "0.001", True, True),
    "grpo_wise": ("weight interpolation", "λ", None, False, False),
}
#: the recipes' group size (common.sh: N defaults to 8): GRPO at it is the reference
REFERENCE_N = 8
_NAME = re.compile(r"(?P<head>.+)_n(?P<n>\d+)_s(?P<seed>\d+)")
_VALUE_TAG = re.compile(r"(?P<value>\d[\d.]*(?:e[-+]?\d+)?)?_(?P<tag>.+)")


def parse_run_name(name: str) -> dict[str, Any] | None:
    """``<recipe>[<value>]_<tag>_n<N>_s<SEED>`` -> {recipe, value (str or None), tag, n, seed}; None when the name
    does not follow the recipes' scheme or names no recipe of :data:`RECIPES` (the longest recipe name that fits)."""
    m = _NAME.fullmatch(name)
    if not m:
        return None
    head = m["head"]
    for recipe in sorted(RECIPES, key=len, reverse=True):
        if head.startswith(recipe):
            rest = _VALUE_TAG.fullmatch(head[len(recipe):])
            if rest:
                return {"recipe": recipe, "value": rest["value"], "tag": rest["tag"], "n": int(m["n"]),
                        "seed": int(m["seed"])}
    return None


def _run_names(runs_dir: Path) -> list[str]:
    if not runs_dir.is_dir():
        raise InputError(f"--runs {runs_dir}: {'not a folder' if runs_dir.exists() else 'no such folder'}; give the "
                         "folder holding the run folders (or <run>.jsonl files)")
    names = []
    for e in sorted(runs_dir.iterdir()):
        if e.name.startswith("."):
            continue
        if e.is_dir():
            names.append(e.name)
        elif e.suffix == ".jsonl":
            names.append(e.stem)
    return names


def _num(v: str) -> float:
    return float(v)


def families_from_runs(names: list[str], base: str | None = None,
                       source: str = "--runs") -> tuple[dict[str, Any], list[str]]:
    """The families document (:func:`verl_focal.lab.eval.families.parse_families`'s input) from run names (module
    docstring), and the names left out.  Refusals are one :class:`InputError` line."""
    groups: dict[tuple[str, str | None, int], dict[int, str]] = {}
    tags: dict[str, str] = {}
    left = []
    for name in names:
        if name == base:
            continue
        p = parse_run_name(name)
        if p is None:
            left.append(name)
            continue
        if tags and p["tag"] not in tags:
            (t1, r1), = tags.items()
            raise InputError(f"{source}: runs of more than one model: {r1!r} (model {t1}) and {name!r} (model "
                             f"{p['tag']}); give a folder with one model's runs")
        tags.setdefault(p["tag"], name)
        seeds = groups.setdefault((p["recipe"], p["value"], p["n"]), {})
        if p["seed"] in seeds:
            raise InputError(f"{source}: {seeds[p['seed']]!r} and {name!r} are the same recipe, value and seed; keep "
                             "one")
        seeds[p["seed"]] = name
    if base is not None and base not in names:
        raise InputError(f"{source}: --base {base!r} is not a run there; give the base model's run folder name")
    ref_key = ("grpo", None, REFERENCE_N)
    if ref_key not in groups:
        raise InputError(f"{source}: no reference run: GRPO at N = {REFERENCE_N} (grpo_<model>_n{REFERENCE_N}_s<SEED>, "
                         "recipes/deepscaler/grpo.sh with SEED set) is every family's zero point")
    ref_seeds = sorted(groups[ref_key])
    for seeds in groups.values():
        if sorted(seeds) != ref_seeds:
            first = next(iter(seeds.values()))
            raise InputError(f"{source}: {first!r} and its group have seeds {sorted(seeds)}, the reference "
                             f"{groups[ref_key][ref_seeds[0]]!r} has {ref_seeds}; train (or leave out) the missing "
                             "seeds so that every point is paired")

    def seeds_of(key) -> dict[int, str]:
        return {s: groups[key][s] for s in ref_seeds}

    controls: dict[str, dict[str, Any]] = {}
    methods: dict[str, dict[str, Any]] = {}
    for key in groups:
        recipe, value, n = key
        if key == ref_key:
            continue
        if recipe in CONTROLS:
            family, knob, default, _, trained = CONTROLS[recipe]
            if value is None and default is None:
                left.extend(groups[key].values())
                continue
            fam = controls.setdefault(recipe, {"family": family, "knob": knob, "points": [],
                                               **({} if trained else {"trained": False})})
            fam["points"].append({"value": value or default, "seeds": seeds_of(key)})
        elif recipe == "grpo":
            methods[f"GRPO N={n}"] = {"name": f"GRPO N={n}", "seeds": seeds_of(key)}
        else:
            label, knob = RECIPES[recipe]
            if value is None:
                methods.setdefault(label, {"name": label, "seeds": seeds_of(key)})
            else:
                fam = methods.setdefault(f"{label} sweep", {"family": label, "knob": knob, "points": []})
                fam["points"].append({"value": value, "seeds": seeds_of(key)})
    for recipe, fam in controls.items():
        grows = CONTROLS[recipe][3]
        fam["points"].sort(key=lambda pt: _num(pt["value"]), reverse=not grows)
    if base is not None:
        for recipe in ("grpo_low_lr", "grpo_wise"):
            if recipe == "grpo_low_lr" or recipe in controls:
                family, knob, _, _, trained = CONTROLS[recipe]
                fam = controls.setdefault(recipe, {"family": family, "knob": knob, "points": []})
                fam["points"].append({"value": "0 (base model)", "run": base})
    for fam in methods.values():
        if "points" in fam:
            fam["points"].sort(key=lambda pt: _num(pt["value"]))
    if not controls:
        raise InputError(f"{source}: no control run (grpo_low_lr, grpo_kl, grpo_entropy or grpo_wise runs) and no "
                         "--base: a method needs a control family to be compared with")
    if not methods:
        raise InputError(f"{source}: no method run besides the reference and the controls")
    order = [r for r in CONTROLS if r in controls]
    doc = {"reference": {"name": "GRPO", "seeds": seeds_of(ref_key)},
           "controls": [controls[r] for r in order], "methods": list(methods.values())}
    return doc, left


def add_families_parser(sub) -> None:
    """Add the ``families`` sub-command to ``eval``'s sub-parsers."""
    f = sub.add_parser("families", help="write the families file of `eval frontier` from run folders named as the "
                                        "recipes name them (<recipe>[<value>]_<model>_n<N>_s<SEED>)")
    f.add_argument("--runs", required=True, help="the folder holding one run folder (or <run>.jsonl) per run")
    f.add_argument("--base", metavar="RUN", help="the base model's run there: the lower-lr family's lr = 0 point "
                                                 "(one evaluation, no training)")
    f.add_argument("--out", required=True, metavar="YAML", help="the families file to write")


def run_families(args: argparse.Namespace) -> int:
    import yaml

    from verl_focal.lab.eval.families import parse_families

    names = _run_names(Path(args.runs))
    doc, left = families_from_runs(names, args.base, f"--runs {args.runs}")
    fams = parse_families(doc, f"--runs {args.runs}")  # the file it writes is one eval frontier reads
    if left:
        print(f"--runs {args.runs}: not named as a recipe names its run (<recipe>[<value>]_<model>_n<N>_s<SEED>), "
              f"left out: {', '.join(left[:5])}{f' and {len(left) - 5} more' if len(left) > 5 else ''}",
              file=sys.stderr)
    out = Path(args.out)
    if out.is_dir():
        raise InputError(f"--out {out}: is a folder; give a file name")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(f"# written by `verl-focal eval families --runs {args.runs}`; see docs/eval.md, 'eval frontier'\n"
                   + yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    n_points = sum(len(f.points) for f in fams.controls)
    print(f"wrote {out}: reference GRPO at seeds {fams.seeds}, {len(fams.controls)} control famil"
          f"{'y' if len(fams.controls) == 1 else 'ies'} ({n_points} points), "
          f"{sum(len(f.points) for f in fams.methods)} method point(s)")
    return 0
