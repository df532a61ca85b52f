"""The start-up rules, one row each: what runs where, at which level, on which keys.

:data:`RULES` is the one list of everything checked before a run's models load.  A row names its rule function
(``fn``, the public function of a start-up module that holds the rule; tests hold every such function to exactly one
row), the stages it runs in and the level of its refusal in each, the keys it reads and one line on what it
refuses.  :func:`~verl_focal.integration.startup.admit.admit` runs the rows of one stage in this order; docs/usage.md's
"What is checked where" is generated from it (:func:`table_markdown`).

The stages (:data:`STAGES`), where each runs:

* ``check``: ``verl-focal check``, on the submitting machine (a mandatory ``???`` is a warning there: it checks a
  config that may name no engine yet);
* ``dry_run``: ``python -m verl_focal.main_ppo --dry-run`` (and the recipes' ``--dry-run``), which also checks local
  files;
* ``launch``: ``python -m verl_focal.main_ppo`` before Ray starts (with or without Hydra's own flags, every
  trainer);
* ``actor``: our TaskRunner inside Ray, on the node that runs the steps, before any worker or model starts;
* ``trainer``: the hooked v1 trainer's constructor (stock ``verl.trainer.main_ppo`` with a ``focal_*`` mode).

A rule's function raises :class:`~verl_focal.config.errors.ConfigError` for what it refuses, and returns lines
(warnings; ``lines="info"``: the run's size) for what it only reports.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from verl_focal.config.errors import ConfigError
from verl_focal.config.key_names import config_get

__all__ = ["STAGES", "Admission", "Rule", "RULES", "rule_named", "table_markdown"]

STAGES = ("check", "dry_run", "launch", "actor", "trainer")


@dataclass
class Admission:
    """One config on its way in: what the rules read, and what they leave for the later ones (``sections``)."""

    stage: str
    config: Any
    overrides: tuple[str, ...] = ()
    trainer: str = "ppo"
    skip_judge: bool = False
    #: our ``algorithm.*`` sections, validated (the ``sections`` rule sets them)
    sections: dict | None = None

    @property
    def estimator(self) -> Any:
        return config_get(self.config, "algorithm.adv_estimator")

    @property
    def spec(self) -> Any:
        from verl_focal.integration.registration import get_spec

        return get_spec(self.estimator)


@dataclass(frozen=True)
class Rule:
    """One start-up rule (module docstring)."""

    name: str
    #: the rule function, ``module:name``
    fn: str
    levels: Mapping[str, str]
    keys: tuple[str, ...]
    what: str
    run: Callable[[Admission], Iterable[str] | None]
    #: the level of the lines ``run`` returns
    lines: str = "warn"
    #: rules that must have passed first (their results are read here)
    after: tuple[str, ...] = ()
    #: what the rule needs where it runs: "" (the config), "verl", "files", "network", "engine"
    needs: str = ""


def _levels(refuse: Iterable[str] = (), warn: Iterable[str] = ()) -> dict[str, str]:
    out = {s: "refuse" for s in refuse}
    out.update({s: "warn" for s in warn})
    return {s: out[s] for s in STAGES if s in out}


#: the stages that see the user's command line (and its overrides) before Ray starts
BEFORE_RAY = ("check", "dry_run", "launch")
#: every stage: the rules that also run where the steps run (a node's own environment, files and verl)
EVERYWHERE = STAGES


# -- how each rule is called (the rule functions live in their own modules) --------------------------------------

def _entry_contract(a: Admission) -> None:
    from verl_focal.integration.compat import features_for, require

    require(features_for(a.trainer, ours=False),
            "python -m verl_focal.main_ppo" + (f" --trainer {a.trainer}" if a.trainer != "ppo" else ""))


def _unread(a: Admission) -> list[str]:
    from verl_focal.integration.startup.unread import check_unread

    return check_unread(a.config, list(a.overrides), a.trainer) if a.overrides else []


def _hooks(a: Admission) -> list[str]:
    """The features of ours this run's trainer needs (registry, advantage hook, the trainer's hook), by
    :func:`~verl_focal.integration.compat.features_for`."""
    from verl_focal.integration.compat import features_for

    use_v1 = bool(config_get(a.config, "trainer.use_v1", True))
    return [f for f in features_for(a.trainer, use_v1) if f != "entry" and not f.endswith("_entry")]


def _estimator_hooks(a: Admission) -> None:
    from verl_focal.integration.compat import require
    from verl_focal.integration.startup.estimator import is_our_name

    est = a.estimator
    if is_our_name(est):
        require(_hooks(a), f"algorithm.adv_estimator={getattr(est, 'value', est)}")


def _estimator_name(a: Admission) -> None:
    from verl_focal.integration.compat import missing
    from verl_focal.integration.registration import register_all
    from verl_focal.integration.startup.estimator import check_estimator_name

    if not missing("estimators"):  # else verl's own estimators only (the plugin warned)
        register_all()
    check_estimator_name(a.estimator)


def _sections(a: Admission) -> None:
    from verl_focal.config.schema import validate_algorithm_config

    a.sections = validate_algorithm_config(a.config.algorithm)


def _group_size(a: Admission) -> None:
    from verl_focal.integration.startup.no_signal import check_group_size

    check_group_size(a.config, a.spec)


def _focal_signal(a: Admission) -> list[str]:
    from verl_focal.integration.startup.no_signal import check_focal_signal

    return check_focal_signal(a.config, a.spec, a.sections or {})


def _partitions(a: Admission) -> bool:
    spec = a.spec
    return spec is not None and spec.prepare is not None and a.sections is not None


def _partitioner(a: Admission) -> None:
    from verl_focal.integration.startup.estimator import check_partitioner

    if not _partitions(a):
        return
    try:
        check_partitioner(a.sections["cue"])
    except ConfigError:
        raise
    except ValueError as e:  # a consumer's own check (catalogue file, backend, ...)
        raise ConfigError(str(e)) from None


def _judge_topology(a: Admission) -> list[str]:
    from verl_focal.partition.judge.check import judge_topology_warnings

    if not _partitions(a) or a.sections["cue"].partitioner != "judge":
        return []
    return judge_topology_warnings(a.sections["cue"].judge, int(config_get(a.config, "trainer.nnodes", 1) or 1))


def _no_update(a: Admission) -> None:
    from verl_focal.integration.startup.no_signal import is_group_relative
    from verl_focal.integration.startup.no_update import check_update

    check_update(a.config, group_relative=is_group_relative(a.config, a.spec))


def _reward_function(a: Admission) -> None:
    from verl_focal.integration.compat import missing
    from verl_focal.integration.startup.verl_checks import check_reward_function

    if not missing("entry"):  # verl's names it reads (else our entry point refuses, naming them)
        check_reward_function(a.config)


def _verl_choices(a: Admission) -> None:
    from verl_focal.integration.compat import missing
    from verl_focal.integration.startup.verl_checks import check_verl_choices

    if not missing("entry"):
        check_verl_choices(a.config)


def _separated(a: Admission) -> None:
    from verl_focal.integration.startup.compose import check_separated_trainer

    check_separated_trainer(a.config, a.trainer)


def _verl_config(a: Admission) -> list[str]:
    from verl_focal.integration.startup.estimator import check_verl_config

    with contextlib.redirect_stdout(io.StringIO()):  # verl prints "[validate_config] All ... passed"
        return check_verl_config(a.config, a.trainer)


def _mandatory(a: Admission) -> list[str]:
    from verl_focal.integration.startup.mandatory import check_mandatory

    return check_mandatory(a.config, refuse=a.stage != "check")


def _example_data(a: Admission) -> list[str]:
    from verl_focal.integration.startup.local_inputs import check_example_data

    return check_example_data(a.config, launch=a.stage == "launch")


def _versions(a: Admission) -> list[str]:
    from verl_focal.integration.startup.versions import version_mismatches

    return version_mismatches()


def _collisions(a: Admission) -> list[str]:
    from verl_focal.integration.registration import collision_lines

    return collision_lines()


def _judge_online(a: Admission) -> None:
    from verl_focal.partition.judge import check_judge

    if a.skip_judge or not _partitions(a) or a.sections["cue"].partitioner != "judge":
        return
    problems = check_judge(a.sections["cue"].judge)
    if problems:
        raise ConfigError("; ".join(f"judge: {p}" for p in problems))


def _hooks_live(a: Admission) -> None:
    import os
    import sys

    if a.spec is None:
        return
    what = f"algorithm.adv_estimator={getattr(a.estimator, 'value', a.estimator)}"
    # the install steps' module is looked up, not imported: where no one imported it, nothing is installed here
    arrange = sys.modules.get("verl_focal.integration.hooks.arrange")
    if arrange is None:
        raise ConfigError(f"{what} needs our hooks in this process ({os.uname().nodename}, pid {os.getpid()}), but "
                          "the plugin never arranged them here: launch with python -m verl_focal.main_ppo, or pass "
                          "+ray_kwargs.ray_init.runtime_env.env_vars.VERL_USE_EXTERNAL_MODULES=verl_focal.plugin")
    arrange.require_live([f for f in _hooks(a) if f != "estimators"], what)  # the installs the step runs through


def _judge_here(a: Admission) -> None:
    from verl_focal.partition.judge.check import probe_judge_here

    if _partitions(a) and a.sections["cue"].partitioner == "judge":
        probe_judge_here(a.sections["cue"].judge)


def _run_identity(a: Admission) -> list[str]:
    from verl_focal.integration.startup.run_identity import check_run_identity

    return check_run_identity(a.config, write=a.stage == "launch")


def _run_size(a: Admission) -> list[str]:
    from verl_focal.integration.startup.run_size import run_size_lines

    return run_size_lines(a.config)


_S = "verl_focal.integration.startup."

#: (name, fn module:name, refuse-in, warn-in, keys, what, run, extra) -- built into :data:`RULES` below; run None:
#: ``fn(config)`` (:func:`_config_only`)
_ROWS: tuple[tuple, ...] = (
    ("entry_contract", _S + "rules:require_entry", BEFORE_RAY, (), (),
     "the verl names our entry point imports exist in the installed verl", _entry_contract, {"needs": "verl"}),
    ("unread", _S + "unread:check_unread", BEFORE_RAY, (), ("(every override)",),
     "a key the user set that nothing reads under this configuration (no such key, a legacy block, a key of "
     "another estimator's section, a key verl reads only under a condition this config does not meet)",
     _unread, {}),
    ("estimator_hooks", _S + "rules:require_estimator_hooks", EVERYWHERE, (), ("algorithm.adv_estimator",),
     "our estimator: the verl names its hooks need on this trainer exist", _estimator_hooks, {"needs": "verl"}),
    ("estimator_name", _S + "estimator:check_estimator_name", EVERYWHERE, (), ("algorithm.adv_estimator",),
     "a registered estimator (did-you-mean), and ours behind our names", _estimator_name, {"needs": "verl"}),
    ("sections", "verl_focal.config.schema:validate_algorithm_config", EVERYWHERE, (),
     ("algorithm.focal", "algorithm.cue", "algorithm.passk", "algorithm.unlikely", "algorithm.maxrl",
      "algorithm.ds"), "our sections: ranges, choices, unknown keys", _sections, {}),
    ("group_size", _S + "no_signal:check_group_size", EVERYWHERE, (),
     ("actor_rollout_ref.rollout.n", "algorithm.adv_estimator"),
     "rollout.n below what a group-relative estimator needs", _group_size, {"needs": "verl"}),
    ("focal_signal", _S + "no_signal:check_focal_signal", EVERYWHERE, (),
     ("algorithm.focal.gamma", "actor_rollout_ref.rollout.n"),
     "a focal γ whose largest weight at this N trains nothing (or little: a warning)", _focal_signal,
     {"after": ("sections",)}),
    ("critic", _S + "no_signal:check_critic", EVERYWHERE, (), ("critic.enable",),
     "a critic trained for an estimator that reads no values", None, {"needs": "verl"}),
    ("pf_ppo", _S + "no_signal:check_pf_ppo", EVERYWHERE, (), ("algorithm.use_pf_ppo",),
     "PF-PPO where verl does not apply it, or applies it to the wrong rows (v1 + gae)", None, {"needs": "verl"}),
    ("estimator_startup", "verl_focal.integration.registration:run_startup_check", EVERYWHERE, (),
     ("algorithm.passk.k", "algorithm.unlikely", "algorithm.ds", "actor_rollout_ref.rollout.n"),
     "an estimator's own checks across sections (e.g. passk.k against rollout.n, the old log-probs it reads)",
     None, {}),
    ("partitioner", _S + "estimator:check_partitioner", EVERYWHERE, (), ("algorithm.cue",),
     "the cue partitioner resolves, its kwargs bind, its cue set loads; the judge's offline checks", _partitioner,
     {"after": ("sections",)}),
    ("judge_topology", "verl_focal.partition.judge.check:judge_topology_warnings", (), EVERYWHERE,
     ("algorithm.cue.judge", "trainer.nnodes"), "judge settings that name one node's resources on several nodes",
     _judge_topology, {"after": ("sections",)}),
    ("reward_kwargs", _S + "estimator:check_reward_kwargs", EVERYWHERE, (),
     ("reward.custom_reward_function.reward_kwargs",), "our scorer's kwargs: known names, ranges", None,
     {}),
    ("logger", "verl_focal.integration.startup.tracking:check_logger", EVERYWHERE, (), ("trainer.logger",),
     "a wandb logger without W&B installed or a key configured where the logger runs", None, {}),
    ("ray_env", "verl_focal.integration.startup.ray_env:check_env_vars", EVERYWHERE, (),
     ("ray_kwargs.ray_init.runtime_env.env_vars",), "Ray's env vars are strings", None, {}),
    ("no_update", "verl_focal.integration.startup.no_update:check_update", EVERYWHERE, (),
     ("actor_rollout_ref.actor.optim.lr", "actor_rollout_ref.actor.ppo_epochs", "trainer.total_epochs",
      "trainer.total_training_steps", "actor_rollout_ref.rollout.temperature", "actor_rollout_ref.rollout.top_k"),
     "settings with which nothing trains", _no_update, {}),
    ("reward_function", _S + "verl_checks:check_reward_function", EVERYWHERE, (),
     ("reward.custom_reward_function",), "the custom reward function's file and name", _reward_function,
     {"needs": "verl"}),
    ("verl_choices", _S + "verl_checks:check_verl_choices", EVERYWHERE, (),
     ("algorithm.kl_penalty", "actor_rollout_ref.actor.kl_loss_type", "actor_rollout_ref.actor.policy_loss"),
     "verl's own enumerations (did-you-mean)", _verl_choices, {"needs": "verl"}),
    ("separated_trainer", _S + "compose:check_separated_trainer", BEFORE_RAY, (), ("async_training", "rollout"),
     "what verl's one-step-off and fully-async trainers assert after Ray starts", _separated, {}),
    ("verl_config", _S + "estimator:check_verl_config", BEFORE_RAY, (), ("(verl's config)",),
     "verl's own validate_config (batch arithmetic, micro-batch sizes); its warnings as ours", _verl_config,
     {"needs": "verl"}),
    ("batch_padding", _S + "batch:check_batch_padding", (), BEFORE_RAY,
     ("data.train_batch_size", "actor_rollout_ref.actor.ppo_mini_batch_size", "actor_rollout_ref.rollout.n"),
     "a batch that verl's v1 trainer pads with no-op rows each step (the rows, the share, a size that pads none)",
     None, {}),
    ("engine", _S + "engine:check_engine", (*BEFORE_RAY, "actor"), (),
     ("actor_rollout_ref.rollout", "actor_rollout_ref.model.path", "data.max_prompt_length",
      "data.max_response_length"),
     "what the rollout engine itself refuses (vLLM's config classes on the model folder: parallelism, memory "
     "fraction, context length); where it is not installed, one line, and the TaskRunner checks on the node",
     None, {"needs": "engine"}),
    ("local_paths", "verl_focal.integration.startup.local_inputs:check_local_paths", ("dry_run",), (),
     ("data.train_files", "data.val_files", "actor_rollout_ref.model.path"),
     "local data files and model folders exist and load", None, {"needs": "files"}),
    ("data_columns", "verl_focal.integration.startup.local_inputs:check_data_columns", ("dry_run", "launch"), (),
     ("data.train_files", "data.val_files", "data.prompt_key"),
     "the data files hold the columns verl's dataset and the reward read", None, {"needs": "files"}),
    ("versions", _S + "versions:version_mismatches", (), BEFORE_RAY, (),
     "the installed engine, torch and transformers against verl's pins", _versions, {"needs": "verl"}),
    ("mandatory", _S + "mandatory:check_mandatory", ("dry_run", "launch"), ("check",), ("(any ??? value)",),
     "a mandatory value left at ??? (verl raises for it only after ray.init)", _mandatory, {}),
    ("example_data", "verl_focal.integration.startup.local_inputs:check_example_data", ("launch",), ("dry_run",),
     ("data.train_files", "data.val_files"), "example data (prep-data example) in a real launch", _example_data,
     {"needs": "files"}),
    ("collisions", "verl_focal.integration.registration:collision_lines", (), ("check",), (),
     "our estimator names that verl's registry maps to another package's function", _collisions,
     {"needs": "verl"}),
    ("judge_online", "verl_focal.partition.judge.check:check_judge", ("check",), (), ("algorithm.cue.judge",),
     "the judge server answers, its key is set, it serves the model", _judge_online,
     {"after": ("sections",), "needs": "network"}),
    ("hooks_live", "verl_focal.integration.hooks.arrange:require_live", ("actor",), (), ("algorithm.adv_estimator",),
     "our hooks are in effect in the process that runs the steps", _hooks_live, {"needs": "verl"}),
    ("judge_here", "verl_focal.partition.judge.check:probe_judge_here", ("actor",), (), ("algorithm.cue.judge",),
     "the judge answers from the node that runs the steps", _judge_here, {"after": ("sections",), "needs": "network"}),
    ("run_identity", _S + "run_identity:check_run_identity", ("dry_run", "launch"), (),
     ("trainer.default_local_dir", "trainer.resume_mode"),
     "the checkpoint folder holds no other run's checkpoints (a launch records this run there)", _run_identity,
     {"needs": "files"}),
    ("run_size", _S + "run_size:run_size_lines", (), ("dry_run",),
     ("trainer.save_freq", "data.val_files", "trainer.val_before_train"),
     "the run's size: validation responses, checkpoint disk", _run_size, {"lines": "info", "needs": "files"}),
)


def require_entry(trainer: str = "ppo") -> None:
    """Refuse a verl that lacks a name our entry point of ``trainer`` imports (:func:`compat.require`)."""
    _entry_contract(Admission("launch", None, trainer=trainer))


def require_estimator_hooks(config: Any, trainer: str = "ppo") -> None:
    """For one of our estimators, refuse a verl that lacks a name its hooks need on ``trainer``."""
    _estimator_hooks(Admission("launch", config, trainer=trainer))


def _config_only(fn: str) -> Callable[[Admission], Iterable[str] | None]:
    """How a row whose function takes the config alone is run: ``fn`` (``module:name``), imported when it first
    runs (the table loads no verl)."""
    module, _, name = fn.partition(":")

    def run(a: Admission) -> Iterable[str] | None:
        import importlib

        return getattr(importlib.import_module(module), name)(a.config)

    return run


def _build() -> tuple[Rule, ...]:
    rows = []
    for name, fn, refuse, warn, keys, what, run, extra in _ROWS:
        rows.append(Rule(name=name, fn=fn, levels=_levels(refuse, warn), keys=tuple(keys), what=what,
                         run=run or _config_only(fn), **extra))
    return tuple(rows)


RULES: tuple[Rule, ...] = _build()


def rule_named(name: str) -> Rule:
    for r in RULES:
        if r.name == name:
            return r
    raise KeyError(name)


_LEVEL_CELL = {"refuse": "refuses", "warn": "warns"}


def table_markdown() -> str:
    """docs/usage.md's "What is checked where": one row per rule (what it catches, the keys it reads, what it needs
    where it runs), one column per stage (generated; a test holds the doc to it)."""
    head = "| rule | what it catches | reads | " + " | ".join(f"`{s}`" for s in STAGES) + " |"
    lines = [head, "|" + "---|" * (len(STAGES) + 3)]
    for r in RULES:
        cells = [_LEVEL_CELL.get(r.levels.get(s, ""), "") + (" (info)" if r.lines == "info" and s in r.levels
                                                             else "") for s in STAGES]
        reads = "; ".join(p for p in (", ".join(f"`{k}`" for k in r.keys),
                                      f"needs {r.needs} where it runs" if r.needs else "") if p) or "—"
        lines.append(f"| `{r.name}` | {r.what} | {reads} | " + " | ".join(c.strip() or "—" for c in cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":  # docs/usage.md's table
    print(table_markdown())
