"""Settings of the judge partitioner (``algorithm.cue.judge.*``).

The fields, defaults, ranges and docs live in one place,
:class:`verl_focal.config.schema.JudgeConfig` (no verl import there); this
module only turns what a caller hands the partitioner into a validated
instance.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from verl_focal.config.schema import ConfigError, JudgeConfig, section_from_mapping

__all__ = ["JudgeConfig", "ConfigError", "coerce_judge_config", "missing_key_line", "PREFIX"]

PREFIX = "algorithm.cue.judge"


def missing_key_line(name: str) -> str:
    """The refusal for an ``api_key_env`` that this process lacks, naming the process and where to set it: the
    variable is read by the process that runs the steps (our TaskRunner), on whichever node Ray placed it."""
    import os
    import socket

    return (f"{PREFIX}.api_key_env={name!r}: {name} is not set or empty in this process (pid {os.getpid()} on "
            f"{socket.gethostname()}); export it before the launch, and on a cluster before `ray start` on every "
            f"node (the process that calls the judge may run on any of them), or set api_key_env='' for a server "
            "without keys")


def coerce_judge_config(cfg: Any = None, **overrides: Any) -> JudgeConfig:
    """A validated :class:`JudgeConfig` from a JudgeConfig, a mapping, an OmegaConf node or None,
    with keyword ``overrides`` applied on top.

    Unlike the schema pass (which validates the section even when another partitioner is
    chosen), this also requires ``model``: the judge is about to be used.  Errors are
    :class:`ConfigError` (a ``ValueError``) naming the key, the value and the fix; unknown keys
    are errors, never ignored.
    """
    if isinstance(cfg, JudgeConfig):
        data: dict[str, Any] = dataclasses.asdict(cfg)
    elif cfg is None:
        data = {}
    else:
        try:
            from omegaconf import DictConfig, OmegaConf

            if isinstance(cfg, DictConfig):
                cfg = OmegaConf.to_container(cfg, resolve=True)
        except ImportError:  # pragma: no cover
            pass
        if not isinstance(cfg, Mapping):
            raise ConfigError(f"{PREFIX} must be a mapping, got {type(cfg).__name__}")
        data = dict(cfg)
    data.update(overrides)
    if data.get("cache_dir") is None and "cache_dir" in data:
        data["cache_dir"] = ""
    out = section_from_mapping(JudgeConfig, data, PREFIX)
    if not out.model.strip():
        raise ConfigError(
            f"{PREFIX}.model={out.model!r} is empty; set it to the served model name "
            "(an id listed by GET {base_url}/models), e.g. algorithm.cue.judge.model=Qwen/Qwen2.5-7B-Instruct"
        )
    return out
