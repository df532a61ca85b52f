"""The verl contract (integration/compat.py) names every verl symbol we use and every method we override."""

from __future__ import annotations

import ast
import pathlib

from verl.trainer.ppo.v1.trainer_base import PPOTrainer

from verl_focal.integration import compat
from verl_focal.integration.trainer import FocalHookMixin

PKG = pathlib.Path(compat.__file__).resolve().parents[1]


def test_installed_verl_honours_the_full_contract():
    assert compat.check_contract(full=True) == []


def test_trainer_methods_are_exactly_what_the_hook_overrides():
    overridden = {name for name, attr in vars(FocalHookMixin).items() if hasattr(PPOTrainer, name) and callable(attr)}
    assert set(compat.TRAINER_METHODS) == overridden
    assert {"__init__", "_compute_advantage", "_compute_old_log_prob", "_val_metrics_update"} <= overridden


def test_the_separated_trainers_contract_holds():
    import importlib

    for mod, names in compat.SEPARATED_CONTRACT.items():
        m = importlib.import_module(mod)
        assert all(hasattr(m, n) for n in names), (mod, names)


def test_legacy_wrapped_functions_are_in_the_contract():
    for mod, names in compat.LEGACY_WRAPPED.items():
        assert set(names) <= set(compat.FULL_CONTRACT[mod])


def _verl_imports(path: pathlib.Path) -> set[tuple[str, str]]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("verl", "transfer_queue"):
            found |= {(node.module, a.name) for a in node.names}
    return found


def test_every_verl_symbol_the_glue_imports_is_in_the_contract():
    files = sorted((PKG / "integration").glob("*.py")) + [PKG / "main_ppo.py", PKG / "plugin.py"]
    used = set().union(*(_verl_imports(f) for f in files))
    assert used, "the scan found no verl import at all"
    contract = {(mod, name) for mod, names in {**compat.FULL_CONTRACT, **compat.SEPARATED_CONTRACT}.items()
                for name in names}
    # `from verl.trainer.ppo import core_algos` imports a module, which the contract checks by importing it
    missing = {(m, n) for m, n in used - contract if f"{m}.{n}" not in compat.FULL_CONTRACT}
    assert not missing, f"verl symbols used but not in compat.FULL_CONTRACT: {sorted(missing)}"


def test_check_says_in_one_line_when_verl_is_not_the_pinned_version(monkeypatch):
    import verl

    from verl_focal.integration.check import validate_here

    ok = ["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4",
          "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8",
          "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8", "algorithm.adv_estimator=f_grpo"]
    assert not [w for w in validate_here(ok)["warnings"] if "is tested against" in w]
    monkeypatch.setattr(verl, "__version__", "0.9.2")
    out = validate_here(ok)
    lines = [w for w in out["warnings"] if "is tested against" in w]
    assert len(lines) == 1 and "==0.9.1" in lines[0] and "verl 0.9.2 is installed" in lines[0]
    assert "\n" not in lines[0] and not out["problems"]
