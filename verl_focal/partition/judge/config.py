"""Settings of the judge partitioner (``algorithm.cue.judge.*``).

Pure Python (no verl import).  The dataclass is the single source of the
defaults; the YAML section and the docs table are derived from / tested
against it.  Every check names the key, the value it got, and the fix.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Mapping
from urllib.parse import urlsplit

__all__ = ["JudgeConfig", "coerce_judge_config"]

_KEY = "algorithm.cue.judge"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class JudgeConfig:
    """Where the judge is served and how hard to try before falling back.

    ``base_url`` is the OpenAI-style API root including ``/v1``
    (``vllm serve`` -> ``http://host:8000/v1``); the client posts to
    ``{base_url}/chat/completions`` and ``verl-focal check`` reads
    ``{base_url}/models``.
    """

    base_url: str = "http://127.0.0.1:8000/v1"
    model: str = ""
    # NAME of the environment variable that holds the key ("" = send no key).
    api_key_env: str = ""
    timeout_s: float = 30.0  # whole request (connect + wait + read), per attempt
    max_retries: int = 2  # extra attempts after the first, on timeout / refused / 429 / 5xx / dropped
    backoff_s: float = 0.5  # first retry waits backoff_s, then 2x, 4x ... (capped by max_backoff_s)
    max_backoff_s: float = 8.0  # also the longest Retry-After honoured; a longer one falls back at once
    max_concurrency: int = 16  # requests in flight at once, across all groups of a step
    max_chars_per_solution: int = 4000  # mean solution budget in the prompt (fair water-filling)
    prompt_version: str = "v1"
    temperature: float = 0.0
    max_tokens: int = 1024
    json_mode: bool = True  # send response_format={"type": "json_object"}; dropped if the server rejects it
    max_repair_fraction: float = 0.5  # repairs touching more solutions than this fraction -> fallback
    step_deadline_s: float | None = None  # cap on a step's judge wait; None = derived from the above
    fallback: str = "strategy_cue"
    fallback_kwargs: dict[str, Any] = field(default_factory=dict)
    cache_dir: str | None = None  # optional on-disk cache (one JSON file per group)
    cache_max_entries: int = 100_000  # in-memory LRU size

    def validate(self) -> "JudgeConfig":
        """Raise ``ValueError`` naming the bad key, its value and the fix."""

        def bad(key: str, fix: str) -> ValueError:
            return ValueError(f"{_KEY}.{key}={getattr(self, key)!r} is invalid: {fix}")

        u = urlsplit(str(self.base_url))
        if u.scheme not in ("http", "https") or not u.netloc:
            raise bad("base_url", "give the API root of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
        if not isinstance(self.model, str) or not self.model.strip():
            raise bad("model", "set it to the served model name (the id listed by GET {base_url}/models)")
        if self.api_key_env and not _ENV_NAME.match(str(self.api_key_env)):
            raise ValueError(
                f"{_KEY}.api_key_env must be the NAME of an environment variable (letters, digits, '_'), "
                "not the key itself; put the key in that variable"
            )
        def number(v: Any) -> bool:
            return isinstance(v, (int, float)) and not isinstance(v, bool)

        if not number(self.timeout_s) or self.timeout_s <= 0:
            raise bad("timeout_s", "use a positive number of seconds")
        for key in ("backoff_s", "max_backoff_s"):
            if not number(getattr(self, key)) or getattr(self, key) < 0:
                raise bad(key, "use a number of seconds >= 0")
        for key, lo in (("max_retries", 0), ("max_concurrency", 1), ("max_chars_per_solution", 64), ("max_tokens", 16),
                        ("cache_max_entries", 0)):
            v = getattr(self, key)
            if not isinstance(v, int) or isinstance(v, bool) or v < lo:
                raise bad(key, f"use an integer >= {lo}")
        if not isinstance(self.temperature, (int, float)) or not 0 <= self.temperature <= 2:
            raise bad("temperature", "use a number in [0, 2] (0 = greedy, recommended)")
        if not isinstance(self.max_repair_fraction, (int, float)) or not 0 <= self.max_repair_fraction <= 1:
            raise bad("max_repair_fraction", "use a fraction in [0, 1]")
        if self.step_deadline_s is not None and (
            not isinstance(self.step_deadline_s, (int, float)) or self.step_deadline_s <= 0
        ):
            raise bad("step_deadline_s", "use a positive number of seconds, or null to derive it")
        from verl_focal.partition.judge.prompt import PROMPT_VERSIONS

        if self.prompt_version not in PROMPT_VERSIONS:
            raise bad("prompt_version", f"choose one of {sorted(PROMPT_VERSIONS)}")
        if not isinstance(self.fallback, str) or not self.fallback:
            raise bad("fallback", "name a partitioner, e.g. strategy_cue, single or singleton")
        if self.fallback == "judge":
            raise bad("fallback", "the fallback must not be the judge itself; use strategy_cue, single or singleton")
        if not isinstance(self.fallback_kwargs, Mapping):
            raise bad("fallback_kwargs", "use a mapping of keyword arguments for the fallback partitioner")
        return self

    def derived_deadline_s(self) -> float:
        """Longest a group can legitimately take: every attempt times out and every backoff is maximal."""
        if self.step_deadline_s is not None:
            return float(self.step_deadline_s)
        attempts = self.max_retries + 1
        return attempts * self.timeout_s + self.max_retries * self.max_backoff_s + 1.0


def coerce_judge_config(cfg: Any = None, **overrides: Any) -> JudgeConfig:
    """Build a validated :class:`JudgeConfig` from a JudgeConfig, a mapping or an OmegaConf node.

    Unknown keys raise ``ValueError`` listing the known ones (nothing is silently ignored).
    """
    if isinstance(cfg, JudgeConfig):
        data = dataclasses.asdict(cfg)
    elif cfg is None:
        data = {}
    else:
        try:  # OmegaConf DictConfig -> plain dict, without importing omegaconf when not needed
            from omegaconf import DictConfig, OmegaConf

            if isinstance(cfg, DictConfig):
                cfg = OmegaConf.to_container(cfg, resolve=True)
        except ImportError:  # pragma: no cover
            pass
        if not isinstance(cfg, Mapping):
            raise ValueError(f"{_KEY} must be a mapping, got {type(cfg).__name__}")
        data = dict(cfg)
    data.update(overrides)
    known = {f.name for f in dataclasses.fields(JudgeConfig)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"unknown key(s) {[f'{_KEY}.{k}' for k in unknown]}; known keys: {sorted(known)}")
    if data.get("fallback_kwargs") is None:
        data["fallback_kwargs"] = {}
    return JudgeConfig(**data).validate()
