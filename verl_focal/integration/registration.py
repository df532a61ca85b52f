"""Our estimators in verl's registry (``verl.trainer.ppo.core_algos.ADV_ESTIMATOR_REGISTRY``).

:func:`register_all` writes every :class:`~verl_focal.estimators.spec.EstimatorSpec` of
:func:`verl_focal.estimators.all_specs` into verl's registry, twice: under its plain name
(``f_grpo``) and under a namespaced alias (``verl_focal.f_grpo``) that no other package will take,
so a user can always pin ours with ``algorithm.adv_estimator=verl_focal.f_grpo``.  The hooks look a
name up with :func:`get_spec`: our spec, or None for verl's own estimators.

Registration is idempotent: the same function (also one re-imported by file path, or wrapped with
``functools.wraps``) replaces itself silently.  If a *different* function already holds one of our
names (a later verl shipping its own ``f_grpo``), we leave it alone, log a WARNING, and
:func:`collision_problem` makes every start-up path (``verl-focal check``, ``--dry-run``, our entry
point, the hooked trainer) refuse a config that uses the contested name.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any

from verl_focal.estimators.spec import EstimatorSpec

__all__ = [
    "EstimatorSpec",
    "register_spec",
    "get_spec",
    "registered_names",
    "register_all",
    "collision_problem",
    "collisions",
    "alias",
    "ALIAS_PREFIX",
    "run_startup_check",
]

logger = logging.getLogger(__name__)

#: prefix of the namespaced alias every estimator of ours is also registered under
ALIAS_PREFIX = "verl_focal."

_SPECS: dict[str, EstimatorSpec] = {}  # every name that resolves to ours in verl's registry
_OURS: dict[str, EstimatorSpec] = {}  # plain name -> our spec, whether or not we hold the plain name
_COLLISIONS: dict[str, Callable] = {}  # name -> the other function that held it when we registered


def alias(name: str) -> str:
    """The namespaced alias of one of our estimator names: ``f_grpo`` -> ``verl_focal.f_grpo``."""
    return name if name.startswith(ALIAS_PREFIX) else ALIAS_PREFIX + name


def _describe(fn: Callable) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', fn)}"


def _same_function(a: Callable, b: Callable) -> bool:
    """Whether ``a`` is ``b``: the same object, the same module-level function re-imported, or a
    wrapper of it that says so through ``__wrapped__`` (``functools.wraps``; e.g. a profiler's timer)."""
    a, b = inspect.unwrap(a), inspect.unwrap(b)
    return a is b or (
        getattr(a, "__module__", None) == getattr(b, "__module__", None)
        and getattr(a, "__qualname__", None) == getattr(b, "__qualname__", None)
    )


def register_spec(spec: EstimatorSpec) -> None:
    """Write ``spec.fn`` into verl's registry as ``spec.name`` and ``verl_focal.<name>`` (module docstring)."""
    from verl.trainer.ppo import core_algos

    name, fn = spec.name, spec.fn
    for key in (name, alias(name)):
        existing = core_algos.ADV_ESTIMATOR_REGISTRY.get(key)
        if existing is not None and not _same_function(existing, fn):
            _COLLISIONS[key] = existing
            logger.warning(
                "verl-focal: advantage estimator %r is already registered to %s; verl-focal's %s is NOT "
                "registered under that name. Use algorithm.adv_estimator=%s for verl-focal's.",
                key, _describe(existing), _describe(fn), alias(name),
            )
            continue
        core_algos.ADV_ESTIMATOR_REGISTRY[key] = fn  # same function (maybe re-imported): replace
        _SPECS[key] = spec
        _COLLISIONS.pop(key, None)
    _OURS.setdefault(name, spec)
    if _same_function(_OURS[name].fn, fn):
        _OURS[name] = spec


def get_spec(name: Any) -> EstimatorSpec | None:
    """Our spec for an ``algorithm.adv_estimator`` value, or None for verl's own estimators
    (and for a name another package holds)."""
    key = getattr(name, "value", name)
    if not isinstance(key, str) or key not in _SPECS:
        return None
    from verl.trainer.ppo import core_algos

    spec = _SPECS[key]
    return spec if _same_function(core_algos.ADV_ESTIMATOR_REGISTRY.get(key, spec.fn), spec.fn) else None


def run_startup_check(config: Any) -> None:
    """Run the ``startup_check`` of the estimator named by ``config.algorithm.adv_estimator``, if any."""
    from verl_focal.config.key_names import config_get

    est = config_get(config, "algorithm.adv_estimator")
    spec = get_spec(est) if est is not None else None
    if spec is not None and spec.startup_check is not None:
        spec.startup_check(config)



def registered_names(aliases: bool = False) -> list[str]:
    """Our estimator names (``f_grpo``, ...), with their ``verl_focal.`` aliases if ``aliases``."""
    names = sorted(_OURS)
    return sorted(names + [alias(n) for n in names]) if aliases else names


def collisions() -> dict[str, str]:
    """Our names that verl's registry maps to another package's function: name -> that function."""
    from verl.trainer.ppo import core_algos

    out = {}
    for name, spec in _OURS.items():
        for key in (name, alias(name)):
            held = core_algos.ADV_ESTIMATOR_REGISTRY.get(key)
            if held is not None and not _same_function(held, spec.fn):
                out[key] = _describe(held)
    return out


def collision_problem(estimator: Any) -> str | None:
    """Why ``algorithm.adv_estimator=estimator`` must not start (another package holds our name), or None."""
    key = getattr(estimator, "value", estimator)
    other = collisions().get(key) if isinstance(key, str) else None
    if other is None:
        return None
    plain = key[len(ALIAS_PREFIX):] if key.startswith(ALIAS_PREFIX) else key
    ours = _describe(_OURS[plain].fn)
    return (
        f"algorithm.adv_estimator={key!r} is registered in verl to {other}, not to verl-focal's {ours}; "
        f"set algorithm.adv_estimator={alias(plain)} to train with verl-focal's (or remove the other package)"
    )


def collision_lines() -> list[str]:
    """One line for each of our names that verl's registry maps to another package's function, naming the alias
    that still reaches ours (a start-up warning; a run that uses such a name is refused by
    :func:`collision_problem`)."""
    return [f"verl's estimator {name!r} is {other}, not verl-focal's; use "
            f"algorithm.adv_estimator={ALIAS_PREFIX}{name.split('.')[-1]} for ours"
            for name, other in sorted(collisions().items())]


def register_all() -> list[str]:
    """Register every estimator of ours in verl (idempotent); return our names."""
    from verl_focal.estimators import all_specs

    for spec in all_specs():
        register_spec(spec)
    return registered_names()
