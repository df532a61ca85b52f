"""The verl contract (integration/compat.py): every verl name the glue touches is listed with its feature,
the installed verl honours it, and a missing name is found the way an install step looks for it."""

from __future__ import annotations

import ast
import pathlib

import pytest
from verl.experimental.separation.ray_trainer import SeparateRayPPOTrainer
from verl.trainer.ppo.v1.trainer_base import PPOTrainer

from verl_focal.integration import compat
from verl_focal.integration.hooks.trainer import FocalHookMixin

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
    from verl_focal.integration.hooks.post_import import is_hooked

    wrapped = {n for n in dir(SeparateRayPPOTrainer) if is_hooked(getattr(SeparateRayPPOTrainer, n))}
    assert wrapped == {"_fit_compute_log_prob", "_fit_compute_advantage"}
    assert {f"verl.experimental.separation.ray_trainer:SeparateRayPPOTrainer.{n}" for n in wrapped} == _named(
        "separated", "wrap")


def _verl_uses(path: pathlib.Path, modules: set[str]) -> tuple[set[str], set[str]]:
    """The verl names a file uses -- each ``from X import Y`` and each attribute read off one (``DataProto.from_dict``;
    off a module import, ``module:attr``) -- and the ones its classes subclass."""
    tree = ast.parse(path.read_text())
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("verl", "transfer_queue"):
            for a in node.names:
                module = f"{node.module}.{a.name}" in modules
                bound[a.asname or a.name] = f"{node.module}.{a.name}:" if module else f"{node.module}:{a.name}"
    used = {n for n in bound.values() if not n.endswith(":")}
    subclassed = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
            b = bound[node.value.id]
            used.add(b + node.attr if b.endswith(":") else f"{b}.{node.attr}")
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                name = base.value if isinstance(base, ast.Attribute) else base
                if isinstance(name, ast.Name) and name.id in bound:
                    subclassed.add(bound[name.id])
    return used, subclassed


def test_every_verl_name_the_glue_uses_is_in_the_contract_and_a_subclassed_one_says_so():
    files = [*sorted((PKG / "integration").glob("*.py")), *sorted((PKG / "lab" / "demo").glob("*.py")),
             PKG / "main_ppo.py", PKG / "plugin.py"]
    listed = {t.name for t in compat.CONTRACT}
    # `from verl.trainer.ppo import core_algos` imports a module: its names are listed one by one
    modules = {n.partition(":")[0] for n in listed}
    scans = [_verl_uses(f, modules) for f in files]
    used, subclassed = set().union(*(u for u, _ in scans)), set().union(*(c for _, c in scans))
    assert len(used) > 10 and subclassed, "the scan found almost no verl name"
    assert not used - listed, f"verl names used but not in compat.CONTRACT: {sorted(used - listed)}"
    listed_as_subclass = {t.name for t in compat.CONTRACT if t.how == "subclass"}
    assert subclassed <= listed_as_subclass, f"subclassed but not listed so: {sorted(subclassed - listed_as_subclass)}"


def test_a_name_is_found_as_an_attribute_a_dataclass_field_or_an_attribute_set_on_self():
    assert compat._resolve("verl.protocol:DataProto.non_tensor_batch")  # dataclass field
    assert compat._resolve("verl.experimental.separation.ray_trainer:SeparateRayPPOTrainer.reward_extra_infos_dict")
    assert compat._resolve("verl.trainer.ppo.v1.trainer_base:PPOTrainer.tokenizer")  # set in RayPPOTrainer-like init
    assert not compat._resolve("verl.trainer.ppo.v1.trainer_base:PPOTrainer.no_such_attribute")
    assert compat._resolve('verl.trainer.ppo.ray_trainer:compute_advantage["uid"]')  # a key in verl's source
    assert not compat._resolve('verl.trainer.ppo.ray_trainer:compute_advantage["no_such_key"]')
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
    assert f"pip install '{compat.pinned_verl_spec()}'" in msg
    compat.require(["entry", "v1"], "verl's own estimators")  # other features: nothing to refuse


def test_check_says_in_one_line_when_verl_is_not_the_pinned_version(monkeypatch):
    import verl

    from verl_focal.check import validate_here

    ok = ["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4",
          "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8",
          "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8", "algorithm.adv_estimator=f_grpo"]
    assert not [w for w in validate_here(ok)["warnings"] if "is tested against" in w]
    monkeypatch.setattr(verl, "__version__", "0.10.0")
    out = validate_here(ok)
    lines = [w for w in out["warnings"] if "is tested against" in w]
    assert len(lines) == 1 and compat.pinned_verl_spec() in lines[0] and "verl 0.10.0 is installed" in lines[0]
    assert "\n" not in lines[0] and not out["problems"]


def test_docs_architecture_lists_every_contract_name_and_feature():
    text = (PKG.parent / "docs" / "architecture.md").read_text()
    assert [t.name for t in compat.CONTRACT if f"`{t.name}`" not in text] == []
    assert [f for f in compat.FEATURES if f"- `{f}`: {compat.FEATURES[f]}" not in text] == []


@pytest.mark.parametrize("feature,module,label", [
    ("legacy", "verl.trainer.ppo.ray_trainer", "the legacy RayPPOTrainer"),
    ("v1", "verl.trainer.ppo.v1.utils", "the v1 PPOTrainer"),
    ("separated", "verl.experimental.separation.ray_trainer", "the one-step-off trainer"),
])
def test_require_refuses_a_family_whose_step_calls_verls_own_compute_advantage(monkeypatch, feature, module, label):
    """The contract of identity: the name exists, but the module global the family's step calls is verl's function
    (as after an upstream move that our hook did not follow)."""
    import importlib
    import inspect

    import verl_focal.plugin  # noqa: F401
    from verl_focal.config.errors import ConfigError

    importlib.import_module("verl.experimental.separation.ray_trainer")  # the hooks install on import
    importlib.import_module("verl.trainer.ppo.v1")
    compat.require([feature], "algorithm.adv_estimator=f_grpo")  # ours: passes
    mod = importlib.import_module(module)
    monkeypatch.setattr(mod, "compute_advantage", inspect.unwrap(mod.compute_advantage))
    with pytest.raises(ConfigError) as e:
        compat.require(["estimators", "advantage", feature], "algorithm.adv_estimator=f_grpo")
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"algorithm.adv_estimator=f_grpo refused: {label} calls ")
    assert f"(bound in {module})" in msg and f"on verl {compat._verl_version()}" in msg
    assert compat.step_problem("advantage") is None  # the demo's features: nothing to follow


def test_step_callee_follows_the_globals_of_each_familys_step():
    import verl_focal.plugin  # noqa: F401

    found = {family: compat.step_callee(path, via) for _, family, path, via in compat.STEP_CALLERS}
    assert {f: w for f, (w, _) in found.items()} == {
        "the legacy RayPPOTrainer": "verl.trainer.ppo.ray_trainer",
        "the v1 PPOTrainer": "verl.trainer.ppo.v1.utils",
        "the one-step-off trainer": "verl.experimental.separation.ray_trainer",
        "the fully-async trainer": "verl.experimental.separation.ray_trainer"}
    assert all(compat.is_hooked(fn) for _, fn in found.values())


def test_outside_the_range_nothing_installs_and_our_estimators_are_refused(monkeypatch, caplog):
    from verl_focal.config.errors import ConfigError

    monkeypatch.setattr(compat, "_verl_version", lambda: "0.10.0")
    monkeypatch.setattr(compat, "_DISABLED", {})
    assert not compat.verl_in_range()
    ran = []
    assert compat.install("estimators", lambda: ran.append(1)) is False and ran == []
    lines = [r.getMessage() for r in caplog.records if r.name == compat.__name__]
    assert len(lines) == 1 and f"lacks a release in {compat.pinned_verl_spec()}" in lines[0]
    with pytest.raises(ConfigError) as e:
        compat.require(["estimators", "advantage", "v1"], "algorithm.adv_estimator=maxrl")
    assert "\n" not in str(e.value) and "verl 0.10.0 is installed: verl-focal installs nothing into it" in str(e.value)
    compat.require(["entry"], "python -m verl_focal.main_ppo")  # verl's own estimators: not ours to refuse
    for inside in ("0.9.0", "0.9.1", "0.9.7"):
        monkeypatch.setattr(compat, "_verl_version", lambda v=inside: v)
        assert compat.verl_in_range()
    monkeypatch.setattr(compat, "_verl_version", lambda: "0.10.0.dev0")  # the next minor's pre-releases: outside
    assert not compat.verl_in_range()
