"""The verl contract: every verl name verl-focal reads, calls, wraps or replaces, and what needs it.

verl-focal lives in verl's process (the ``verl.plugins`` entry point is imported on every
``import verl``), so a renamed verl name must never break verl.  Each name is listed in
:data:`CONTRACT` with the *feature* that needs it (:data:`FEATURES`).  The rule:

* every install step runs through :func:`install`: when a name of its feature is missing, it logs one
  WARNING naming the names and the feature and installs nothing for that feature, and an exception
  inside the step is caught the same way; verl's own code is never touched then;
* ``verl-focal check``, ``--dry-run`` and our entry points call :func:`require` with the features a
  config needs (:func:`features_for`): a missing name refuses that config at start-up in one line,
  and only that config: the rest keep working.

A name that exists is not enough: what a trainer calls at its advantage step must be our wrapper
(:func:`step_problem`, the contract of identity).  verl PR #7237 moves ``compute_advantage`` into
``verl.trainer.ppo.trainer_utils`` and re-exports it from ``ray_trainer``: every name still resolves, while a
trainer that imports it from the new module would call verl's own function.  :data:`STEP_CALLERS` names, per
trainer family, the function whose body makes that call; :func:`require` follows its module globals (whatever
module they were imported from) and refuses our estimators in one line when the callee is not ours.  And the
installed verl must be inside our tested range (:func:`verl_in_range`): outside it the plugin installs nothing
and :func:`require` refuses our estimators.

``tests/integration/test_host_safety.py`` renames each listed name in a copy of the installed verl (as
an upstream refactor would) and checks the rule.  Fields (``field=True``: attributes of verl's data
objects and trainers whose identifiers are generic words, e.g. ``DataProto.batch``; Ray's
``__ray_actor_class__``; the DataProto keys our dispatch shares with verl's, ``module:function["key"]``, found
as a string literal in that function's source) are checked the same way at install, but are not renamed there:
verl could not rename them without renaming Python's own, or Ray's, or they are not identifiers.

The range itself lives in ``pyproject.toml`` (``verl[verl-core]>=X,<Y``); :func:`pinned_verl_spec` reads it
back.  No verl import at module level.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import inspect
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CONTRACT", "FEATURES", "STEP_CALLERS", "Touch", "available", "disabled", "features_for", "install",
           "is_hooked", "mark_hooked", "missing", "pinned_verl_spec", "require", "step_callee", "step_problem",
           "verl_in_range"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Touch:
    """One verl name: ``module:attribute.path``, how we touch it, the feature that needs it, and why."""

    name: str
    how: str
    feature: str
    why: str
    field: bool = False


#: feature -> what it gives (the warnings and refusals name it)
FEATURES: dict[str, str] = {
    "estimators": "verl-focal's advantage estimators in verl's registry",
    "advantage": "the hook around verl's compute_advantage (our estimators' dispatch with the step's context, old "
                 "log-probs, agent sessions, the legacy trainer, the demo)",
    "v1": "the hooked v1 trainer modes focal_* (reward extras, texts, the prefetch, validation pass@k)",
    "legacy": "the legacy trainer (trainer.use_v1=false) through python -m verl_focal.main_ppo",
    "separated": "the hook of verl's one-step-off and fully-async trainers",
    "entry": "python -m verl_focal.main_ppo and verl-focal check",
    "one_step_off_entry": "python -m verl_focal.main_ppo --trainer one_step_off",
    "fully_async_entry": "python -m verl_focal.main_ppo --trainer fully_async",
    "demo": "verl-focal demo",
}

_CA = "verl.trainer.ppo.core_algos"
_RT = "verl.trainer.ppo.ray_trainer"
_V1 = "verl.trainer.ppo.v1.trainer_base"
_SEP = "verl.experimental.separation.ray_trainer"
_OSO = "verl.experimental.one_step_off_policy.ray_trainer:OneStepOffRayTrainer"
_FA = "verl.experimental.fully_async_policy.fully_async_trainer:FullyAsyncTrainer.__ray_actor_class__"

CONTRACT: tuple[Touch, ...] = (
    Touch(f"{_CA}:ADV_ESTIMATOR_REGISTRY", "registry write", "estimators", "our estimators are registered there"),
    Touch(f"{_CA}:AdvantageEstimator", "read", "estimators", "the pre-flight lists verl's estimator names"),
    Touch(f"{_RT}:compute_advantage", "wrap", "advantage", "every trainer reaches an estimator through it"),
    Touch(f"{_CA}:get_adv_estimator_fn", "call", "advantage", "the wrapper dispatches ours as verl's generic branch"),
    Touch(f"{_RT}:compute_response_mask", "call", "advantage", "a batch without one, as verl's compute_advantage"),
    *(Touch(f'{_RT}:compute_advantage["{key}"]', how, "advantage", "the DataProto key of verl's dispatch", field=True)
      for key, how in (("token_level_rewards", "read"), ("response_mask", "read"), ("uid", "read"),
                       ("advantages", "write"), ("returns", "write"))),
    Touch("verl.protocol:DataProto.select_idxs", "call", "advantage", "the final-output rule of agent sessions"),
    Touch("verl.protocol:DataProto.batch", "read", "advantage", "old log-probs, response ids", field=True),
    Touch("verl.protocol:DataProto.non_tensor_batch", "read", "advantage", "uids, reward extras", field=True),
    Touch("verl.protocol:DataProto.meta_info", "write", "advantage", "a legacy step's metrics", field=True),
    Touch(f"{_RT}:RayPPOTrainer.fit", "read", "legacy", "the legacy step: the compute_advantage it calls must be ours"),
    Touch(f"{_V1}:PPOTrainer", "subclass", "v1", "the hooked trainer modes focal_*"),
    Touch(f"{_V1}:PPOTrainer._compute_old_log_prob", "override", "v1", "starts the prefetch before the pass"),
    Touch(f"{_V1}:PPOTrainer._compute_advantage", "override", "v1", "installs the step's context"),
    Touch(f"{_V1}:PPOTrainer._val_metrics_update", "override", "v1", "unbiased pass@k on validation"),
    Touch(f"{_V1}:PPOTrainer.config", "read", "v1", "the algorithm config", field=True),
    Touch(f"{_V1}:PPOTrainer.tokenizer", "read", "v1", "decodes response ids", field=True),
    Touch(f"{_V1}:register_trainer", "call", "v1", "registers focal_sync & co."),
    Touch(f"{_V1}:get_trainer_cls", "call", "v1", "the base class of each hooked mode"),
    Touch(f"{_V1}:TRAINER_REGISTRY", "read", "v1", "a mode registered twice is kept once"),
    Touch("verl.trainer.ppo.v1.utils:compute_advantage_for_multi_trajectories", "read", "v1",
          "the v1 step: the compute_advantage it calls must be ours"),
    Touch("verl.trainer.ppo.v1.utils:compute_advantage", "read", "v1",
          "must be ray_trainer's (the wrapped) function: old log-probs and agent sessions"),
    Touch("transfer_queue:kv_batch_get", "call", "v1", "reads the reward extras, prompts and response ids"),
    Touch("transfer_queue:KVBatchMeta.keys", "read", "v1", "the batch's rows", field=True),
    Touch("transfer_queue:KVBatchMeta.partition_id", "read", "v1", "the batch's partition", field=True),
    Touch("verl.trainer.main_ppo_v0:TaskRunner", "subclass", "legacy", "installs the legacy hook in its actor"),
    Touch("verl.trainer.main_ppo_v0:TaskRunner.__ray_actor_class__", "subclass", "legacy",
          "the class under Ray's actor", field=True),
    Touch(f"{_RT}:compute_data_metrics", "wrap", "legacy", "a legacy step's metrics reach verl's log"),
    Touch("verl.utils.config:omega_conf_to_dataclass", "call", "legacy", "builds the tokenizer"),
    Touch(f"{_SEP}:SeparateRayPPOTrainer", "wrap methods", "separated", "one-step-off and fully-async"),
    Touch(f"{_SEP}:SeparateRayPPOTrainer._fit_compute_log_prob", "wrap", "separated", "starts the prefetch"),
    Touch(f"{_SEP}:SeparateRayPPOTrainer._fit_compute_advantage", "wrap", "separated", "the step's context"),
    Touch(f"{_SEP}:SeparateRayPPOTrainer.reward_extra_infos_dict", "read", "separated",
          "the reward extras before verl merges them"),
    Touch(f"{_SEP}:SeparateRayPPOTrainer.metrics", "write", "separated", "the step's metrics", field=True),
    Touch(f"{_SEP}:SeparateRayPPOTrainer.tokenizer", "read", "separated", "decodes response ids", field=True),
    Touch(f"{_SEP}:SeparateRayPPOTrainer.config", "read", "separated", "the algorithm config", field=True),
    Touch(f"{_SEP}:compute_advantage", "read", "separated", "must be ray_trainer's (the wrapped) function"),
    Touch("verl.trainer.main_ppo:run_ppo", "call", "entry", "starts Ray and the TaskRunner"),
    Touch("verl.trainer.main_ppo:TaskRunnerV1", "subclass", "entry", "our v1 TaskRunner"),
    Touch("verl.trainer.main_ppo:TaskRunnerV1.__ray_actor_class__", "subclass", "entry", "the class under Ray's actor",
          field=True),
    Touch("verl.utils.device:auto_set_device", "call", "entry", "as verl's main_ppo does"),
    Touch("verl.utils.config:validate_config", "call", "entry", "verl's own config checks at start-up"),
    Touch("verl.trainer.ppo.utils:need_critic", "call", "entry", "an argument of validate_config"),
    Touch("verl.trainer.ppo.utils:need_reference_policy", "call", "entry", "an argument of validate_config"),
    Touch(f"{_CA}:POLICY_LOSS_REGISTRY", "read", "entry", "the pre-flight's loss_mode choices"),
    Touch(f"{_CA}:kl_penalty", "call", "entry", "the pre-flight's KL estimator choices"),
    Touch(f"{_CA}:kl_penalty_forward", "read", "entry", "the names of the KL estimators, from its source"),
    Touch("verl.utils.import_utils:PKG_PATH_PREFIX", "read", "entry", "the reward function, resolved as verl does"),
    Touch("verl.utils.import_utils:FILE_PATH_PREFIX", "read", "entry", "the reward function, resolved as verl does"),
    Touch("verl.experimental.one_step_off_policy.main_ppo:OneStepTaskRunner", "call", "one_step_off_entry",
          "--trainer one_step_off"),
    Touch(f"{_OSO}._fit_compute_advantage", "read", "one_step_off_entry",
          "one-step-off's step: the compute_advantage it calls must be ours"),
    Touch(f"{_FA}._fit_compute_advantage", "read", "fully_async_entry",
          "fully-async's step: the compute_advantage it calls must be ours"),
    Touch("verl.experimental.fully_async_policy.fully_async_main:FullyAsyncTaskRunner", "call",
          "fully_async_entry", "--trainer fully_async"),
    Touch("verl.experimental.reward_loop:migrate_legacy_reward_impl", "call", "fully_async_entry",
          "fully-async's entry point does it"),
    Touch("verl:DataProto", "call", "demo", "the demo's batches"),
    Touch("verl:DataProto.from_dict", "call", "demo", "the demo's batches"),
    Touch("verl.workers.rollout.hf_rollout:HFRollout", "subclass", "demo", "the demo's rollout"),
    Touch(f"{_CA}:get_policy_loss_fn", "call", "demo", "the demo's policy loss"),
    Touch(f"{_CA}:agg_loss", "call", "demo", "the demo's entropy metric"),
    Touch("verl.workers.utils.losses:ppo_loss", "call", "demo", "the control arms' actor loss"),
    Touch("verl.workers.config:FSDPActorConfig", "call", "demo", "the control arms' actor config"),
    Touch("verl.utils.tensordict_utils:assign_non_tensor", "call", "demo", "the batch info ppo_loss reads"),
    Touch("verl.utils.torch_functional:entropy_from_logits", "call", "demo", "the entropy bonus's per-token entropy"),
)

_DISABLED: dict[str, str] = {}  # feature -> why (this process)


def _resolve(name: str) -> bool:
    """Whether ``module:attr.path`` exists: each attribute on its object, or, for the last one on a class,
    a dataclass field or an attribute its methods (in the MRO) assign to ``self``; ``module:function["key"]``:
    the function exists and its source holds the string literal ``key``."""
    if name.endswith('"]'):
        name, _, key = name[:-2].partition('["')
        return _resolve(name) and _holds_literal(name, key)
    module, _, path = name.partition(":")
    try:
        obj = importlib.import_module(module)
    except Exception:  # noqa: BLE001 - a module that fails to import lacks every name
        return False
    parts = path.split(".")
    for i, part in enumerate(parts):
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        return i == len(parts) - 1 and inspect.isclass(obj) and _instance_attribute(obj, part)
    return True


def _holds_literal(name: str, key: str) -> bool:
    module, _, path = name.partition(":")
    try:
        obj = functools.reduce(getattr, path.split("."), importlib.import_module(module))
        source = _source(inspect.unwrap(obj))  # verl's function, not our wrapper of it
    except Exception:  # noqa: BLE001 - no source: the key cannot be found
        return False
    return source is not None and (f'"{key}"' in source or f"'{key}'" in source)


@functools.cache
def _source(obj: object) -> str | None:
    """``inspect.getsource(obj)``, None without source; once per object and process (for a class it parses the
    whole module, and every process that imports verl checks the same classes for several features)."""
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):  # a builtin or an object without source
        return None


def _instance_attribute(cls: type, attr: str) -> bool:
    if attr in getattr(cls, "__dataclass_fields__", {}):
        return True
    pattern = re.compile(rf"\bself\.{re.escape(attr)}\s*(:[^=\n]*)?=(?!=)")
    return any((source := _source(klass)) is not None and pattern.search(source) for klass in inspect.getmro(cls))


def missing(feature: str) -> list[str]:
    """The names of ``feature`` that the installed verl lacks (importing their modules)."""
    if feature not in FEATURES:
        raise ValueError(f"no feature {feature!r}; features: {sorted(FEATURES)}")
    return [t.name for t in CONTRACT if t.feature == feature and not _resolve(t.name)]


def install(feature: str, step: Callable[[], object]) -> bool:
    """Run the install ``step`` of ``feature`` when all its names exist; else, or when the step raises, log
    one WARNING and install nothing (see the module docstring).  Never raises; returns whether it ran."""
    try:
        gone = missing(feature) if verl_in_range() else [f"a release in {pinned_verl_spec()}"]
        if not gone:
            step()
            _DISABLED.pop(feature, None)
            _INSTALLED.add(feature)
            return True
        why = f"verl {_verl_version()} lacks {', '.join(gone)}"
    except Exception as e:  # noqa: BLE001 - the host must never see our failure
        why = f"{type(e).__name__}: {e}"
    _DISABLED[feature] = why
    logger.warning("verl-focal: %s is not installed (%s); verl runs as without it. %s", FEATURES[feature], why,
                   _fix())
    return False


#: the features whose install step ran in this process (the identity check judges a trainer only where the wrapper
#: of ``compute_advantage``, the ``advantage`` install, ran: a process where it never did is refused by
#: ``require_live``, naming why)
_INSTALLED: set[str] = set()


def disabled() -> dict[str, str]:
    """The features whose install step did not run in this process, with why."""
    return dict(_DISABLED)


def available(feature: str) -> bool:
    """Whether every name of ``feature`` exists and its install step (if it ran here) succeeded."""
    return not missing(feature) and feature not in _DISABLED


def features_for(trainer: str = "ppo", use_v1: bool = True, ours: bool = True) -> list[str]:
    """The features a run needs: our entry point's for ``trainer``, and, when the estimator is ``ours``,
    the registry, the advantage hook and that trainer's hook."""
    entry = ["entry"] if trainer == "ppo" else ["entry", f"{trainer}_entry"]
    if not ours:
        return entry
    hook = ("v1" if use_v1 else "legacy") if trainer == "ppo" else "separated"
    return [*entry, "estimators", "advantage", hook]


def require(features: Iterable[str], what: str) -> None:
    """Raise :class:`~verl_focal.config.errors.ConfigError` (one line) when the installed verl is outside our
    range (a feature of ours), a name of ``features`` is missing, a feature's install step failed in this process,
    or a trainer the feature hooks will not call our wrapper (:func:`step_problem`); ``what`` names the config."""
    from verl_focal.config.errors import ConfigError

    features = list(features)
    if not verl_in_range() and set(features) & set(_PLUGIN_FEATURES):
        raise ConfigError(f"{what} needs verl in {pinned_verl_spec()}, and verl {_verl_version()} is installed: "
                          f"verl-focal installs nothing into it; {_fix()}")
    for feature in features:
        gone = missing(feature)
        if gone:
            raise ConfigError(f"{what} needs verl's {gone[0]} ({_how(gone[0])} for {FEATURES[feature]}), which "
                              f"the installed verl {_verl_version()} lacks; {_fix()}")
        if feature in _DISABLED:
            raise ConfigError(f"{what} needs {FEATURES[feature]}, whose install failed: {_DISABLED[feature]}; {_fix()}")
    for feature in features:  # with our wrapper installed here, a trainer that calls another function than ours
        problem = step_problem(feature) if "advantage" in _INSTALLED else None  # (not installed: require_live's)
        if problem is not None:
            raise ConfigError(f"{what} refused: {problem}; {_fix()}")


#: the features the plugin installs into verl's process (the rest are our entry points' and the demo's)
_PLUGIN_FEATURES = ("estimators", "advantage", "v1", "legacy", "separated")

#: the flag on a function that is one of our wrappers (:func:`mark_hooked`)
_HOOK_FLAG = "_verl_focal_hook"

#: per trainer family: (the feature that hooks it, its name in messages, ``module:attribute.path`` of the function
#: whose body calls ``compute_advantage`` at the step, the global functions it calls on the way there)
STEP_CALLERS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("legacy", "the legacy RayPPOTrainer", f"{_RT}:RayPPOTrainer.fit", ()),
    ("v1", "the v1 PPOTrainer", f"{_V1}:PPOTrainer._compute_advantage", ("compute_advantage_for_multi_trajectories",)),
    ("separated", "the one-step-off trainer", f"{_OSO}._fit_compute_advantage", ()),
    ("separated", "the fully-async trainer", f"{_FA}._fit_compute_advantage", ()),
)


def mark_hooked(fn: Callable) -> Callable:
    """Flag ``fn`` as a verl-focal wrapper (see :func:`is_hooked`); returns it."""
    setattr(fn, _HOOK_FLAG, True)
    return fn


def is_hooked(fn: object) -> bool:
    """Whether ``fn`` is a verl-focal wrapper (:func:`mark_hooked`)."""
    return bool(getattr(fn, _HOOK_FLAG, False))


def step_callee(path: str, via: tuple[str, ...] = ()) -> tuple[str, object]:
    """What the function at ``path`` (past our wrapper of it) calls as ``compute_advantage``, through the global
    functions ``via``: ``(the module whose global it is, the object)``, the object None when that function's code
    names no ``compute_advantage``.  Each hop is the calling function's own module global, so the answer holds
    whatever module the name was imported from."""
    module, _, attr = path.partition(":")
    fn = functools.reduce(getattr, attr.split("."), importlib.import_module(module))
    for name in (*via, "compute_advantage"):
        fn = inspect.unwrap(fn)
        where = fn.__globals__["__name__"]
        if name not in fn.__code__.co_names:
            return where, None
        fn = fn.__globals__.get(name)
    return where, fn


def step_problem(feature: str) -> str | None:
    """One line when a trainer family hooked by ``feature`` (:data:`STEP_CALLERS`) will call, at its advantage
    step, another ``compute_advantage`` than our wrapper; None when each calls ours.  A family whose step function
    is missing is refused by its contract names (:func:`require`), not here."""
    failing: list[str] = []
    for feat, family, path, via in STEP_CALLERS:
        if feat != feature or not _resolve(path):
            continue
        try:
            where, fn = step_callee(path, via)
        except Exception as e:  # noqa: BLE001 - a step we cannot follow is not known to be ours
            return f"{family}'s advantage step ({path}) cannot be followed on verl {_verl_version()} ({e})"
        if not is_hooked(fn):
            called = "no compute_advantage" if fn is None else f"{getattr(fn, '__module__', '?')}.compute_advantage"
            failing.append(f"{family} calls {called} (bound in {where})")
    if not failing:
        return None
    return f"{'; '.join(failing)}, not verl-focal's wrapper, at the advantage step on verl {_verl_version()}"


def verl_in_range() -> bool:
    """Whether the installed verl is a release of our range (:func:`pinned_verl_spec`); an unknown version is."""
    from packaging.requirements import Requirement
    from packaging.version import InvalidVersion, Version

    spec, version = pinned_verl_spec(), _verl_version()
    try:
        return spec is None or Requirement(spec).specifier.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return version == "?"


def _how(name: str) -> str:
    return next(t.how for t in CONTRACT if t.name == name)


def _verl_version() -> str:
    try:
        return importlib.metadata.version("verl")
    except importlib.metadata.PackageNotFoundError:
        return "?"


def _fix() -> str:
    spec = pinned_verl_spec() or "verl[verl-core]>=0.9.0,<0.10"
    return f"install a verl verl-focal is tested with: pip install '{spec}'"


def pinned_verl_spec() -> str | None:
    """The verl requirement string from our package metadata (or pyproject.toml in a source checkout)."""
    try:
        reqs = importlib.metadata.requires("verl-focal") or []
    except importlib.metadata.PackageNotFoundError:
        reqs = []
        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        if pyproject.exists():
            import tomllib

            reqs = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    for r in reqs:
        if re.split(r"[\[=<>!~;\s]", r, maxsplit=1)[0] == "verl":
            return r.split(";")[0].strip()
    return None
