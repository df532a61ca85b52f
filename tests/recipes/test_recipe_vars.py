"""The recipes' environment variables: every one a recipe reads is checked in one place (recipes/lib/common.sh),
before anything starts, in one line that names the variable the user set and the fix; the bounds of those that
set an algorithm.* key are the schema's.  Bash only (--print-overrides): no Python is started."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from test_recipes_on_cpu import DS, _env

COMMON = DS.parent / "lib" / "common.sh"


def _table() -> dict[str, tuple[str, str, str, str]]:
    text = subprocess.run(["bash", "-c", f'source "{COMMON}"; printf "%s" "$_RECIPE_VAR_TABLE"'],
                          capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in text.strip().splitlines():
        name, kind, lo, hi, what = line.split(None, 4)
        rows[name] = (kind, lo, hi, what)
    return rows


def _common_vars() -> set[str]:
    return set(subprocess.run(["bash", "-c", f'source "{COMMON}"; printf "%s" "$_COMMON_VARS"'],
                              capture_output=True, text=True, check=True).stdout.split())


def _run(script: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(DS / script), "--print-overrides"], env=_env(**env), capture_output=True,
                          text=True, timeout=60)


#: variables the recipes read that are free text (paths, names): nothing to check in bash
TEXT = {"MODEL", "DATA_DIR", "TRAIN_FILES", "VAL_FILES", "EXP_NAME", "CKPT_ROOT", "PYTHON", "CUE_PARTITIONER",
        "JUDGE_MODEL", "JUDGE_URL", "JUDGE_API_KEY_ENV", "VERL_FOCAL_DATA", "HOME", "VIRTUAL_ENV", "RECIPE_NAME",
        "RECIPE_SCRIPT", "RECIPE_VARS", "RECIPE_ALLOW_VARS", "BASH_SOURCE"}


def _reads(path: Path) -> set[str]:
    code = "\n".join(line.split("#", 1)[0] for line in path.read_text().splitlines())
    return set(re.findall(r"\$\{?([A-Z][A-Z0-9_]*)", code))


def test_every_variable_a_recipe_reads_is_in_the_table_and_listed_by_its_script():
    table, common = _table(), _common_vars()
    assert common <= set(table)
    for script in sorted(DS.glob("*.sh")):
        text = script.read_text()
        declared = set(" ".join(re.findall(r'RECIPE_VARS="\$\{RECIPE_VARS:-\} ([A-Z_ ]+)"', text)).split())
        read = _reads(script) - TEXT - {"N"}  # N: the grpo_n* scripts set it; common
        assert read <= set(table), (script.name, read - set(table))
        assert read - common <= declared, (script.name, "reads but does not list", read - common - declared)
    assert _reads(COMMON) - TEXT - set(table) <= {"PRESET_RESPONSE_LENGTH", "MODEL_TAG", "PRESET_OVERRIDES",
                                                  "RECIPES_LIB", "PAPER_TRAIN_ROWS", "MATH_VAL_SETS", "OOD_VAL_SETS",
                                                  "_RECIPE_VAR_TABLE", "_COMMON_VARS", "_RECIPE_TEXT_VARS",
                                                  "_STANDARD_ENV_NAMES", "_STANDARD_ENV_PREFIXES"}


@pytest.mark.parametrize("script,env,first_line", [
    ("f_grpo.sh", {"GAMMA": "abc"},
     "recipe f_grpo: error: GAMMA=abc: must be a number >= 0 (it sets algorithm.focal.gamma); set GAMMA to such a "
     "value, or unset it for this recipe's default"),
    ("grpo.sh", {"STEPS_PER_EPOCH": "0"},
     "recipe grpo: error: STEPS_PER_EPOCH=0: must be an integer >= 1 (it sets trainer.save_freq and "
     "trainer.test_freq, the steps between checkpoints and validations); set STEPS_PER_EPOCH to such a value, or "
     "unset it for this recipe's default"),
    ("unlikely_grpo.sh", {"FILTER_GROUPS": "yes"}, "recipe unlikely_grpo: error: FILTER_GROUPS=yes: must be 0 or 1"),
    ("dapo.sh", {"DYNAMIC_SAMPLING": "true"}, "recipe dapo: error: DYNAMIC_SAMPLING=true: must be 0 or 1"),
    ("f_dapo.sh", {"GAMMA": "-1"}, "recipe f_dapo: error: GAMMA=-1: must be a number >= 0"),
    ("passk_grpo.sh", {"K": "four"}, "recipe passk_grpo: error: K=four: must be an integer from 1 to 512"),
    ("maxrl.sh", {"EPSILON": "0"}, "recipe maxrl: error: EPSILON=0: must be a number > 0"),
    ("maxrl.sh", {"BASE_RECIPE": "f_grpo"},
     "recipe maxrl: error: BASE_RECIPE=f_grpo: must be one of grpo, dapo, cispo"),
    ("ds_grpo.sh", {"DS_STD": "unbiased"}, "recipe ds_grpo: error: DS_STD=unbiased: must be one of population, sample"),
    ("cue_grpo.sh", {"CUE_FLOOR_MODE": "min"},
     "recipe cue_grpo: error: CUE_FLOOR_MODE=min: must be one of none, additive, max"),
    ("grpo.sh", {"GPU_MEM_UTIL": "0"}, "recipe grpo: error: GPU_MEM_UTIL=0: must be a number > 0 and <= 1"),
    ("grpo.sh", {"VAL_OOD": "yes"}, "recipe grpo: error: VAL_OOD=yes: must be 0 or 1"),
])
def test_a_bad_variable_is_named_in_one_line_before_anything_starts(script, env, first_line, tmp_path):
    fake = tmp_path / "python"  # a launch would start this: it must never run
    fake.write_text(f"#!/bin/sh\ntouch {tmp_path}/started\n")
    fake.chmod(0o755)
    for mode in ("--print-overrides", "--dry-run"):
        r = subprocess.run(["bash", str(DS / script), mode], env=_env(PYTHON=str(fake), **env), capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 2 and r.stdout == ""
        assert r.stderr.strip().splitlines() == [r.stderr.strip()] and r.stderr.startswith(first_line), r.stderr
    assert not (tmp_path / "started").exists()


@pytest.mark.parametrize("script,var,readers", [
    ("grpo.sh", "GAMMA", "f_cispo.sh f_dapo.sh f_grpo.sh"),
    ("cue_grpo.sh", "GAMMA", "f_cispo.sh f_dapo.sh f_grpo.sh"),
    ("f_grpo.sh", "K", "passk_grpo.sh"),
    ("grpo.sh", "BETA", "unlikely_grpo.sh"),
])
def test_a_variable_the_recipe_does_not_read_is_refused_naming_the_recipes_that_do(script, var, readers):
    """Issue 39 row 6: GAMMA=1.0 bash cue_grpo.sh was accepted, and the value ignored."""
    proc = _run(script, **{var: "1"})
    name = script.removesuffix(".sh")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == (
        f"recipe {name}: error: {var}=1: recipe {name} does not read {var} (it sets {_table()[var][3]} in "
        f"{readers}), so the value would be ignored; unset {var}, or run a recipe that reads it")


def test_seed_and_the_common_variables_are_read_by_every_recipe_and_empty_is_unset():
    for script in ("grpo.sh", "cue_grpo.sh", "f_grpo.sh"):
        assert _run(script, SEED="3", N="8", GAMMA="").returncode == 0, script
    assert _run("f_grpo.sh", GAMMA="").returncode == 0  # empty = unset: the recipe's default
    assert "algorithm.focal.gamma=0.5" in _run("f_grpo.sh", GAMMA="").stdout


def test_steps_per_epoch_from_a_small_training_file_names_the_variables(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    train = tmp_path / "train.parquet"
    pq.write_table(pa.table({"x": list(range(100))}), train)
    r = _run("grpo.sh", TRAIN_FILES=str(train))
    assert r.returncode == 2
    assert r.stderr.strip() == (f"recipe grpo: error: TRAIN_FILES={train} has fewer rows than one batch of "
                                "TRAIN_BATCH_SIZE=256 prompts (0 steps per epoch); lower TRAIN_BATCH_SIZE, or set "
                                "STEPS_PER_EPOCH")
    assert "trainer.save_freq=3" in _run("grpo.sh", TRAIN_FILES=str(train), TRAIN_BATCH_SIZE="32").stdout


def _schema_accepts(key: str, value: str) -> bool:
    """What the schema says of the override ``algorithm.<section>.<field>=value``, typed by Hydra's parser."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from verl_focal.config.schema import SECTIONS, ConfigError, section_from_mapping

    _, section, field = key.split(".")
    try:
        typed = OverridesParser.create().parse_overrides([f"{key}={value}"])[0].value()
        section_from_mapping(SECTIONS[section], {field: typed}, f"algorithm.{section}")
    except ConfigError:
        return False
    return True


#: values around each bound, as a user would type them (plain decimals: bash also refuses "+1" and "1_000", which
#: Hydra would read as 1 and 1000)
PROBES = ["-1", "0", "0.0", "0.", "1e-3", "1E2", ".5", "0.5", "00.5", "01", "1", "1.", "1.0", "1.5", "2", "511",
          "512", "513", "inf", "nan", "abc", "sum", "mean", "none", "max", "additive", "min", "population", "sample"]


def test_bounds_of_the_algorithm_keys_are_the_schemas():
    """For every variable that sets one of our algorithm.* keys, bash accepts exactly the values the schema accepts
    (GAMMA >= 0, K in [K_MIN, K_MAX], BETA in [BETA_MIN, BETA_MAX], the LIKELIHOODS and FLOOR_MODES)."""
    scripts = {"GAMMA": "f_grpo.sh", "K": "passk_grpo.sh", "BETA": "unlikely_grpo.sh", "LIKELIHOOD": "unlikely_grpo.sh",
               "CUE_FLOOR_MODE": "cue_grpo.sh", "EPSILON": "maxrl.sh", "C_POS": "ds_grpo.sh", "C_NEG": "ds_grpo.sh",
               "DS_STD": "ds_grpo.sh"}
    keyed = {n: row[3].split(",")[0] for n, row in _table().items() if row[3].startswith(("algorithm.focal",
                                                                                        "algorithm.passk",
                                                                                        "algorithm.unlikely",
                                                                                        "algorithm.cue",
                                                                                        "algorithm.maxrl",
                                                                                        "algorithm.ds_grpo"))}
    assert set(keyed) == set(scripts)
    for name, key in keyed.items():
        for value in PROBES:
            extra = {"N": "512"} if name == "K" else {}  # K <= N is a separate start-up check
            got = _run(scripts[name], **{name: value}, **extra).returncode == 0
            assert got == _schema_accepts(key, value), (name, value)


@pytest.mark.parametrize("script,typo,near,value", [
    ("grpo.sh", "SEEDS", "SEED", "7"),
    ("f_grpo.sh", "MODLE", "MODEL", "Qwen/Qwen3-4B-Base"),  # a transposition counts one edit
    ("f_grpo.sh", "GAMA", "GAMMA", "1.0"),
    ("dapo.sh", "NODES", "NNODES", "2"),
    ("grpo.sh", "DATADIR", "DATA_DIR", "/tmp"),
    ("cue_grpo.sh", "CUE_PARTITONER", "CUE_PARTITIONER", "strategy_cue"),
])
def test_a_misspelt_recipe_variable_is_refused_with_a_hint_that_passes(script, typo, near, value):
    """Issue 45: SEEDS=7 (every run of a seed loop then seed 42, one folder), MODLE, GAMA were ignored without a
    word.  The hint is a promise: the variable it names, with the same value, is accepted by the same checks."""
    name = script.removesuffix(".sh")
    r = _run(script, **{typo: value})
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == (
        f"recipe {name}: error: {typo}={value} is set in the environment, but no recipe reads {typo} (did you mean "
        f"{near}?), so the value would be ignored; set {near} instead, or unset {typo} (or list it in "
        f"RECIPE_ALLOW_VARS=\"{typo}\" if it is not meant for the recipe)")
    assert _run(script, **{near: value}).returncode == 0, near
    assert _run(script, RECIPE_ALLOW_VARS=typo, **{typo: value}).returncode == 0  # the stated escape works


def test_a_misspelt_variable_of_another_recipe_names_the_recipes_that_read_it():
    """GAMA=1 with grpo.sh: GAMMA is the closest, but grpo.sh does not read it either; the hint says who does
    instead of sending the user to the next refusal."""
    r = _run("grpo.sh", GAMA="1")
    assert r.returncode == 2 and r.stderr.strip() == (
        "recipe grpo: error: GAMA=1 is set in the environment, but no recipe reads GAMA (did you mean GAMMA? only "
        "f_cispo.sh f_dapo.sh f_grpo.sh read it, not recipe grpo), so the value would be ignored; unset GAMA, or run "
        "a recipe that reads GAMMA")


#: an ordinary login / cluster / GPU environment: none of it is taken for a typo
NORMAL_ENV = {
    "HOME": "/home/u", "USER": "u", "LOGNAME": "u", "SHELL": "/bin/bash", "TERM": "xterm-256color", "PWD": "/w",
    "OLDPWD": "/", "LANG": "C.UTF-8", "LANGUAGE": "en", "LC_ALL": "C.UTF-8", "TZ": "UTC", "MAIL": "/var/mail/u",
    "EDITOR": "vim", "PAGER": "less", "DISPLAY": ":0", "HOSTNAME": "node0", "TMPDIR": "/tmp", "SHLVL": "2",
    "COLUMNS": "80", "LINES": "24", "CUDA_VISIBLE_DEVICES": "0,1", "HF_HOME": "/hf", "HF_TOKEN": "x",
    "WANDB_API_KEY": "k", "WANDB_MODE": "offline", "PYTHONPATH": "/p", "VIRTUAL_ENV": "/v", "CONDA_PREFIX": "/c",
    "SLURM_JOB_ID": "1", "OMP_NUM_THREADS": "8", "MASTER_ADDR": "h", "MASTER_PORT": "29500", "NCCL_DEBUG": "WARN",
    "RAY_ADDRESS": "auto", "LD_LIBRARY_PATH": "/l", "XDG_RUNTIME_DIR": "/run", "SSH_AUTH_SOCK": "/s",
    "TOKENIZERS_PARALLELISM": "false", "WORLD_SIZE": "1", "RANK": "0", "LOCAL_RANK": "0", "NODE_RANK": "0",
    "VLLM_USE_V1": "1", "TORCH_HOME": "/t", "PIP_CACHE_DIR": "/p", "GIT_PAGER": "cat", "HTTPS_PROXY": "",
    "VERL_FOCAL_DEBUG": "0", "JUDGE_KEY": "secret", "COLORTERM": "truecolor", "HISTSIZE": "1000",
}


@pytest.mark.parametrize("script", sorted(p.name for p in DS.glob("*.sh")))
def test_a_normal_environment_and_the_recipes_own_variables_pass(script):
    env = {"JUDGE_MODEL": "judge-7b"} if "judge" in script else {}
    r = _run(script, **NORMAL_ENV, **env)
    assert r.returncode == 0, r.stderr


def test_the_typo_check_knows_every_variable_a_recipe_reads():
    """The names the check compares with: the table's and the free-text ones; none is a standard name."""
    out = subprocess.run(["bash", "-c", f'source "{COMMON}"; printf "%s\\n---\\n%s\\n" "$_RECIPE_TEXT_VARS" '
                                        '"$_STANDARD_ENV_NAMES"'], capture_output=True, text=True, check=True).stdout
    text, std = (set(part.split()) for part in out.split("---"))
    assert TEXT - {"HOME", "VIRTUAL_ENV", "BASH_SOURCE"} <= text
    assert not (text | set(_table())) & std


def test_a_model_file_is_sent_to_its_folder_before_the_presets(tmp_path):
    """Issue 45: MODEL=<dir>/model.safetensors was told to set MAX_RESPONSE_LENGTH, then the data file was named
    after the weights file; now the first line names the folder, and that folder passes this check."""
    model = tmp_path / "Qwen2.5-7B"
    model.mkdir()
    (model / "config.json").write_text("{}")
    (model / "model.safetensors").write_bytes(b"")
    r = _run("f_grpo.sh", MODEL=str(model / "model.safetensors"))
    assert r.returncode == 2 and r.stderr.strip() == (
        f"recipe f_grpo: error: MODEL={model}/model.safetensors is a file, not a model folder; set MODEL={model} (the "
        "folder that holds config.json and the weights)")
    ok = _run("f_grpo.sh", MODEL=str(model))
    assert ok.returncode == 0 and "data.max_response_length=8192" in ok.stdout  # the folder's name finds the preset
    (model / "config.json").unlink()
    r = _run("f_grpo.sh", MODEL=str(model / "model.safetensors"))
    assert r.returncode == 2 and f"its folder {model} has no config.json" in r.stderr and "set MODEL=" not in r.stderr


@pytest.mark.parametrize("var,value,override", [
    ("LR", "3.4e-7", ["actor_rollout_ref.actor.optim.lr=3.4e-7"]),
    ("LEARNING_RATE", "1e-6", ["actor_rollout_ref.actor.optim.lr=1e-6"]),
    ("KL_COEF", "0.01", ["actor_rollout_ref.actor.use_kl_loss=true", "actor_rollout_ref.actor.kl_loss_coef=0.01"]),
    ("ENTROPY", "0.001", ["actor_rollout_ref.actor.entropy_coeff=0.001"]),
    ("BATCH_SIZE", "8", None),
])
def test_a_guessed_setting_variable_is_refused_with_the_override_that_sets_it(var, value, override):
    """Issue 54: guessed variables (LR, LEARNING_RATE, KL_COEF, ENTROPY) were ignored, so a "3.4e-7" control named
    with EXP_NAME trained at the recipe's rate.  A name with a setting's word that no recipe reads is refused, not only
    a near miss; the override it names is accepted by the same recipe (a hint is a promise)."""
    r = _run("grpo.sh", **{var: value})
    assert r.returncode == 2 and r.stdout == ""
    line = r.stderr.strip()
    assert line.startswith(f"recipe grpo: error: {var}={value} is set in the environment and looks like a setting, "
                           f"but no recipe reads {var}, so the value would be ignored; ") and "\n" not in line, line
    assert f'RECIPE_ALLOW_VARS="{var}"' in line
    if override is not None:
        assert f"({' '.join(override)})" in line
        ok = subprocess.run(["bash", str(DS / "grpo.sh"), "--print-overrides", *override], env=_env(),
                            capture_output=True, text=True, timeout=60)
        assert ok.returncode == 0 and all(o in ok.stdout for o in override), ok.stderr
    assert _run("grpo.sh", RECIPE_ALLOW_VARS=var, **{var: value}).returncode == 0  # the stated escape works


def test_a_variable_without_a_settings_word_is_not_taken_for_one():
    assert _run("grpo.sh", MY_TOOL_HOME="/x", PROJECT_ROOT="/p", JOB_LABEL="x").returncode == 0
