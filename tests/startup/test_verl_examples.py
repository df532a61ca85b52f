"""verl's own launch scripts are real configurations people run: ``verl-focal check`` refuses none that verl 0.9.1 runs
as written.

The corpus (``verl_examples/corpus.json``) holds the trainer command lines of every launch script of verl's
``examples/`` and its one-step-off and fully-async ``shell/`` folders, extracted by running the scripts with their
commands stubbed (``verl_examples/extract.py``, which names the tree).  Each is checked as ``verl-focal check`` checks
it (:func:`admit`, stage ``check``), with its trainer, on a machine with a W&B key (the scripts log to wandb), with
only the model folders, data files and reward files made real and small.

Every refusal left must be a config verl 0.9.1 would fail or mistrain: :data:`TRUE_REFUSALS` names each one, the rule,
and the verl file and line that proves it.  Megatron scripts are refused by design (our entry point composes verl's
FSDP config; the message names verl's entry point with our hooked mode).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from verl_focal.config.errors import ConfigError
from verl_focal.integration.startup.admit import admit
from verl_focal.integration.startup.compose import compose_config

CORPUS = json.loads((Path(__file__).parent / "verl_examples" / "corpus.json").read_text(encoding="utf-8"))

#: script -> (rule, what the first refusal says, why verl 0.9.1 would fail or mistrain it: file:line of verl 0.9.1)
TRUE_REFUSALS: dict[str, tuple[str, str, str]] = {
    "examples/grpo_trainer/run_qwen3_30b_veomni.sh": (
        "unread", "+trainer.use_legacy_worker_impl: verl's config has no trainer.use_legacy_worker_impl",
        "no file of verl 0.9.1 reads trainer.use_legacy_worker_impl (grep finds none): the key is newer than 0.9.1"),
    "examples/sapo_trainer/run_qwen3_30b_a3b_fsdp.sh": (
        "verl_config", "PolicyLossConfig.__init__() got an unexpected keyword argument 'tau_pos'",
        "verl/workers/config/actor.py: PolicyLossConfig of 0.9.1 has no tau_pos (SAPO's key is newer than 0.9.1); "
        "verl's own TaskRunner fails on the same dataclass (verl/trainer/main_ppo.py:177, validate_config)"),
}
#: what composing a script's overrides refuses, by design or because verl 0.9.1's config lacks the key
COMPOSE_REFUSALS = {
    "megatron": "composes verl's FSDP config (ppo_trainer) only",
    "no such key in 0.9.1": "verl's config has no such key",
    "0.9.1's config has the key: + appends twice": "Could not append to config. An item is already at",
    "no such config group in 0.9.1": "Could not find 'actor/mlite_actor'",
}


def _tiny_inputs(root: Path) -> dict[str, str]:
    """A tiny model folder (config, weights, tokenizer) and data files in verl's layout (tests/e2e/tiny_assets)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
    try:
        from tiny_assets import build_all
    finally:
        sys.path.pop(0)
    paths = build_all(root / "tiny")
    return {"model": paths["model"], "data": paths["train"]}


def _localised(overrides: list[str], tiny: dict[str, str], cwd: Path) -> list[str]:
    """Model and data paths made real and small; reward files the script names made real in ``cwd`` (the scripts run
    from verl's checkout, where they exist)."""
    out = []
    name = next((o.split("=", 1)[1] for o in overrides if o.startswith("reward.custom_reward_function.name=")),
                "compute_score")
    for o in overrides:
        key, sep, value = o.partition("=")
        bare = key.lstrip("+~")
        if not sep:
            out.append(o)
        elif bare.endswith(("model.path", "model_path", "tokenizer_path")) and value not in ("null", ""):
            out.append(f"{key}={tiny['model']}")
        elif bare in ("data.train_files", "data.val_files"):
            out.append(f"{key}={tiny['data']}")
        else:
            if bare.endswith("custom_reward_function.path") and value.endswith(".py"):
                value = value.removeprefix("/VERL_CHECKOUT/")  # the scripts' $(pwd): verl's checkout
                path = cwd / value
                o = f"{key}={value}"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"def {name}(*args, **kwargs):\n    return 0.0\n")
            out.append(o)
    return out


def _verdicts(tmp_path: Path, monkeypatch) -> dict[str, tuple[str, str, str]]:
    monkeypatch.setenv("WANDB_API_KEY", "a-key")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    tiny = _tiny_inputs(tmp_path)
    out = {}
    for script, calls in sorted(CORPUS["scripts"].items()):
        (trainer, *overrides), = calls[:1]
        overrides = _localised(overrides, tiny, tmp_path)
        try:
            config = compose_config(overrides, trainer=trainer)
        except ConfigError as e:
            out[script] = ("compose", "", str(e))
            continue
        first = admit("check", config, overrides=overrides, trainer=trainer, skip_judge=True).first_refusal
        out[script] = ("refused", first.rule, first.message) if first else ("accepted", "", "")
    return out


def test_check_refuses_no_config_of_verls_own_examples_that_verl_runs(tmp_path, monkeypatch):
    verdicts = _verdicts(tmp_path, monkeypatch)
    assert len(verdicts) == len(CORPUS["scripts"]) >= 100
    wrong = {}
    for script, (verdict, rule, message) in verdicts.items():
        if verdict == "compose":
            if not any(needle in message for needle in COMPOSE_REFUSALS.values()):
                wrong[script] = message
        elif verdict == "refused":
            expected = TRUE_REFUSALS.get(script)
            if expected is None or expected[0] != rule or expected[1] not in message:
                wrong[script] = f"{rule}: {message}"
        elif script in TRUE_REFUSALS:
            wrong[script] = "accepted, but listed as a true refusal"
    assert wrong == {}, "\n".join(f"{s}: {m[:300]}" for s, m in wrong.items())
    counts = {v: sum(1 for x in verdicts.values() if x[0] == v) for v in ("accepted", "refused", "compose")}
    megatron = sum(1 for x in verdicts.values() if COMPOSE_REFUSALS["megatron"] in x[2])
    assert counts["refused"] == len(TRUE_REFUSALS) and megatron >= 20, (counts, megatron)
    print(f"verl examples at {CORPUS['verl_commit'][:12]}: {counts}, of the composed refusals {megatron} Megatron")


@pytest.mark.parametrize("script", sorted(TRUE_REFUSALS))
def test_each_true_refusal_names_verls_reason(script):
    rule, needle, proof = TRUE_REFUSALS[script]
    assert re.search(r"verl|grep", proof) and needle
