"""The boundary walk: every bounded or enumerated schema field, at its edges, through both
the schema (:func:`validate_algorithm_config`) and the code that consumes the value.

The two must agree on every value: a value the schema accepts must not fail at step 1,
and a value the consuming code accepts must not be refused by the schema for nothing.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from verl_focal.config.schema import SECTIONS, ConfigError, CueConfig, validate_algorithm_config


def _credit(**kw):
    from verl_focal.core.credit import validate_credit_args

    args = {"alpha": 0.8, "clip": (0.3, 3.0), "floor_mode": "none", "floor": 1.05}
    args.update(kw)
    validate_credit_args(**args)


def _strategy(**kw):
    from verl_focal.partition.strategy_cue import StrategyCuePartitioner

    StrategyCuePartitioner(**kw)


def _extractor(**kw):
    from verl_focal.partition.cues import get_extractor

    get_extractor(**kw)


def _group_advantage(base):
    from verl_focal.core.groups import group_advantage

    group_advantage(torch.tensor([1.0, 0.0]), torch.tensor([0, 0]), 1, torch.ones(2), base=base)


def _focal_weight(gamma):
    from verl_focal.core.focal import focal_weight

    focal_weight(torch.tensor([0.5]), gamma)


def _passk(k):
    from verl_focal.core.passk_advantage import passk_group_advantages

    passk_group_advantages(torch.tensor([600.0]), torch.tensor([3.0]), k)  # a group large enough for any k


def _unlikely(beta=0.25, likelihood="sum"):
    from verl_focal.core.unlikeliness import sequence_log_likelihood, unlikeliness_factor

    score = sequence_log_likelihood(torch.tensor([-3.0, -1.0]), torch.tensor([2.0, 2.0]), likelihood)
    unlikeliness_factor(score, torch.tensor([1.0, 1.0]), torch.tensor([0, 0]), 1, torch.ones(2), beta)


def _maxrl(epsilon):
    from verl_focal.core.maxrl import maxrl_advantage

    maxrl_advantage(torch.tensor([1.0, 0.0]), torch.tensor([0, 0]), 1, torch.ones(2), epsilon)


def _smoothing(c_pos=0.05, c_neg=0.05):
    from verl_focal.core.smoothing import smoothing_term

    smoothing_term(torch.tensor([-1.0, -2.0]), torch.tensor([1.0, 0.0]), torch.ones(2), c_pos, c_neg)


def _prompt(version):
    from verl_focal.partition.judge.prompt import build_messages

    build_messages("1+1?", ["2", "two"], 4000, prompt_version=version)


#: key -> the consuming code, called with the field's value
CONSUMERS = {
    "algorithm.focal.gamma": _focal_weight,
    "algorithm.focal.base": _group_advantage,
    "algorithm.cue.alpha": lambda v: _credit(alpha=v),
    "algorithm.cue.floor_mode": lambda v: _credit(floor_mode=v),
    "algorithm.cue.floor": lambda v: _credit(floor=v),
    "algorithm.cue.epsilon": lambda v: _strategy(epsilon=v),
    "algorithm.cue.rho": lambda v: _strategy(rho=v),
    "algorithm.cue.backend": lambda v: _extractor(backend=v) if v != "hyperscan" or _has_hyperscan() else None,
    "algorithm.cue.extract_timeout": lambda v: _extractor(timeout=v),
    "algorithm.cue.judge.prompt_version": _prompt,
    "algorithm.passk.k": lambda v: _passk(k=v),
    "algorithm.unlikely.beta": lambda v: _unlikely(beta=v),
    "algorithm.unlikely.likelihood": lambda v: _unlikely(likelihood=v),
    "algorithm.maxrl.epsilon": _maxrl,
    "algorithm.ds_grpo.correct_coef": lambda v: _smoothing(c_pos=v),
    "algorithm.ds_grpo.incorrect_coef": lambda v: _smoothing(c_neg=v),
}

#: bounded fields whose only consumer reads the validated dataclass (no second check to disagree with)
SCHEMA_ONLY = {
    "algorithm.focal.correctness": "integration/inputs.py branches on FocalConfig.correctness",
    "algorithm.cue.source": "the Cue-GRPO estimator branches on CueConfig.source",
    "algorithm.cue.uniform_boost": "the Cue-GRPO estimator multiplies by CueConfig.uniform_boost",
    "algorithm.ds_grpo.std": "the ds_grpo estimator branches on DSGRPOConfig.std (population unless 'sample')",
}


def _has_hyperscan() -> bool:
    from verl_focal.partition.cues import hyperscan_available

    return hyperscan_available()


def _bounded_fields():
    def walk(cls, prefix):
        for f in dataclasses.fields(cls):
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
            if dataclasses.is_dataclass(default):
                yield from walk(type(default), f"{prefix}.{f.name}")
            elif set(f.metadata) & {"min", "max", "min_exclusive", "choices"}:
                yield f"{prefix}.{f.name}", f, default

    for name, cls in SECTIONS.items():
        yield from walk(cls, f"algorithm.{name}")


def _edge_values(f, default):
    m = f.metadata
    is_int = isinstance(default, int) and not isinstance(default, bool)
    below = (lambda x: x - 1) if is_int else (lambda x: math.nextafter(float(x), -math.inf))
    above = (lambda x: x + 1) if is_int else (lambda x: math.nextafter(float(x), math.inf))
    vals = []
    if "min" in m:
        vals += [m["min"], below(m["min"])]
    if "min_exclusive" in m:
        vals += [m["min_exclusive"], above(m["min_exclusive"])]
    if "max" in m:
        vals += [m["max"], above(m["max"])]
    if "choices" in m:
        vals += list(m["choices"]) + ["no_such_" + str(m["choices"][0])]
    return vals


def _nested(key, value):
    parts = key.split(".")[1:]
    out = cur = {}
    for p in parts[:-1]:
        cur[p] = {}
        cur = cur[p]
    cur[parts[-1]] = value
    return out


CASES = [(key, v) for key, f, d in _bounded_fields() for v in _edge_values(f, d)]


def test_every_bounded_field_has_a_consumer_or_a_stated_reason():
    keys = {key for key, _, _ in _bounded_fields()}
    judge_fields = {k for k in keys if k.startswith("algorithm.cue.judge.") and k not in CONSUMERS}
    # the judge reads its whole section through JudgeConfig itself (partition/judge/config.py)
    missing = keys - set(CONSUMERS) - set(SCHEMA_ONLY) - judge_fields
    assert not missing, f"add the consuming code of {sorted(missing)} to CONSUMERS (or to SCHEMA_ONLY, with why)"
    assert set(CONSUMERS) <= keys and set(SCHEMA_ONLY) <= keys  # no stale entries
    assert len(CASES) > 60


@pytest.mark.parametrize("key,value", CASES, ids=[f"{k.split('algorithm.')[1]}={v!r}" for k, v in CASES])
def test_schema_and_consumer_agree_at_the_edges(key, value):
    try:
        validate_algorithm_config(_nested(key, value))
        schema_ok, why = True, ""
    except ConfigError as e:
        schema_ok, why = False, str(e)
        assert key in why and "set " in why, why  # names the key and says what to set
    consumer = CONSUMERS.get(key)
    if consumer is None:
        return
    try:
        consumer(value)
        consumer_ok, cwhy = True, ""
    except ValueError as e:
        consumer_ok, cwhy = False, str(e)
    assert schema_ok == consumer_ok, f"{key}={value!r}: schema {'accepts' if schema_ok else 'refuses: ' + why}, " \
        f"consumer {'accepts' if consumer_ok else 'refuses: ' + cwhy}"


@pytest.mark.parametrize("clip", [[0.0, 1.0], [1.0, 1.0], [0.3, 3.0], [-1e-9, 3.0], [0.3, 0.999], [1.01, 3.0], None])
def test_clip_rule_agrees_with_the_credit_rule(clip):
    try:
        validate_algorithm_config({"cue": {"clip": clip}})
        schema_ok = True
    except ConfigError:
        schema_ok = False
    try:
        _credit(clip=clip)
        consumer_ok = True
    except ValueError:
        consumer_ok = False
    assert schema_ok == consumer_ok


def test_enumerations_are_the_consumers_own_tuples():
    from verl_focal.core.credit import FLOOR_MODES
    from verl_focal.core.groups import BASES
    from verl_focal.partition.cues.engine import BACKENDS
    from verl_focal.partition.judge.prompt import PROMPT_VERSIONS

    meta = {f.name: f.metadata for f in dataclasses.fields(CueConfig)}
    assert meta["floor_mode"]["choices"] is FLOOR_MODES
    assert meta["backend"]["choices"] is BACKENDS
    assert {f.name: f.metadata for f in dataclasses.fields(SECTIONS["focal"])}["base"]["choices"] is BASES
    from verl_focal.config.schema import JUDGE_PROMPT_VERSIONS

    assert set(JUDGE_PROMPT_VERSIONS) == set(PROMPT_VERSIONS)
