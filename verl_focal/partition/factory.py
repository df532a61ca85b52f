"""From the ``algorithm.cue`` section to a partitioner instance.

Two things live here and nowhere else:

* the one mapping of ``algorithm.cue`` fields to the constructor arguments of the
  built-in partitioners (:func:`partitioner_kwargs`), used for the configured
  partitioner and for the judge's fallback alike;
* the one cache of long-lived instances (:func:`partitioner_for`): a ``prepare``
  step runs every training step, and rebuilding a partitioner each time would drop
  its compiled catalogue, or the judge's reply cache, connection pool and loop thread.

A section may be a :class:`~verl_focal.config.schema.CueConfig`, a mapping or an
OmegaConf node; a field the section lacks is left to the constructor's default.
Pure Python: no verl import.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable
from typing import Any

from verl_focal.config.errors import ConfigError
from verl_focal.config.key_names import config_get
from verl_focal.partition.base import Partitioner, get_partitioner

__all__ = [
    "STRATEGY_CUE_FIELDS",
    "strategy_cue_kwargs",
    "partitioner_kwargs",
    "partitioner_for",
]

#: ``StrategyCuePartitioner`` constructor argument <- ``algorithm.cue`` field
STRATEGY_CUE_FIELDS = (
    ("cue_set", "cue_set"),
    ("epsilon", "epsilon"),
    ("rho", "rho"),
    ("backend", "backend"),
    ("timeout", "extract_timeout"),
)

_CACHE: dict[str, Partitioner] = {}
_CACHE_LOCK = threading.RLock()


def strategy_cue_kwargs(cue: Any) -> dict[str, Any]:
    """The ``strategy_cue`` constructor arguments that ``algorithm.cue`` sets (fields it lacks are skipped).

    >>> strategy_cue_kwargs({"epsilon": 0.4, "extract_timeout": 1.0})
    {'epsilon': 0.4, 'timeout': 1.0}
    """
    out: dict[str, Any] = {}
    for arg, fld in STRATEGY_CUE_FIELDS:
        value = config_get(cue, fld)
        if value is not None:
            out[arg] = value
    return out


def partitioner_kwargs(cue: Any, name: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Constructor arguments of partitioner ``name`` from the ``algorithm.cue`` section.

    ``strategy_cue`` gets :func:`strategy_cue_kwargs`; ``random`` gets ``seed`` and, while its
    ``reference`` is ``strategy_cue`` (the default), the same arguments for its reference;
    other partitioners get none from the section.  ``overrides`` (``algorithm.cue.partitioner_kwargs``
    for the configured partitioner; none for the judge's fallback) win over the section.

    >>> partitioner_kwargs({"seed": 3, "rho": 0.6}, "random", {"match": "sizes"})
    {'seed': 3, 'rho': 0.6, 'match': 'sizes'}
    >>> partitioner_kwargs({"rho": 0.6}, "single")
    {}
    """
    overrides = dict(overrides or {})
    out: dict[str, Any] = {}
    if name == "random":
        seed = config_get(cue, "seed")
        if seed is not None:
            out["seed"] = seed
        if overrides.get("reference", "strategy_cue") == "strategy_cue":
            out.update(strategy_cue_kwargs(cue))
    elif name == "strategy_cue":
        out.update(strategy_cue_kwargs(cue))
    return {**out, **overrides}


def _judge_recipe(cue: Any) -> tuple[dict[str, Any], Callable[[], Partitioner]]:
    from verl_focal.partition.judge.config import coerce_judge_config
    from verl_focal.partition.judge.partitioner import JudgePartitioner

    judge = coerce_judge_config(config_get(cue, "judge"))
    fallback = partitioner_kwargs(cue, judge.fallback)  # partitioner_kwargs belong to a judge-less setup
    return ({"judge": dataclasses.asdict(judge), "fallback_kwargs": fallback},
            lambda: JudgePartitioner(judge, fallback_partitioner=_build(judge.fallback, fallback)))


def _build(name: str, kwargs: dict[str, Any]) -> Partitioner:
    try:
        return get_partitioner(name, **kwargs)
    except ValueError as e:
        raise ConfigError(str(e)) from e


def partitioner_for(cue: Any, name: str | None = None) -> Partitioner:
    """The cached, long-lived partitioner that ``algorithm.cue`` describes.

    ``name`` defaults to the section's ``partitioner``.  One instance per distinct
    (name, constructor arguments), keyed by their canonical JSON; the judge is keyed by its
    whole ``algorithm.cue.judge`` setting and its fallback's arguments, and receives its fallback
    partitioner from here (built with :func:`partitioner_kwargs` of ``judge.fallback``, without
    ``partitioner_kwargs``, which belong to a judge-less setup).  A partitioner that
    rejects its arguments raises :class:`ConfigError` naming them.
    """
    name = name or config_get(cue, "partitioner") or "strategy_cue"
    if name == "judge":
        kw, build = _judge_recipe(cue)
    else:
        kw = partitioner_kwargs(cue, name, config_get(cue, "partitioner_kwargs"))

        def build() -> Partitioner:
            return _build(name, kw)

    key = json.dumps([name, kw], sort_keys=True, default=str)
    with _CACHE_LOCK:
        part = _CACHE.get(key)
        if part is None:
            part = _CACHE[key] = build()
        return part

