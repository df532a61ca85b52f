"""The config schema: one source of truth for every ``algorithm.focal.*`` and
``algorithm.cue.*`` default, its documentation and its valid range.

The packaged YAML (``focal_trainer.yaml``) is tested against these defaults, the
config reference in docs/config.md is generated from them
(``python -m verl_focal.config.schema``), and :func:`validate_algorithm_config`
is what ``verl-focal check``, our TaskRunner (at start-up) and the estimators
call.  No verl import here.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ConfigError",
    "FocalConfig",
    "CueConfig",
    "JudgeConfig",
    "PassKConfig",
    "UnlikelyConfig",
    "MaxRLConfig",
    "DSGRPOConfig",
    "SECTIONS",
    "AlgorithmSettings",
    "parse_settings",
    "validate_algorithm_config",
    "section_from_mapping",
    "markdown_table",
]


# The allowed values live with the code that uses them; the schema imports them
# (one source of truth; tests/config/test_boundaries.py walks every bound through both).
from verl_focal.config.choices import CUE_BACKENDS
from verl_focal.config.errors import ConfigError, did_you_mean
from verl_focal.core.credit import FLOOR_MODES, validate_credit_args
from verl_focal.core.groups import BASES
from verl_focal.core.maxrl import EPSILON_DEFAULT as MAXRL_EPSILON
from verl_focal.core.passk_advantage import K_MAX, K_MIN
from verl_focal.core.smoothing import COEF_DEFAULT as DS_COEF
from verl_focal.core.smoothing import STD_READINGS
from verl_focal.core.unlikeliness import BETA_MAX, BETA_MIN, LIKELIHOODS

#: ``algorithm.focal.correctness`` values, read by :mod:`verl_focal.estimators.inputs`
CORRECTNESS_MODES = ("auto", "acc", "reward")
#: ``algorithm.cue.source`` values, read by the Cue-GRPO estimators
CUE_SOURCES = ("auto", "signature", "text")
#: ``algorithm.cue.judge.prompt_version`` values, read by the judge prompt builder
JUDGE_PROMPT_VERSIONS = ("v1",)


def _doc(text: str, **extra: Any) -> Any:
    return {"doc": text, **extra}


@dataclass(frozen=True)
class FocalConfig:
    """``algorithm.focal``: the focal weight of F-GRPO / F-DAPO / F-CISPO."""

    gamma: float = field(default=0.5, metadata=_doc(
        "Focal exponent γ in g = (1 − p̂)^γ. 0 reproduces the base estimator exactly. "
        "Paper: 0.5 for F-GRPO/F-DAPO, 1.0 for F-CISPO; 2 raises pass@256 further but costs pass@1.", min=0.0))
    base: str = field(default="grpo", metadata=_doc(
        "Base group advantage the weight multiplies: grpo (std-normalised; Dr.GRPO when "
        "algorithm.norm_adv_by_std_in_grpo=false), drgrpo (no std division), rloo (leave-one-out).",
        choices=BASES))
    correctness: str = field(default="auto", metadata=_doc(
        "Where per-rollout correctness c_i comes from: auto = the reward extra `acc` when the trainer hook "
        "supplies it, else reward > correct_threshold; acc = require `acc` (an error when none reaches the "
        "estimator; a row without it leaves its group, counted as verl_focal/rows_without_acc); "
        "reward = always reward > correct_threshold.", choices=CORRECTNESS_MODES))
    correct_threshold: float = field(default=0.5, metadata=_doc(
        "A rollout counts as correct when its summed reward exceeds this (used without `acc`). "
        "0.5 suits 0/1 and ±1 (math_dapo) scorers; with DAPO's overlong penalty a correct answer can score "
        "below it, so prefer a scorer that returns `acc`."))
    acc_key: str = field(default="acc", metadata=_doc(
        "Name of the reward extra holding 0/1 correctness."))


@dataclass(frozen=True)
class JudgeConfig:
    """``algorithm.cue.judge``: the LLM-judge partitioner (an OpenAI-compatible server); docs/judge.md."""

    base_url: str = field(default="http://127.0.0.1:8000/v1", metadata=_doc(
        "API root of an OpenAI-compatible server, ending in /v1 (vllm serve, SGLang, hosted API); "
        "the judge posts to {base_url}/chat/completions."))
    model: str = field(default="", metadata=_doc(
        "Served model name, as listed by GET {base_url}/models (required when partitioner=judge; "
        "checked by `verl-focal check`)."))
    api_key_env: str = field(default="", metadata=_doc(
        "NAME of the environment variable holding the API key (never the key itself); empty = send no key."))
    timeout_s: float = field(default=60.0, metadata=_doc(
        "Limit on one whole request (connect + queue + generation + read), in seconds.", min_exclusive=0.0))
    max_retries: int = field(default=2, metadata=_doc(
        "Extra attempts after a timeout, refused/dropped connection, 429 or 5xx.", min=0))
    backoff_s: float = field(default=0.5, metadata=_doc(
        "Wait before retry k (k = 0, 1, ...) is backoff_s·2^k, unless the server sends Retry-After.", min=0.0))
    max_backoff_s: float = field(default=8.0, metadata=_doc(
        "Cap on one wait; a longer Retry-After makes the group fall back at once.", min=0.0))
    max_concurrency: int = field(default=32, metadata=_doc(
        "Requests in flight at once, over all groups of a step.", min=1))
    max_chars_per_solution: int = field(default=4000, metadata=_doc(
        "Mean solution budget in the prompt: at most n × this many solution characters; short solutions "
        "are sent whole and leave their share to long ones, which are cut to one common length (head + tail).",
        min=64))
    prompt_version: str = field(default="v1", metadata=_doc(
        "Version of the judge prompt (part of the cache key).", choices=JUDGE_PROMPT_VERSIONS))
    temperature: float = field(default=0.0, metadata=_doc("Sampling temperature of the judge.", min=0.0, max=2.0))
    max_tokens: int = field(default=1024, metadata=_doc(
        "Completion token limit (raise it for reasoning judges that think before answering).", min=16))
    json_mode: bool = field(default=True, metadata=_doc(
        "Send response_format={type: json_object}; switched off automatically if the server rejects it."))
    max_repair_fraction: float = field(default=0.5, metadata=_doc(
        "A reply whose invalid + duplicated + missing indices exceed this fraction of the solutions falls "
        "back; below it, it is repaired (missing solutions become singletons).", min=0.0, max=1.0))
    step_deadline_s: float = field(default=0.0, metadata=_doc(
        "Longest a step waits for its judge answers; unfinished groups fall back. 0 = derived: "
        "(max_retries+1)·timeout_s + max_retries·max_backoff_s + 1.", min=0.0))
    breaker_cooldown_s: float = field(default=120.0, metadata=_doc(
        "Circuit breaker: when every request of a step failed at the network level (timeout, refused, "
        "dropped, 429, 5xx, deadline), later steps fall back at once (reason circuit_open) for this many "
        "seconds, then try the server again. 0 disables it.", min=0.0))
    fallback: str = field(default="strategy_cue", metadata=_doc(
        "Partitioner used for a group whose judge call failed (never `judge`); it takes algorithm.cue's "
        "own settings (cue_set, epsilon, rho, seed), so a failed group is split as that partitioner would."))
    cache_dir: str = field(default="", metadata=_doc(
        "Optional on-disk cache directory (survives restarts); empty = in-memory only."))
    cache_max_entries: int = field(default=100_000, metadata=_doc("In-memory cache size (LRU); 0 disables it.", min=0))

    def derived_deadline_s(self) -> float:
        """The step deadline: ``step_deadline_s``, or the longest a group can legitimately take."""
        if self.step_deadline_s > 0:
            return float(self.step_deadline_s)
        return (self.max_retries + 1) * self.timeout_s + self.max_retries * self.max_backoff_s + 1.0

    def check(self, prefix: str = "algorithm.cue.judge") -> None:
        """Checks beyond single-field ranges; raise :class:`ConfigError` naming the key and the fix."""
        from urllib.parse import urlsplit

        u = urlsplit(self.base_url)
        if u.scheme not in ("http", "https") or not u.netloc:
            raise ConfigError(
                f"{prefix}.base_url={self.base_url!r} is not an http(s) URL; give the API root of an "
                "OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1"
            )
        if self.api_key_env and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.api_key_env):
            # never echo the value: it may be a key pasted by mistake
            raise ConfigError(
                f"{prefix}.api_key_env must be the NAME of an environment variable (letters, digits, '_'), "
                "not the key itself; put the key in that variable and give its name"
            )
        if not self.fallback:
            raise ConfigError(
                f"{prefix}.fallback is empty; name a partitioner such as strategy_cue, single or singleton"
            )
        if self.fallback == "judge":
            raise ConfigError(
                f"{prefix}.fallback='judge': the fallback must not be the judge itself; "
                "use strategy_cue, single or singleton"
            )


@dataclass(frozen=True)
class CueConfig:
    """``algorithm.cue``: Cue-GRPO rarity-aware credit redistribution."""

    partitioner: str = field(default="strategy_cue", metadata=_doc(
        "Registered partitioner (strategy_cue, judge, single, singleton, random) or an import path pkg.module:Name."))
    partitioner_kwargs: dict = field(default_factory=dict, metadata=_doc(
        "Extra keyword arguments for the partitioner's constructor."))
    alpha: float = field(default=0.8, metadata=_doc(
        "Rarity exponent α: w_i ∝ |C(i)|^(−α). 0 = GRPO; 1 gives every cluster equal total credit.", min=0.0))
    epsilon: float = field(default=0.5, metadata=_doc(
        "Cosine-similarity threshold ε for an edge between two cue vectors.", min_exclusive=0.0, max=1.0))
    rho: float = field(
        default=0.75,
        metadata=_doc(
            "Cues present in more than this fraction of a group's correct traces are suppressed.",
            min_exclusive=0.0,
            max=1.0,
        ),
    )
    clip: list = field(default_factory=lambda: [0.3, 3.0], metadata=_doc(
        "[min, max] clip of the multipliers before renormalisation; null disables clipping."))
    renormalize: bool = field(default=True, metadata=_doc(
        "Renormalise the clipped multipliers to mean 1 over the group's correct rollouts (mass preservation)."))
    floor_mode: str = field(default="none", metadata=_doc(
        "Paper's floor τ, whose exact form is uncertain: none, additive (w + τ − 1) or max (max(w, τ)).",
        choices=FLOOR_MODES))
    floor: float = field(default=1.05, metadata=_doc("Floor τ used when floor_mode is not none.", min_exclusive=0.0))
    uniform_boost: float = field(default=1.0, metadata=_doc(
        "Uniform-Boost control: multiply every correct rollout's advantage by this factor instead of "
        "redistributing (1.0 = off).", min_exclusive=0.0))
    cue_set: str = field(default="math_v1", metadata=_doc(
        "Strategy-cue catalogue: a packaged name (math_v1) or a .yaml/.json file path; docs/cue.md."))
    source: str = field(default="auto", metadata=_doc(
        "Where strategy_cue reads each correct rollout from: auto = the reward extra `cue_sig` (made in the "
        "reward workers by verl_focal.reward.compute_score with reward kwarg cue_set) when present for the "
        "whole group, else the decoded text; signature = require `cue_sig`; text = always extract at advantage time.",
        choices=CUE_SOURCES))
    backend: str = field(default="auto", metadata=_doc(
        "Cue-matching engine: auto = Hyperscan when installed (x86), else the regex module; both give identical "
        "cue sequences.", choices=CUE_BACKENDS))
    extract_timeout: float = field(default=2.0, metadata=_doc(
        "Time budget (s) for extracting one response's cues with the regex backend; a response over budget "
        "joins its group's residual cluster and is counted in cue/extract_failed.", min_exclusive=0.0))
    seed: int = field(default=0, metadata=_doc("Seed for randomised partitioners (random)."))
    judge: JudgeConfig = field(default_factory=JudgeConfig, metadata=_doc("LLM-judge settings."))


@dataclass(frozen=True)
class PassKConfig:
    """``algorithm.passk``: Pass@k Training's analytic group advantage (``passk_grpo``; docs/methods.md §9)."""

    k: int = field(default=4, metadata=_doc(
        "Subset size k of the pass@k objective: each rollout's advantage is the expected pass@k gain over all "
        "k-subsets of its group. 1 = GRPO with the population std. Must not exceed actor_rollout_ref.rollout.n "
        "(checked at start-up).", min=K_MIN, max=K_MAX))


@dataclass(frozen=True)
class UnlikelyConfig:
    """``algorithm.unlikely``: the unlikeliness reward (``unlikely_grpo``; docs/methods.md §10)."""

    beta: float = field(default=0.25, metadata=_doc(
        "β_rank: a correct rollout's reward is multiplied by 1 − β·(G − rank)/G, rank 1 = most likely under the "
        "rollout policy. 0 = GRPO; the paper uses 0.25.", min=BETA_MIN, max=BETA_MAX))
    likelihood: str = field(default="sum", metadata=_doc(
        "Likelihood used for ranking: sum = Σ_t log π_old(y_t), the sequence log-probability (the paper's "
        "definition); mean = per-token mean log-probability (what the authors' released code ranks by).",
        choices=LIKELIHOODS))


@dataclass(frozen=True)
class MaxRLConfig:
    """``algorithm.maxrl``: the MaxRL advantage (``maxrl``; docs/methods.md §11)."""

    epsilon: float = field(default=MAXRL_EPSILON, metadata=_doc(
        "ε in Â = (c − p̂)/(p̂ + ε), c the 0/1 correctness and p̂ the group's success rate. 1e-06 is the authors'; "
        "it matters only when comparable to 1/rollout.n, where a larger ε shrinks the weight of hard prompts.",
        min_exclusive=0.0))


@dataclass(frozen=True)
class DSGRPOConfig:
    """``algorithm.ds_grpo``: differential smoothing (``ds_grpo``; docs/methods.md §12)."""

    correct_coef: float = field(default=DS_COEF, metadata=_doc(
        "c₊: a correct rollout's advantage gets − c₊·ℓ̄, ℓ̄ its token-mean old log-prob (≤ 0). 0.05 is the "
        "authors' default.", min=0.0))
    incorrect_coef: float = field(default=DS_COEF, metadata=_doc(
        "c₋: a wrong rollout's advantage gets + c₋·ℓ̄. 0.05 is the authors' default.", min=0.0))
    std: str = field(default="population", metadata=_doc(
        "The group std in the GRPO term: population (divides by N, the authors' code) or sample (N − 1, "
        "verl's grpo). algorithm.norm_adv_by_std_in_grpo=false drops the division.", choices=STD_READINGS))


#: (path under ``algorithm``, dataclass)
SECTIONS: dict[str, type] = {"focal": FocalConfig, "cue": CueConfig}
SECTIONS["passk"] = PassKConfig
SECTIONS["unlikely"] = UnlikelyConfig
SECTIONS["maxrl"] = MaxRLConfig
SECTIONS["ds_grpo"] = DSGRPOConfig


def _to_plain(value: Any) -> Any:
    try:  # OmegaConf containers -> plain Python, without importing omegaconf eagerly
        from omegaconf import DictConfig, ListConfig, OmegaConf

        if isinstance(value, (DictConfig, ListConfig)):
            return OmegaConf.to_container(value, resolve=True)
    except ImportError:  # pragma: no cover
        pass
    return value


def _range_parts(meta: Mapping, ge: str = ">=", le: str = "<=", number: str = "g") -> list[str]:
    """A field's bounds as ``[">= 0", "<= 1"]`` (``ge`` / ``le`` the signs, ``number`` the format of the values)."""
    signs = (("min", ge), ("min_exclusive", ">"), ("max", le))
    return [f"{sign} {meta[k]:{number}}" for k, sign in signs if k in meta]


def _range_text(meta: Mapping) -> str:
    """The allowed range of a field in words: ``>= 0``, ``> 0 and <= 1``, ..."""
    return " and ".join(_range_parts(meta))


def _fix(key: str, default: Any, meta: Mapping) -> str:
    return f"set {key}={default} (default) or another value {_range_text(meta)}"


def _check_field(prefix: str, f: dataclasses.Field, value: Any) -> Any:
    key = f"{prefix}.{f.name}"
    meta = f.metadata
    default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(
                f"{key} must be true or false, got {value!r}; "
                f"set {key}={str(default).lower()} (default) or {str(not default).lower()}"
            )
        return value
    if isinstance(default, int) and not isinstance(default, bool) and f.type in ("int", int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(
                f"{key} must be an integer, got {value!r}; set {key}={default} (default) or another integer"
            )
    elif isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{key} must be a number, got {value!r}; set {key}={default} (default) or another number")
        value = float(value)
        if not math.isfinite(value):
            raise ConfigError(f"{key} must be finite, got {value}; set a finite value such as {default}")
    elif isinstance(default, str) and not isinstance(value, str):
        raise ConfigError(f"{key} must be a string, got {value!r}; set {key}={default!r} (default) or another string")
    elif isinstance(default, dict) and not isinstance(value, dict):
        raise ConfigError(
            f"{key} must be a mapping, got {value!r}; set {key}={{}} (default) or e.g. '{key}={{name: value}}'"
        )
    if "choices" in meta and value not in meta["choices"]:
        raise ConfigError(
            f"{key}={value!r} is not one of {list(meta['choices'])}{did_you_mean(value, meta['choices'])}; "
            f"set {key}={default} (default) or another of these"
        )
    if "min" in meta and value < meta["min"]:
        raise ConfigError(f"{key} must be >= {meta['min']}, got {value}; {_fix(key, default, meta)}")
    if "min_exclusive" in meta and value <= meta["min_exclusive"]:
        raise ConfigError(f"{key} must be > {meta['min_exclusive']}, got {value}; {_fix(key, default, meta)}")
    if "max" in meta and value > meta["max"]:
        raise ConfigError(f"{key} must be <= {meta['max']}, got {value}; {_fix(key, default, meta)}")
    return value


def section_from_mapping(cls: type, data: Mapping | None, prefix: str) -> Any:
    """Build and validate one section dataclass from a (possibly partial) mapping.

    Missing keys take the schema default; unknown keys raise (nothing is silently ignored).
    """
    data = _to_plain(data) or {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{prefix} must be a mapping, got {type(data).__name__}: {data!r}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        hints = "".join(did_you_mean(k, fields) for k in unknown[:1])
        raise ConfigError(
            f"unknown key(s) {', '.join(prefix + '.' + k for k in unknown)}{hints}; "
            f"valid keys under {prefix}: {sorted(fields)}"
        )
    kwargs = {}
    for name, f in fields.items():
        if name not in data:
            continue
        value = data[name]
        if dataclasses.is_dataclass(f.default_factory() if f.default_factory is not dataclasses.MISSING else None):
            kwargs[name] = section_from_mapping(type(f.default_factory()), value, f"{prefix}.{name}")
        else:
            kwargs[name] = _check_field(prefix, f, value)
    obj = cls(**kwargs)
    _cross_checks(obj, prefix)
    return obj


def _cross_checks(obj: Any, prefix: str) -> None:
    if isinstance(obj, JudgeConfig):
        obj.check(prefix)
    if isinstance(obj, CueConfig):
        clip = obj.clip
        if clip is not None and (
            not isinstance(clip, (list, tuple))
            or len(clip) != 2
            or not all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in clip)
        ):
            raise ConfigError(
                f"{prefix}.clip must be null or a pair [min, max] of numbers, got {clip!r}; "
                f"set {prefix}.clip=[0.3,3.0] (default) or {prefix}.clip=null"
            )
        try:  # the credit rule's own check: one statement of the allowed ranges
            validate_credit_args(obj.alpha, clip, obj.floor_mode, obj.floor, prefix=prefix + ".")
        except ValueError as e:
            raise ConfigError(str(e)) from None


def validate_algorithm_config(algorithm: Mapping | Any, sections: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Validate our sections of the ``algorithm`` config; return {'focal': FocalConfig, 'cue': CueConfig}.

    ``sections`` limits the work to some of them (an estimator validates what it reads on
    every call; start-up validation checks all).

    Works on an OmegaConf DictConfig, a plain dict, or any object with ``get``.
    Raises :class:`ConfigError` naming the key, the value and the fix.
    """
    getter = getattr(algorithm, "get", None)
    if getter is None:
        raise ConfigError(f"the algorithm config must be a mapping, got {type(algorithm).__name__}")
    names = SECTIONS if sections is None else sections
    return {name: section_from_mapping(SECTIONS[name], getter(name, None), f"algorithm.{name}") for name in names}


@dataclass(frozen=True)
class AlgorithmSettings:
    """Our view of verl's ``algorithm`` config, validated and typed.

    Built once by :func:`parse_settings` (at start-up, and once per training step by the trainer
    hook, which hands it down to the estimator's ``needs``/``prefetch``/``prepare`` steps and, in
    the :class:`~verl_focal.estimators.context.AdvantageContext`, to the estimator itself).
    """

    focal: FocalConfig = field(default_factory=FocalConfig)
    cue: CueConfig = field(default_factory=CueConfig)
    passk: PassKConfig = field(default_factory=PassKConfig)
    unlikely: UnlikelyConfig = field(default_factory=UnlikelyConfig)
    maxrl: MaxRLConfig = field(default_factory=MaxRLConfig)
    ds_grpo: DSGRPOConfig = field(default_factory=DSGRPOConfig)
    #: verl's own ``algorithm.norm_adv_by_std_in_grpo`` (GRPO vs Dr.GRPO base advantage)
    norm_adv_by_std_in_grpo: bool = True


def parse_settings(algorithm: Mapping | Any) -> AlgorithmSettings:
    """``algorithm`` (an OmegaConf node, a dict or verl's ``AlgoConfig``) as :class:`AlgorithmSettings`.

    The one place where an untyped ``algorithm`` config becomes typed; an
    :class:`AlgorithmSettings` is returned as it is.  Raises :class:`ConfigError` as
    :func:`validate_algorithm_config` does.

    >>> parse_settings({"focal": {"gamma": 1.0}}).focal.gamma
    1.0
    """
    if isinstance(algorithm, AlgorithmSettings):
        return algorithm
    sections = validate_algorithm_config(algorithm if algorithm is not None else {})
    norm = algorithm.get("norm_adv_by_std_in_grpo", True) if algorithm is not None else True
    return AlgorithmSettings(**sections, norm_adv_by_std_in_grpo=bool(True if norm is None else norm))


def defaults_as_dict() -> dict[str, Any]:
    """The schema defaults as plain nested dicts (what the YAML must contain)."""
    return {name: dataclasses.asdict(cls()) for name, cls in SECTIONS.items()}


def _rows(cls: type, prefix: str):
    for f in dataclasses.fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        if dataclasses.is_dataclass(default):
            yield from _rows(type(default), f"{prefix}.{f.name}")
            continue
        meta = f.metadata
        rng = [" \\| ".join(meta["choices"])] if "choices" in meta else []
        rng += _range_parts(meta, "≥", "≤", number="")
        yield f"| `{prefix}.{f.name}` | `{default!r}` | {', '.join(rng) or '—'} | {meta.get('doc', '')} |"


def markdown_table() -> str:
    """The config reference table of docs/config.md."""
    lines = ["| key | default | range | meaning |", "|---|---|---|---|"]
    for name, cls in SECTIONS.items():
        lines.extend(_rows(cls, f"algorithm.{name}"))
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(markdown_table())
