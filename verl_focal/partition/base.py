"""The partitioner contract and its registry.

A *partitioner* splits one group's correct rollouts into strategy clusters
(Cue-GRPO, arXiv 2608.03467, Sec. 3: the clusters C_1..C_m of the credit rule).
It is pure Python: no verl import.

Contract
--------
``partition(texts, problem=None) -> list[int]``
    One integer label per text.  Labels only say which texts share a cluster;
    their values carry no meaning (``canonical_labels`` renumbers them
    0..m-1 in order of first appearance).
``partition_groups(groups) -> list[list[int]]``
    Many groups at once, ``groups`` being a sequence of ``(problem, texts)``.
    The default loops over ``partition``; partitioners that can work
    concurrently (the judge) override it.
``pop_metrics() -> dict[str, float]``
    Counters accumulated since the last call (fallbacks, latency, ...), which
    the trainer hook adds to the step's metrics.  Default: none.

Users plug in their own class with ``algorithm.cue.partitioner=pkg.module:Name``;
it is constructed with the keyword arguments of ``algorithm.cue.partitioner_kwargs``.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from verl_focal.config.errors import ConfigError, did_you_mean

__all__ = [
    "Partitioner",
    "register_partitioner",
    "get_partitioner",
    "list_partitioners",
    "resolve_partitioner",
    "check_partitioner_kwargs",
    "canonical_labels",
]


def canonical_labels(labels: Sequence[int]) -> list[int]:
    """Renumber cluster labels to 0..m-1 in order of first appearance."""
    seen: dict[Any, int] = {}
    return [seen.setdefault(lab, len(seen)) for lab in labels]


class Partitioner:
    """Base class; subclasses implement :meth:`partition`."""

    name: str = "base"

    def partition(self, texts: list[str], problem: str | None = None) -> list[int]:  # pragma: no cover
        raise NotImplementedError

    def partition_groups(self, groups: Sequence[tuple[str | None, list[str]]]) -> list[list[int]]:
        return [self.partition(list(texts), problem) for problem, texts in groups]

    def pop_metrics(self) -> dict[str, float]:
        return {}


_REGISTRY: dict[str, Callable[..., Partitioner]] = {}


def register_partitioner(name: str) -> Callable[[type], type]:
    """Class decorator: make ``name`` usable as ``algorithm.cue.partitioner``.

    Registering the same class twice is a no-op (a module imported twice);
    a different class under a taken name raises ``ValueError``.
    """

    def deco(cls: type) -> type:
        old = _REGISTRY.get(name)
        if old is not None and (old.__module__, old.__qualname__) != (cls.__module__, cls.__qualname__):
            raise ValueError(f"partitioner name {name!r} is already registered to {old.__module__}.{old.__qualname__}")
        _REGISTRY[name] = cls
        cls.name = name
        return cls

    return deco


def _load_builtin() -> None:
    # Importing the modules registers their partitioners.
    from verl_focal.partition import controls, judge, strategy_cue  # noqa: F401


def list_partitioners() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


_KEY = "algorithm.cue.partitioner"


def resolve_partitioner(name: str) -> Callable[..., Any]:
    """The class (or factory) that ``algorithm.cue.partitioner`` names, without building it.

    ``name`` is a registered name or an import path ``pkg.module:Name``.  Raises
    :class:`~verl_focal.config.errors.ConfigError` (a ``ValueError``) naming the value and the
    fix: an unknown name (with did-you-mean), a module that is not installed, a module without
    that attribute, or a class without a ``partition(texts, problem)`` method.  Imports the
    user's module, nothing else: no network, no model.
    """
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{_KEY} must be a non-empty string, got {name!r}; set {_KEY}=strategy_cue (default)")
    if ":" not in name:
        _load_builtin()
        if name not in _REGISTRY:
            raise ConfigError(
                f"unknown {_KEY}={name!r}{did_you_mean(name, _REGISTRY)}; choose one of {sorted(_REGISTRY)} "
                "or give an import path 'package.module:ClassName'"
            )
        return _REGISTRY[name]
    mod_name, _, attr = name.partition(":")
    if not mod_name or not attr:
        raise ConfigError(f"{_KEY}={name!r}: give an import path 'package.module:ClassName'")
    try:
        module = importlib.import_module(mod_name)
    except ModuleNotFoundError as e:
        if e.name and (mod_name == e.name or mod_name.startswith(e.name + ".")):
            raise ConfigError(
                f"{_KEY}={name!r}: no module named {e.name!r} is importable; install it or put it on PYTHONPATH "
                "(in every Ray worker too), or fix the path 'package.module:ClassName'"
            ) from e
        raise ConfigError(f"{_KEY}={name!r}: importing {mod_name!r} failed: {e}") from e
    except ImportError as e:
        raise ConfigError(f"{_KEY}={name!r}: importing {mod_name!r} failed: {e}") from e
    if not hasattr(module, attr):
        public = [n for n in vars(module) if not n.startswith("_")]
        raise ConfigError(
            f"{_KEY}={name!r}: module {mod_name!r} has no attribute {attr!r}{did_you_mean(attr, public)}"
        )
    target = getattr(module, attr)
    if isinstance(target, type) and not callable(getattr(target, "partition", None)):
        raise ConfigError(
            f"{_KEY}={name!r}: {target.__module__}.{target.__qualname__} is not a Partitioner (no "
            "partition(texts, problem) method); subclass verl_focal.partition.base.Partitioner"
        )
    if not callable(target):
        raise ConfigError(f"{_KEY}={name!r}: {type(target).__name__} object is not a class or factory")
    return target


def check_partitioner_kwargs(target: Callable[..., Any], kwargs: dict, name: str = "") -> None:
    """Check that ``target(**kwargs)`` binds (unknown or missing arguments), without calling it."""
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):  # a builtin without a signature: nothing to check
        return
    try:
        sig.bind(**kwargs)
    except TypeError as e:
        params = [p for p in sig.parameters if p != "self"]
        hint = "".join(did_you_mean(k, params) for k in kwargs if k not in sig.parameters)[:80]
        raise ConfigError(
            f"algorithm.cue.partitioner_kwargs={dict(kwargs)} do not fit {name or getattr(target, '__name__', target)}"
            f"({', '.join(params)}): {e}{hint}"
        ) from None


def get_partitioner(name: str, **kwargs: Any) -> Partitioner:
    """Build a partitioner by registered name or by import path ``pkg.module:Name``.

    >>> get_partitioner("single").partition(["a", "b"])
    [0, 0]
    """
    target = resolve_partitioner(name)
    try:
        obj = target(**kwargs)
    except TypeError as e:
        raise ConfigError(f"{_KEY}={name!r} rejected algorithm.cue.partitioner_kwargs={kwargs}: {e}") from e
    if not callable(getattr(obj, "partition", None)):
        raise ConfigError(f"{_KEY}={name!r} built {type(obj).__name__}, which has no partition(texts, problem) method")
    if not isinstance(obj, Partitioner):
        obj = _Adapter(obj)
    return obj


class _Adapter(Partitioner):
    """Gives a duck-typed user object the optional methods of the contract."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", type(inner).__name__)

    def partition(self, texts: list[str], problem: str | None = None) -> list[int]:
        return list(self.inner.partition(texts, problem))

    def partition_groups(self, groups):
        if hasattr(self.inner, "partition_groups"):
            return [list(x) for x in self.inner.partition_groups(groups)]
        return super().partition_groups(groups)

    def pop_metrics(self) -> dict[str, float]:
        return dict(self.inner.pop_metrics()) if hasattr(self.inner, "pop_metrics") else {}
