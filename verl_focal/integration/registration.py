"""Registration of our estimators in verl's registry, plus what each one needs.

``register_estimator(name, needs=..., prepare=...)`` wraps verl's
``core_algos.register_adv_est`` and records, for the trainer hook:

* ``needs``   -- the per-row fields to fetch: ``"acc"``, ``"responses"``,
                 ``"problems"`` or the name of any other reward extra; either a
                 fixed set or a function of the step's
                 :class:`~verl_focal.config.schema.AlgorithmSettings` (so that,
                 e.g., response text is decoded only when the config uses it);
* ``prepare`` -- an optional ``prepare(ctx, settings)`` run by the hook
                 before verl's advantage computation (group-level work such as
                 partitioning, which may be slow or concurrent);
* ``prefetch`` -- an optional ``prefetch(ctx, settings)`` run by the v1
                 hook as soon as the step's rewards are known, *before* the
                 old-log-prob pass, to start slow work (judge requests) that
                 ``prepare`` later joins.  It must never raise into the step.
* ``startup_check`` -- an optional ``startup_check(config)`` on the *full*
                 trainer config, run at start-up (``validate_all`` and the
                 hooked trainer's ``__init__``) for checks that span sections,
                 e.g. ``algorithm.passk.k`` against ``actor_rollout_ref.rollout.n``.

Every estimator is registered twice: under its plain name (``f_grpo``) and under a
namespaced alias (``verl_focal.f_grpo``) that no other package will take, so a user
can always pin ours with ``algorithm.adv_estimator=verl_focal.f_grpo``.

Registration is idempotent: importing an estimator module twice (the
``verl.plugins`` entry point and ``VERL_USE_EXTERNAL_MODULES``, or by file path)
re-registers a function of the same module and qualified name silently.  If a
*different* function already holds one of our names (a later verl shipping its own
``f_grpo``), we leave it alone, log a WARNING (verl swallows plugin exceptions at
DEBUG level, so raising would hide it), and :func:`collision_problem` makes every
start-up path (``verl-focal check``, ``--dry-run``, our entry point, the hooked
trainer) refuse a config that uses the contested name.
"""

from __future__ import annotations

import importlib
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "EstimatorSpec",
    "register_estimator",
    "get_spec",
    "registered_names",
    "register_all",
    "collision_problem",
    "collisions",
    "alias",
    "ALIAS_PREFIX",
    "run_startup_check",
    "ESTIMATOR_MODULES",
]

logger = logging.getLogger(__name__)

#: prefix of the namespaced alias every estimator of ours is also registered under
ALIAS_PREFIX = "verl_focal."

#: Modules whose import registers estimators.
ESTIMATOR_MODULES = (
    "verl_focal.integration.estimators_focal",
    "verl_focal.integration.estimators_cue",
    "verl_focal.integration.estimators_passk",
    "verl_focal.integration.estimators_unlikely",
)


@dataclass(frozen=True)
class EstimatorSpec:
    name: str
    fn: Callable[..., Any]
    needs: frozenset[str] | Callable[[Any], frozenset[str]]
    prepare: Callable[[Any, Any], None] | None = None
    prefetch: Callable[[Any, Any], None] | None = None
    startup_check: Callable[[Any], None] | None = None
    #: our ``algorithm.*`` sections the estimator reads (``verl-focal check`` names them)
    sections: frozenset[str] = frozenset()

    def needs_for(self, settings: Any) -> frozenset[str]:
        """The per-row fields the hook must fetch for these settings (an
        :class:`~verl_focal.config.schema.AlgorithmSettings`; an untyped ``algorithm`` config is parsed)."""
        if not callable(self.needs):
            return frozenset(self.needs)
        from verl_focal.config.schema import parse_settings

        return frozenset(self.needs(parse_settings(settings)))


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


def register_estimator(
    name: str,
    needs: frozenset[str] | set[str] | Callable[[Any], frozenset[str]] = frozenset(),
    prepare: Callable[[Any, Any], None] | None = None,
    prefetch: Callable[[Any, Any], None] | None = None,
    startup_check: Callable[[Any], None] | None = None,
    sections: frozenset[str] | set[str] = frozenset(),
) -> Callable[[Callable], Callable]:
    """Decorator: register ``fn`` as verl advantage estimator ``name`` and ``verl_focal.<name>``.

    ``needs``: the per-row fields the hook fetches (or a function of the parsed settings);
    ``prepare`` / ``prefetch``: the group-level step before the advantage and its early start;
    ``startup_check``: checks across config sections, run before start-up; ``sections``: our
    ``algorithm.*`` sections the estimator reads."""

    def deco(fn: Callable) -> Callable:
        from verl.trainer.ppo import core_algos

        spec = EstimatorSpec(
            name=name, fn=fn, needs=needs if callable(needs) else frozenset(needs), prepare=prepare, prefetch=prefetch,
            startup_check=startup_check, sections=frozenset(sections),
        )
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
        return fn

    return deco


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
    algorithm = config.get("algorithm", None) if hasattr(config, "get") else None
    spec = get_spec(algorithm.get("adv_estimator", None)) if algorithm is not None else None
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


def register_all() -> list[str]:
    """Import every estimator module (registering them in verl); return our names."""
    for mod in ESTIMATOR_MODULES:
        importlib.import_module(mod)
    return registered_names()
