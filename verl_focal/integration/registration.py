"""Registration of our estimators in verl's registry, plus what each one needs.

``register_estimator(name, needs=..., prepare=...)`` wraps verl's
``core_algos.register_adv_est`` and records, for the trainer hook:

* ``needs``   -- the per-row fields to fetch: ``"acc"``, ``"responses"``,
                 ``"problems"`` or the name of any other reward extra; either a
                 fixed set or a function of the ``algorithm`` config (so that,
                 e.g., response text is decoded only when the config uses it);
* ``prepare`` -- an optional ``prepare(ctx, algorithm_config)`` run by the hook
                 before verl's advantage computation (group-level work such as
                 partitioning, which may be slow or concurrent);
* ``prefetch`` -- an optional ``prefetch(ctx, algorithm_config)`` run by the v1
                 hook as soon as the step's rewards are known, *before* the
                 old-log-prob pass, to start slow work (judge requests) that
                 ``prepare`` later joins.  It must never raise into the step.
* ``startup_check`` -- an optional ``startup_check(config)`` on the *full*
                 trainer config, run at start-up (``validate_all`` and the
                 hooked trainer's ``__init__``) for checks that span sections,
                 e.g. ``algorithm.passk.k`` against ``actor_rollout_ref.rollout.n``.

Registration is idempotent: importing an estimator module twice (the
``verl.plugins`` entry point and ``VERL_USE_EXTERNAL_MODULES``, or by file path)
re-registers a function of the same module and qualified name silently; a
*different* function under one of our names raises.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

__all__ = [
    "EstimatorSpec",
    "register_estimator",
    "get_spec",
    "registered_names",
    "register_all",
    "run_startup_check",
    "ESTIMATOR_MODULES",
]

#: Modules whose import registers estimators.  A module that is absent in this
#: checkout is skipped; one that fails to import raises.
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

    def needs_for(self, algorithm_config: Any) -> frozenset[str]:
        """The per-row fields the hook must fetch for this ``algorithm`` config."""
        return frozenset(self.needs(algorithm_config) if callable(self.needs) else self.needs)


_SPECS: dict[str, EstimatorSpec] = {}


def _same_function(a: Callable, b: Callable) -> bool:
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
) -> Callable[[Callable], Callable]:
    """Decorator: register ``fn`` as verl advantage estimator ``name``."""

    def deco(fn: Callable) -> Callable:
        from verl.trainer.ppo import core_algos

        existing = core_algos.ADV_ESTIMATOR_REGISTRY.get(name)
        if existing is not None and not _same_function(existing, fn):
            raise ValueError(
                f"advantage estimator {name!r} is already registered to "
                f"{getattr(existing, '__module__', '?')}.{getattr(existing, '__qualname__', existing)}; "
                "verl-focal will not overwrite another package's estimator"
            )
        core_algos.ADV_ESTIMATOR_REGISTRY[name] = fn  # same function (maybe re-imported): replace
        _SPECS[name] = EstimatorSpec(
            name=name,
            fn=fn,
            needs=needs if callable(needs) else frozenset(needs),
            prepare=prepare,
            prefetch=prefetch,
            startup_check=startup_check,
        )
        return fn

    return deco


def get_spec(name: Any) -> EstimatorSpec | None:
    """Our spec for an ``algorithm.adv_estimator`` value, or None for verl's own estimators."""
    key = getattr(name, "value", name)
    return _SPECS.get(key) if isinstance(key, str) else None


def run_startup_check(config: Any) -> None:
    """Run the ``startup_check`` of the estimator named by ``config.algorithm.adv_estimator``, if any."""
    algorithm = config.get("algorithm", None) if hasattr(config, "get") else None
    spec = get_spec(algorithm.get("adv_estimator", None)) if algorithm is not None else None
    if spec is not None and spec.startup_check is not None:
        spec.startup_check(config)


def registered_names() -> list[str]:
    return sorted(_SPECS)


def register_all() -> list[str]:
    """Import every estimator module (registering them in verl); return our names."""
    for mod in ESTIMATOR_MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name != mod:
                raise
    return registered_names()
