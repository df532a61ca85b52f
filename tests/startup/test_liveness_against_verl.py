"""Each entry of :data:`verl_focal.integration.startup.liveness.LIVENESS` against verl 0.9.1's own code, the way
``compat.CONTRACT``'s names are: the condition under which verl reads the keys is found in verl's source (or
computed by verl's own function), so a verl upgrade that reads them elsewhere fails here.
"""

from __future__ import annotations

import ast
import importlib
import itertools
import pathlib

import pytest
import verl
from omegaconf import OmegaConf

from verl_focal.integration.startup.liveness import LIVENESS, SAMPLING_ROLLOUTS, dead_key_problems, is_live, uses_critic

VERL = pathlib.Path(verl.__file__).resolve().parent
#: verl's config schema (dataclasses and YAML mirrors) declares every key; those are not reads
SOURCES = [p for p in VERL.rglob("*.py") if "/config/" not in str(p) and "/tests/" not in str(p)]


def _guarded_reads(attrs: set[str], owner: str | None = None) -> list[tuple[str, int, list[str]]]:
    """Every attribute read ``X.<attr>`` (``X`` ending in ``.<owner>`` when given) in verl's code, with the tests of
    the ``if`` statements whose true branch encloses it: (file, line, [test source, ...])."""
    found = []

    def visit(node, guards, path):
        if isinstance(node, ast.Attribute) and node.attr in attrs and (
                owner is None or isinstance(node.value, ast.Attribute) and node.value.attr == owner):
            found.append((str(path.relative_to(VERL)), node.lineno, guards))
        if isinstance(node, ast.If):
            visit(node.test, guards, path)
            for child in node.body:
                visit(child, guards + [ast.unparse(node.test)], path)
            for child in node.orelse:
                visit(child, guards, path)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, guards, path)

    for path in SOURCES:
        visit(ast.parse(path.read_text(encoding="utf-8")), [], path)
    return found


@pytest.mark.parametrize("entry", LIVENESS, ids=lambda e: e.prefixes[0])
def test_every_entry_names_a_verl_function_that_exists(entry):
    module, _, qual = entry.verl.partition(":")
    obj = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    assert callable(obj)


def test_the_critic_is_built_exactly_when_verls_need_critic_says():
    from verl.trainer.ppo.utils import need_critic

    for enable, est in itertools.product((None, True, False), ("gae", "grpo", "f_grpo", "reinforce_plus_plus")):
        cfg = OmegaConf.create({"critic": {"enable": enable}, "algorithm": {"adv_estimator": est}})
        with pytest.warns(UserWarning) if enable is None and est != "gae" else _nothing():
            verl_says = need_critic(cfg)
        assert uses_critic(cfg) == verl_says, (enable, est)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_kl_loss_coef_and_type_are_read_only_under_use_kl_loss():
    reads = _guarded_reads({"kl_loss_coef", "kl_loss_type"})
    assert any(f.endswith("workers/utils/losses.py") for f, _, _ in reads), reads  # the actor loss reads them
    for f, line, guards in reads:
        assert any("use_kl_loss" in g for g in guards), f"{f}:{line} reads the KL loss settings without use_kl_loss"


def test_the_reward_kl_settings_are_read_only_under_use_kl_in_reward():
    reads = _guarded_reads({"kl_ctrl", "kl_penalty"}, owner="algorithm")
    assert len(reads) >= 2, reads
    for f, line, guards in reads:
        assert any("use_kl_in_reward" in g for g in guards), f"{f}:{line} reads algorithm.kl_* without the guard"


def test_do_sample_is_read_by_no_vllm_sglang_or_agent_loop_code():
    readers = set()
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        if any(isinstance(n, ast.Attribute) and n.attr == "do_sample" or
               isinstance(n, ast.Constant) and n.value == "do_sample" for n in ast.walk(tree)):
            readers.add(str(path.relative_to(VERL)))
    assert {"workers/rollout/hf_rollout.py", "workers/rollout/naive/naive_rollout.py"} <= readers, readers
    engines = [r for r in readers if any(s in r for s in ("vllm", "sglang", "agent_loop"))]
    assert engines == [], engines
    # the others: the legacy trainer's validation meta-info (which only the hf/naive rollouts read) and the check
    # that val_kwargs.do_sample comes with a temperature above 0
    assert readers - {"workers/rollout/hf_rollout.py", "workers/rollout/naive/naive_rollout.py"} <= {
        "trainer/ppo/ray_trainer.py", "utils/config.py"}, readers
    assert set(SAMPLING_ROLLOUTS) == {"hf", "naive"}


def _cfg(**over):
    base = {"algorithm": {"adv_estimator": "grpo", "use_kl_in_reward": False},
            "critic": {"enable": None},
            "actor_rollout_ref": {"actor": {"use_kl_loss": False}, "rollout": {"name": "vllm"}}}
    cfg = OmegaConf.create(base)
    for k, v in over.items():
        OmegaConf.update(cfg, k.replace("__", "."), v)
    return cfg


@pytest.mark.parametrize(("key", "value", "live_with", "needle"), [
    ("actor_rollout_ref.actor.kl_loss_coef", "0.001", {"actor_rollout_ref.actor.use_kl_loss": True},
     "add actor_rollout_ref.actor.use_kl_loss=true"),
    ("critic.optim.lr", "3.4e-7", {"algorithm.adv_estimator": "gae"}, "actor_rollout_ref.actor.optim.lr"),
    ("algorithm.kl_ctrl.kl_coef", "0.01", {"algorithm.use_kl_in_reward": True}, "add algorithm.use_kl_in_reward=true"),
    ("actor_rollout_ref.rollout.do_sample", "false", {"actor_rollout_ref.rollout.name": "hf"}, "identical"),
    ("actor_rollout_ref.rollout.val_kwargs.do_sample", "false", {"actor_rollout_ref.rollout.name": "hf"},
     "val_kwargs.temperature=0"),
])
def test_a_dead_key_is_one_line_with_a_fix_that_makes_it_live(key, value, live_with, needle):
    cfg = _cfg()
    (line,) = dead_key_problems(cfg, [(key, value)])
    assert line.startswith(f"{key}={value} is not read under this configuration (") and needle in line, line
    assert "\n" not in line
    for k, v in live_with.items():
        OmegaConf.update(cfg, k, v)
    assert dead_key_problems(cfg, [(key, value)]) == [] and is_live(key, cfg)


def test_the_fixes_never_name_a_key_the_table_calls_dead_there():
    """A hint is a promise: every key a fix names is live under the config the fix is given for (the entry's own
    keys aside: those fixes say to remove them)."""
    import re

    cfg = _cfg()
    for e in LIVENESS:
        named = re.findall(r"[a-z_]+(?:\.[a-z_]+)+", e.fix(cfg))
        assert named or "remove it" in e.fix(cfg)
        for key in named:
            assert e.covers(key) or is_live(key, cfg), (e.prefixes, key)


def test_keys_the_table_does_not_cover_are_live():
    assert is_live("actor_rollout_ref.actor.optim.lr", _cfg())
    assert dead_key_problems(_cfg(), [("trainer.total_epochs", "3")]) == []


def test_gamma_and_lam_are_read_by_gae_and_reinforce_plus_plus_only():
    """In verl's ``compute_advantage`` the ``gamma`` and ``lam`` arguments reach only the GAE branch; among the
    registered estimators only REINFORCE++ reads ``config.gamma``; ``lam`` nowhere else."""
    import inspect

    from verl.trainer.ppo import core_algos, ray_trainer

    from verl_focal.integration.startup.liveness import GAMMA_ESTIMATORS, LAM_ESTIMATORS

    fn = inspect.unwrap(ray_trainer.compute_advantage)
    tree = ast.parse(_dedent(inspect.getsource(fn)))
    uses = []

    def visit(node, guards):
        if isinstance(node, ast.Name) and node.id in ("gamma", "lam") and isinstance(node.ctx, ast.Load):
            uses.append((node.id, guards))
        if isinstance(node, ast.If):
            visit(node.test, guards)
            for c in node.body:
                visit(c, guards + [ast.unparse(node.test)])
            for c in node.orelse:
                visit(c, guards + [f"not ({ast.unparse(node.test)})"])
            return
        for c in ast.iter_child_nodes(node):
            visit(c, guards)

    visit(tree, [])
    assert {u for u, _ in uses} == {"gamma", "lam"}
    for name, guards in uses:
        assert guards and guards[-1] == "adv_estimator == AdvantageEstimator.GAE", (name, guards)
    readers = {str(getattr(k, "value", k)) for k, f in core_algos.ADV_ESTIMATOR_REGISTRY.items()
               if "config.gamma" in inspect.getsource(inspect.unwrap(f)) or '"gamma"' in inspect.getsource(f)}
    assert readers == {"reinforce_plus_plus"}, readers
    assert set(GAMMA_ESTIMATORS) == readers | {"gae"} and set(LAM_ESTIMATORS) == {"gae"}


def _dedent(src: str) -> str:
    import textwrap

    return textwrap.dedent(src)


def test_the_focal_estimators_are_those_whose_spec_reads_the_focal_exponent():
    from verl_focal.estimators import all_specs
    from verl_focal.integration.startup.liveness import FOCAL_ESTIMATORS

    assert set(FOCAL_ESTIMATORS) == {s.name for s in all_specs() if s.reads("focal", "gamma")}
