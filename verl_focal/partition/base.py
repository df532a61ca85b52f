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
from typing import Any, Callable, Sequence

__all__ = [
    "Partitioner",
    "register_partitioner",
    "get_partitioner",
    "list_partitioners",
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
    from verl_focal.partition import controls  # noqa: F401

    for mod in ("verl_focal.partition.strategy_cue", "verl_focal.partition.judge"):
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:  # a module not written yet in this checkout
            if e.name != mod:
                raise


def list_partitioners() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def get_partitioner(name: str, **kwargs: Any) -> Partitioner:
    """Build a partitioner by registered name or by import path ``pkg.module:Name``.

    >>> get_partitioner("single").partition(["a", "b"])
    [0, 0]
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"algorithm.cue.partitioner must be a non-empty string, got {name!r}")
    if ":" in name:
        mod_name, _, attr = name.partition(":")
        try:
            target = getattr(importlib.import_module(mod_name), attr)
        except (ImportError, AttributeError) as e:
            raise ValueError(
                f"algorithm.cue.partitioner={name!r} could not be imported ({e}); "
                "give 'package.module:ClassName' of an importable class with a partition(texts, problem) method"
            ) from e
    else:
        _load_builtin()
        if name not in _REGISTRY:
            raise ValueError(
                f"unknown algorithm.cue.partitioner={name!r}; choose one of {sorted(_REGISTRY)} "
                "or an import path 'package.module:ClassName'"
            )
        target = _REGISTRY[name]
    try:
        obj = target(**kwargs)
    except TypeError as e:
        raise ValueError(f"algorithm.cue.partitioner={name!r} rejected algorithm.cue.partitioner_kwargs={kwargs}: {e}") from e
    if not callable(getattr(obj, "partition", None)):
        raise ValueError(f"algorithm.cue.partitioner={name!r} built {type(obj).__name__}, which has no partition(texts, problem) method")
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
