"""The one door into start-up (integration/startup/admit.py, rules.py): every rule is one row of ``RULES``, every row
has a bad input that it, and no row before it, catches, and the dry run, ``check`` and the launch refuse the same
config for the same reason first.

The cases run :func:`admit` on configs composed from verl's real ``ppo_trainer.yaml``; where a rule guards something
that a test machine cannot show for real (a verl without one of our names, a judge server, a foreign estimator in
verl's registry), the fake is the one boundary it names, and makes the rule see what the real fault would show it.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import socket
from pathlib import Path

import pytest

from verl_focal.integration.startup.admit import admit
from verl_focal.integration.startup.rules import RULES, STAGES, rule_named, table_markdown

ROOT = Path(__file__).resolve().parents[2]
STARTUP = ROOT / "verl_focal" / "integration" / "startup"

#: a config every rule passes in the check stage (micro-batches, an engine, no W&B)
BASE = ["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2",
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2",
        "actor_rollout_ref.rollout.name=vllm", "trainer.logger=[console]"]
JUDGE = ["algorithm.adv_estimator=cue_grpo", "algorithm.cue.partitioner=judge", "algorithm.cue.judge.model=m"]
SCORER = ["reward.custom_reward_function.path=pkg://verl_focal.reward",
          "reward.custom_reward_function.name=compute_score"]


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _advantage_name() -> str:
    from verl_focal.integration.compat import CONTRACT

    return next(t.name for t in CONTRACT if t.feature == "advantage")


def _missing(feature_gone: str, name: str):
    from verl_focal.integration import compat

    real = compat.missing
    return lambda feature: [name] if feature == feature_gone else real(feature)


def _parquet(path: Path, **cols) -> str:
    import pandas as pd

    pd.DataFrame(cols).to_parquet(path)
    return str(path)


def _local_inputs(tmp_path: Path) -> list[str]:
    """Data files with verl's columns and a model folder that loads (config.json, a tokenizer): what a dry run
    needs to reach the rules after its local-path check."""
    data = _parquet(tmp_path / "d.parquet", prompt=[[{"role": "user", "content": "1+1?"}]], data_source=["d"],
                    reward_model=[{"ground_truth": "2"}])
    model = tmp_path / "model"
    model.mkdir(exist_ok=True)
    (model / "config.json").write_text("{}")
    (model / "tokenizer.json").write_text("{}")
    return [f"data.train_files={data}", f"data.val_files={data}", f"actor_rollout_ref.model.path={model}"]


def _set_up(case: str, tmp_path: Path, monkeypatch) -> list[str]:
    """Extra overrides (and fakes) for the cases that need files or a fake boundary."""
    from verl_focal.integration import compat

    if case == "entry_contract":  # a verl without a name our entry point imports
        monkeypatch.setattr(compat, "missing", _missing("entry", "verl.trainer.main_ppo:run_ppo"))
    elif case == "estimator_hooks":
        monkeypatch.setattr(compat, "missing", _missing("advantage", _advantage_name()))
    elif case == "logger":  # no W&B key anywhere W&B would look
        for var in ("WANDB_API_KEY", "WANDB_MODE", "WANDB_DISABLED", "WANDB_CONFIG_DIR", "NETRC"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("HOME", str(tmp_path))
        monkeypatch.chdir(tmp_path)
    elif case == "versions":  # verl's pins against a torch it does not pin
        from verl_focal.integration.startup import versions

        monkeypatch.setattr(versions, "_installed", lambda name: "0.0.1" if name == "transformers" else None)
    elif case == "collisions":  # another package's function behind one of our names
        from verl_focal.integration import registration

        monkeypatch.setattr(registration, "collisions", lambda: {"maxrl": "other_pkg.maxrl"})
    elif case == "hooks_live":  # a TaskRunner whose process never ran our install steps
        from verl_focal.integration.hooks import arrange

        monkeypatch.setattr(arrange, "_live", lambda feature: False)
    elif case in ("local_paths",):
        return [*_local_inputs(tmp_path), f"data.train_files={tmp_path / 'none.parquet'}"]
    elif case == "data_columns":
        return [*_local_inputs(tmp_path),
                f"data.train_files={_parquet(tmp_path / 'q.parquet', question=['1+1?'], data_source=['d'])}"]
    elif case == "example_data":
        from verl_focal.data.example import EXAMPLE_MARK

        good = _parquet(tmp_path / "ex.parquet", prompt=[[{"role": "user", "content": "1+1?"}]], data_source=["d"],
                        reward_model=[{"ground_truth": "2"}])
        Path(good + ".stats.json").write_text(json.dumps({"source": EXAMPLE_MARK}))
        monkeypatch.delenv("VERL_FOCAL_ALLOW_EXAMPLE_DATA", raising=False)
        return [f"data.train_files={good}", f"data.val_files={good}", f"trainer.default_local_dir={tmp_path / 'c'}"]
    elif case == "run_identity":  # checkpoints of a run with another seed in this run's folder
        run = tmp_path / "run"
        (run / "global_step_5").mkdir(parents=True)
        (run / "verl_focal_run.json").write_text(json.dumps({"identity": {"data.seed": 7}}))
        return [*_local_inputs(tmp_path), f"trainer.default_local_dir={run}"]
    elif case == "run_size":
        return [*_local_inputs(tmp_path), "trainer.save_freq=10", "trainer.total_training_steps=20",
                f"trainer.default_local_dir={tmp_path}"]
    return []


#: rule -> (stage, overrides, needle of the finding, its level): each row's bad input
CASES: dict[str, tuple[str, list[str], str, str]] = {
    "entry_contract": ("launch", [], "needs verl's verl.trainer.main_ppo:run_ppo", "refuse"),
    "unread": ("check", ["+algorithm.focal_gamma=1.0"], "did you mean 'algorithm.focal.gamma'", "refuse"),
    "estimator_hooks": ("check", ["algorithm.adv_estimator=f_grpo"], "which the installed verl", "refuse"),
    "estimator_name": ("check", ["algorithm.adv_estimator=f_grop"], "did you mean 'f_grpo'", "refuse"),
    "sections": ("check", ["algorithm.adv_estimator=f_grpo", "algorithm.focal.gamma=-1"], "algorithm.focal.gamma",
                 "refuse"),
    "group_size": ("check", ["algorithm.adv_estimator=f_grpo", "actor_rollout_ref.rollout.n=1"],
                   "f_grpo needs rollout.n >= 2", "refuse"),
    "focal_signal": ("check", ["algorithm.adv_estimator=f_grpo", "algorithm.focal.gamma=20"],
                     "little trains", "warn"),
    "critic": ("check", ["algorithm.adv_estimator=f_grpo", "critic.enable=true"], "never reads a critic's values",
               "refuse"),
    "pf_ppo": ("check", ["algorithm.adv_estimator=grpo", "algorithm.use_pf_ppo=true"], "use_pf_ppo=true", "refuse"),
    "estimator_startup": ("check", ["algorithm.adv_estimator=passk_grpo", "algorithm.passk.k=16"],
                          "algorithm.passk.k=16", "refuse"),
    "partitioner": ("check", ["algorithm.adv_estimator=cue_grpo", "algorithm.cue.partitioner=strategy_cu"],
                    "did you mean 'strategy_cue'", "refuse"),
    "judge_topology": ("check", [*JUDGE, "algorithm.cue.judge.base_url=http://127.0.0.1:8000/v1",
                                 "trainer.nnodes=2"], "algorithm.cue.judge.base_url", "warn"),
    "reward_kwargs": ("check", [*SCORER, "+reward.custom_reward_function.reward_kwargs.bogus=1"], "bogus",
                      "refuse"),
    "logger": ("check", ["trainer.logger=[console,wandb]"], "no W&B key is configured", "refuse"),
    "ray_env": ("check", ["+ray_kwargs.ray_init.runtime_env.env_vars.X=2"], "Ray takes strings only", "refuse"),
    "no_update": ("check", ["actor_rollout_ref.actor.optim.lr=0"], "every update is zero", "refuse"),
    "reward_function": ("check", ["reward.custom_reward_function.path=/nonexistent/score.py",
                                  "reward.custom_reward_function.name=score"], "/nonexistent/score.py", "refuse"),
    "verl_choices": ("check", ["actor_rollout_ref.actor.use_kl_loss=true",
                               "actor_rollout_ref.actor.kl_loss_type=low_var_kll"], "did you mean 'low_var_kl'",
                     "refuse"),
    "separated_trainer": ("check", ["actor_rollout_ref.hybrid_engine=true"], "hybrid_engine", "refuse"),
    "verl_config": ("check", ["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=null"],
                    "verl's config check", "refuse"),
    "batch_padding": ("check", ["data.train_batch_size=100", "actor_rollout_ref.actor.ppo_mini_batch_size=64"],
                      "800 rows a step, and verl's v1 trainer pads each step to a multiple of 512", "warn"),
    # this suite's .venv has no engine: the rule says where it runs instead (tests/e2e/test_vllm_engine_check.py runs
    # vLLM's own classes in .venv-vllm)
    "engine": ("check", [], "vLLM is not installed on", "info"),
    "local_paths": ("dry_run", [], "no such file", "refuse"),
    "data_columns": ("dry_run", [], "missing column(s) ['prompt', 'reward_model']", "refuse"),
    "versions": ("check", [], "transformers", "warn"),
    "mandatory": ("check", ["actor_rollout_ref.rollout.name=???"], "(???): actor_rollout_ref.rollout.name", "warn"),
    "example_data": ("launch", [], "a real run on them is refused", "refuse"),
    "collisions": ("check", [], "verl's estimator 'maxrl' is other_pkg.maxrl", "warn"),
    "judge_online": ("check", [*JUDGE], "judge:", "refuse"),
    "hooks_live": ("actor", ["algorithm.adv_estimator=f_grpo"], "is not installed here", "refuse"),
    "judge_here": ("actor", [*JUDGE], "probed from the TaskRunner", "refuse"),
    "run_identity": ("dry_run", [], "holds checkpoints of another run", "refuse"),
    "run_size": ("dry_run", [], "validation: before step 1, 1 prompts x 1 = 1 responses", "info"),
}


def test_every_row_has_a_bad_input_case():
    assert sorted(CASES) == sorted(r.name for r in RULES)


def test_every_rule_function_is_in_the_table_exactly_once():
    """Each row's ``fn`` resolves, no function backs two rows, and every public ``check_*`` function of a module that
    holds rules is some row's (a rule written but never wired in fails here)."""
    fns = [r.fn for r in RULES]
    assert len(fns) == len(set(fns)), [f for f in fns if fns.count(f) > 1]
    modules = {f.partition(":")[0] for f in fns}
    for fn in fns:
        module, _, name = fn.partition(":")
        assert callable(getattr(importlib.import_module(module), name)), fn
    #: rules that run before a config exists: the trainer's name picks the config to compose
    before_config = {"verl_focal.integration.startup.compose:check_trainer_name"}
    for module in modules | {f"verl_focal.integration.startup.{p.stem}" for p in STARTUP.glob("*.py")}:
        path = ROOT / (module.replace(".", "/") + ".py")
        if not path.is_file():
            path = path.with_suffix("") / "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("check_") and (
                    f"{module}:{node.name}" not in before_config):
                assert f"{module}:{node.name}" in fns, f"{module}:{node.name} is a rule function in no row of RULES"


def test_every_row_runs_somewhere_at_a_known_level():
    for r in RULES:
        assert r.levels and set(r.levels) <= set(STAGES) and set(r.levels.values()) <= {"refuse", "warn"}, r.name
        assert set(r.after) <= {x.name for x in RULES}, r.name


@pytest.mark.parametrize("rule", sorted(CASES))
def test_each_rows_bad_input_is_caught_by_that_row(rule, composed_config, tmp_path, monkeypatch):
    stage, overrides, needle, level = CASES[rule]
    if rule == "judge_online" or rule == "judge_here":
        overrides = [*overrides, f"algorithm.cue.judge.base_url={_closed_port_url()}"]
    trainer = "one_step_off" if rule == "separated_trainer" else "ppo"
    overrides = [*BASE, *overrides, *_set_up(rule, tmp_path, monkeypatch)]
    if trainer == "ppo":
        config = composed_config(overrides)
    else:
        from verl_focal.integration.startup.compose import compose_config

        config = compose_config(overrides, trainer=trainer)
    report = admit(stage, config, overrides=overrides, trainer=trainer)
    found = [f for f in report.findings if f.rule == rule]
    assert found, (rule, report.findings)
    assert found[0].level == level and needle in found[0].message, (rule, found)
    if level == "refuse":  # and no earlier row refused it first
        assert report.first_refusal.rule == rule, report.first_refusal
    assert "\n" not in found[0].message


#: configs with a fault that a rule of every stage before Ray catches: the dry run, check and the launch must
#: name the same fault first
TWO_FAULTS = [
    ["algorithm.adv_estimator=f_grpo", "algorithm.focal.gamma=-1", "actor_rollout_ref.rollout.name=???"],
    ["algorithm.adv_estimator=f_grpo", "actor_rollout_ref.actor.optim.lr=0", "actor_rollout_ref.rollout.name=???"],
    ["+algorithm.focal_gamma=1", "actor_rollout_ref.actor.optim.lr=0"],
    ["algorithm.adv_estimator=grpo", "actor_rollout_ref.actor.kl_loss_coef=0.01", "algorithm.use_pf_ppo=true"],
]


@pytest.mark.parametrize("overrides", TWO_FAULTS, ids=lambda o: o[1].split("=")[0])
def test_the_dry_run_check_and_launch_refuse_the_same_fault_first(overrides, tmp_path, capsys, monkeypatch):
    """Through the real entry points: ``verl-focal check --skip-probe``, ``main_ppo --dry-run`` and the launch (up
    to Hydra's main, which must not be reached)."""
    from verl_focal.cli import main
    from verl_focal.main_ppo import main as main_ppo

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("verl_focal.main_ppo._hydra_main", lambda: pytest.fail("reached Hydra's main"))
    args = [*[o for o in BASE if not o.startswith("actor_rollout_ref.rollout.name")], *overrides]
    assert main(["check", "--skip-probe", *args]) == 2
    checked = capsys.readouterr().err
    first = re.search(r"FAILED: config: (.*)", checked).group(1)
    for argv in (["--dry-run", *args], args):
        with pytest.raises(SystemExit) as info:
            main_ppo(argv)
        err = capsys.readouterr().err
        assert info.value.code == 2 and f"error: {first}" in err, (argv[0], first, err)


def test_the_usage_doc_holds_the_generated_table():
    doc = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- rules table: begin -->\n(.*?)\n<!-- rules table: end -->", doc, re.S)
    assert m, "docs/usage.md lacks the rules table markers"
    assert m.group(1) == table_markdown(), "regenerate: python -m verl_focal.integration.startup.rules"


def test_no_rule_prints_or_warns_by_itself():
    """One report format: the rule modules return lines or raise; only the findings' renderer shows them."""
    for path in STARTUP.glob("*.py"):
        if path.name == "findings.py":
            continue
        text = path.read_text(encoding="utf-8").split('if __name__ == "__main__":')[0]  # a module's own command
        assert not re.search(r"warnings\.warn\(|\bprint\(|logger\.warning\(", text), path.name


def test_a_rule_named_is_the_row():
    assert rule_named("mandatory").levels == {"check": "warn", "dry_run": "refuse", "launch": "refuse"}
    with pytest.raises(KeyError):
        rule_named("no_such_rule")
