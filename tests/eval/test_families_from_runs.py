"""`verl-focal eval families`: the families file from run folders named as the recipes name them
(recipes/lib/common.sh: EXP_NAME = <recipe>_<model tag>_n<N>_s<SEED>), checked against the recipes themselves, each
refusal in one line, and the file it writes read back by `eval frontier` on runs of known values."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from verl_focal.cli import main as cli_main
from verl_focal.config.errors import InputError
from verl_focal.lab.eval.families import parse_families
from verl_focal.lab.eval.families_from_runs import CONTROLS, RECIPES, families_from_runs, parse_run_name

ROOT = Path(__file__).resolve().parents[2]
TAG = "qwen2.5-7b"


def _names(seeds=(1, 2, 3)) -> list[str]:
    out = []
    for s in seeds:
        out += [f"grpo_{TAG}_n8_s{s}", f"grpo_low_lr_{TAG}_n8_s{s}", f"grpo_low_lr3.4e-7_{TAG}_n8_s{s}",
                f"grpo_kl_{TAG}_n8_s{s}", f"grpo_kl0.1_{TAG}_n8_s{s}", f"grpo_wise0.5_{TAG}_n8_s{s}",
                f"grpo_wise0.25_{TAG}_n8_s{s}", f"f_grpo_{TAG}_n8_s{s}", f"cue_grpo0.8_{TAG}_n8_s{s}",
                f"cue_grpo1.6_{TAG}_n8_s{s}", f"grpo_{TAG}_n16_s{s}"]
    return out + ["base", "notes"]


def test_the_recipe_table_is_the_recipes():
    """Every recipe's RECIPE_NAME default is in RECIPES (and nothing else but eval interpolate's grpo_wise); every
    control recipe's default value is the one its script sets; the run name is the one common.sh builds."""
    names = set()
    for f in (ROOT / "recipes" / "deepscaler").glob("*.sh"):
        m = re.search(r'RECIPE_NAME="\$\{RECIPE_NAME:-([^}]+)\}"', f.read_text())
        assert m, f
        names.add(m.group(1))
    assert names | {"grpo_wise"} == set(RECIPES)
    for recipe, key in (("grpo_low_lr", "optim.lr"), ("grpo_kl", "kl_loss_coef"), ("grpo_entropy", "entropy_coeff")):
        text = (ROOT / "recipes" / "deepscaler" / f"{recipe}.sh").read_text()
        assert f"actor_rollout_ref.actor.{key}={CONTROLS[recipe][2]}" in text, recipe
    common = (ROOT / "recipes" / "lib" / "common.sh").read_text()
    assert 'EXP_NAME="${EXP_NAME:-${RECIPE_NAME}_${MODEL_TAG}_n${N}${SEED:+_s$SEED}}"' in common


@pytest.mark.parametrize("name, parsed", [
    ("grpo_qwen2.5-7b_n8_s1", ("grpo", None, "qwen2.5-7b", 8, 1)),
    ("grpo_low_lr_qwen2.5-7b_n8_s12", ("grpo_low_lr", None, "qwen2.5-7b", 8, 12)),
    ("grpo_low_lr3.4e-7_qwen2.5-7b_n8_s2", ("grpo_low_lr", "3.4e-7", "qwen2.5-7b", 8, 2)),
    ("f_grpo_my_model_n8_s3", ("f_grpo", None, "my_model", 8, 3)),
    ("grpo_wise0.25_qwen3-4b-base_n8_s1", ("grpo_wise", "0.25", "qwen3-4b-base", 8, 1)),
    ("grpo_qwen2.5-7b_n16_s1", ("grpo", None, "qwen2.5-7b", 16, 1)),
])
def test_run_names_parse(name, parsed):
    p = parse_run_name(name)
    assert (p["recipe"], p["value"], p["tag"], p["n"], p["seed"]) == parsed
    assert parse_run_name("base") is None and parse_run_name("sft_qwen_n8_s1") is None


def test_the_design_from_the_names():
    doc, left = families_from_runs(_names(), base="base")
    assert left == ["notes"]
    assert doc["reference"] == {"name": "GRPO", "seeds": {s: f"grpo_{TAG}_n8_s{s}" for s in (1, 2, 3)}}
    fams = {f["family"]: f for f in doc["controls"]}
    assert list(fams) == ["lower lr", "KL to SFT", "weight interpolation"]
    assert [p["value"] for p in fams["lower lr"]["points"]] == ["6.8e-7", "3.4e-7", "0 (base model)"]
    assert fams["lower lr"]["points"][2] == {"value": "0 (base model)", "run": "base"}
    assert [p["value"] for p in fams["KL to SFT"]["points"]] == ["0.001", "0.1"]
    assert fams["weight interpolation"]["trained"] is False
    assert [p["value"] for p in fams["weight interpolation"]["points"]] == ["0.5", "0.25", "0 (base model)"]
    assert doc["methods"][0] == {"name": "F-GRPO", "seeds": {s: f"f_grpo_{TAG}_n8_s{s}" for s in (1, 2, 3)}}
    cue = next(m for m in doc["methods"] if m.get("family") == "Cue-GRPO")
    assert cue["knob"] == "α" and [p["value"] for p in cue["points"]] == ["0.8", "1.6"]
    assert {"name": "GRPO N=16", "seeds": {s: f"grpo_{TAG}_n16_s{s}" for s in (1, 2, 3)}} in doc["methods"]
    fam = parse_families(doc)  # a valid families file: no run twice, seeds paired
    assert fam.seeds == [1, 2, 3] and [p.trained for p in fam.controls[2].points] == [False, False, False]


@pytest.mark.parametrize("names, base, needle", [
    (_names()[:-2] + ["grpo_other_n8_s1"], None, "runs of more than one model: 'grpo_qwen2.5-7b_n8_s1' (model "
     "qwen2.5-7b) and 'grpo_other_n8_s1' (model other)"),
    ([n for n in _names() if n != f"f_grpo_{TAG}_n8_s2"], None,
     f"'f_grpo_{TAG}_n8_s1' and its group have seeds [1, 3], the reference 'grpo_{TAG}_n8_s1' has [1, 2, 3]"),
    ([n for n in _names() if not n.startswith(f"grpo_{TAG}_n8")], None, "no reference run: GRPO at N = 8"),
    (_names(), "base_model", "--base 'base_model' is not a run there"),
    ([f"grpo_{TAG}_n8_s1", f"f_grpo_{TAG}_n8_s1"], None, "no control run"),
])
def test_refusals(names, base, needle):
    with pytest.raises(InputError) as e:
        families_from_runs(names, base)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_the_written_file_is_what_eval_frontier_reads(tmp_path, capsys):
    """The example runs renamed as the recipes name them: `eval families` writes a file whose comparison equals the
    one of the example's own families file (the same runs, the same design)."""
    assert cli_main(["eval", "example", "--out-dir", str(tmp_path / "ex")]) == 0
    rename = {"grpo": "grpo", "grpo-lr7e-7": "grpo_low_lr7e-7", "grpo-lr4e-7": "grpo_low_lr4e-7",
              "grpo-kl0.01": "grpo_kl0.01", "grpo-kl0.1": "grpo_kl0.1", "grpo-kl1": "grpo_kl1",
              "fgrpo-g1": "f_grpo1", "cue-a0.8": "cue_grpo0.8"}
    runs = tmp_path / "runs"
    runs.mkdir()
    for old, new in rename.items():
        for s in (1, 2, 3, 4):
            (runs / f"{new}_tiny_n8_s{s}.jsonl").symlink_to(tmp_path / "ex" / "runs" / f"{old}-s{s}.jsonl")
    (runs / "base.jsonl").symlink_to(tmp_path / "ex" / "runs" / "base.jsonl")
    capsys.readouterr()
    assert cli_main(["eval", "families", "--runs", str(runs), "--base", "base", "--out", str(tmp_path / "f.yaml")]) == 0
    assert "reference GRPO at seeds [1, 2, 3, 4], 2 control families (6 points), 2 method point(s)" in \
        capsys.readouterr().out
    doc = yaml.safe_load((tmp_path / "f.yaml").read_text())
    assert [p["value"] for p in doc["controls"][0]["points"]] == ["7e-7", "4e-7", "0 (base model)"]
    outs = {}
    for name, fam, rdir in (("mine", tmp_path / "f.yaml", runs),
                            ("example", tmp_path / "ex" / "families.yaml", tmp_path / "ex" / "runs")):
        assert cli_main(["eval", "frontier", "--families", str(fam), "--runs", str(rdir), "--y", "pass@16",
                         "--out-dir", str(tmp_path / name)]) == 0
        outs[name] = yaml.safe_load((tmp_path / name / "frontier.json").read_text())
    key = [(c["estimate"], c["ci_low"], c["ci_high"], c["verdict"]) for c in outs["example"]["claims"]]
    assert sorted(key) == sorted((c["estimate"], c["ci_low"], c["ci_high"], c["verdict"])
                                 for c in outs["mine"]["claims"])
