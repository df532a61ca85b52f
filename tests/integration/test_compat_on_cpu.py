"""The verl contract (integration/compat.py): every verl name the glue touches is listed with its feature,
the installed verl honours it, and a missing name is found the way an install step looks for it."""

from __future__ import annotations

import ast
import pathlib

import pytest
from verl.experimental.separation.ray_trainer import SeparateRayPPOTrainer
from verl.trainer.ppo.v1.trainer_base import PPOTrainer

from verl_focal.integration import compat
from verl_focal.integration.trainer import FocalHookMixin

PKG = pathlib.Path(compat.__file__).resolve().parents[1]


def _named(feature: str, how: str | None = None) -> set[str]:
    return {t.name for t in compat.CONTRACT if t.feature == feature and (how is None or t.how == how)}


def test_installed_verl_honours_every_feature():
    assert {f: compat.missing(f) for f in compat.FEATURES} == {f: [] for f in compat.FEATURES}
    assert compat.disabled() == {}  # every install step of the plugin ran in this process


def test_every_method_the_v1_hook_overrides_is_in_the_contract_and_no_other():
    overridden = {n for n, attr in vars(FocalHookMixin).items()
                  if callable(attr) and hasattr(PPOTrainer, n) and n != "__init__"}
    assert {f"verl.trainer.ppo.v1.trainer_base:PPOTrainer.{n}" for n in overridden} == _named("v1", "override")


def test_every_separated_trainer_method_the_hook_wraps_is_in_the_contract():
    from verl_focal.integration.post_import import is_hooked

    wrapped = {n for n in dir(SeparateRayPPOTrainer) if is_hooked(getattr(SeparateRayPPOTrainer, n))}
    assert wrapped == {"_fit_compute_log_prob", "_fit_compute_advantage"}
    assert {f"verl.experimental.separation.ray_trainer:SeparateRayPPOTrainer.{n}" for n in wrapped} == _named(
        "separated", "wrap")


def _verl_imports(path: pathlib.Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("verl", "transfer_queue"):
            found |= {f"{node.module}:{a.name}" for a in node.names}
    return found


def test_every_verl_name_the_glue_imports_is_in_the_contract():
    files = [*sorted((PKG / "integration").glob("*.py")), *sorted((PKG / "lab" / "demo").glob("*.py")),
             PKG / "main_ppo.py", PKG / "plugin.py"]
    used = set().union(*(_verl_imports(f) for f in files))
    assert len(used) > 10, "the scan found almost no verl import"
    listed = {t.name for t in compat.CONTRACT}
    # `from verl.trainer.ppo import core_algos` imports a module: its names are listed one by one
    modules = {n.partition(":")[0] for n in listed}
    missing = {u for u in used - listed if u.replace(":", ".") not in modules}
    assert not missing, f"verl names imported but not in compat.CONTRACT: {sorted(missing)}"


def test_a_name_is_found_as_an_attribute_a_dataclass_field_or_an_attribute_set_on_self():
    assert compat._resolve("verl.protocol:DataProto.non_tensor_batch")  # dataclass field
    assert compat._resolve("verl.experimental.separation.ray_trainer:SeparateRayPPOTrainer.reward_extra_infos_dict")
    assert compat._resolve("verl.trainer.ppo.v1.trainer_base:PPOTrainer.tokenizer")  # set in RayPPOTrainer-like init
    assert not compat._resolve("verl.trainer.ppo.v1.trainer_base:PPOTrainer.no_such_attribute")
    assert not compat._resolve("verl.trainer.ppo.no_such_module:anything")
    with pytest.raises(ValueError, match="no feature 'nope'"):
        compat.missing("nope")


def test_require_names_the_missing_name_the_feature_and_the_fix(monkeypatch):
    from verl_focal.config.errors import ConfigError

    touch = compat.Touch("verl.trainer.ppo.ray_trainer:compute_advantage_gone", "wrap", "advantage", "test")
    monkeypatch.setattr(compat, "CONTRACT", (*compat.CONTRACT, touch))
    with pytest.raises(ConfigError) as e:
        compat.require(["entry", "advantage"], "algorithm.adv_estimator=f_grpo")
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("algorithm.adv_estimator=f_grpo needs verl's "
                                              "verl.trainer.ppo.ray_trainer:compute_advantage_gone (wrap for ")
    assert "pip install 'verl[verl-core]==0.9.1'" in msg
    compat.require(["entry", "v1"], "verl's own estimators")  # other features: nothing to refuse


def test_check_says_in_one_line_when_verl_is_not_the_pinned_version(monkeypatch):
    import verl

    from verl_focal.check import validate_here

    ok = ["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4",
          "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8",
          "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8", "algorithm.adv_estimator=f_grpo"]
    assert not [w for w in validate_here(ok)["warnings"] if "is tested against" in w]
    monkeypatch.setattr(verl, "__version__", "0.9.2")
    out = validate_here(ok)
    lines = [w for w in out["warnings"] if "is tested against" in w]
    assert len(lines) == 1 and "==0.9.1" in lines[0] and "verl 0.9.2 is installed" in lines[0]
    assert "\n" not in lines[0] and not out["problems"]


def test_docs_architecture_lists_every_contract_name_and_feature():
    text = (PKG.parent / "docs" / "architecture.md").read_text()
    assert [t.name for t in compat.CONTRACT if f"`{t.name}`" not in text] == []
    assert [f for f in compat.FEATURES if f"- `{f}`: {compat.FEATURES[f]}" not in text] == []
