"""Hydra composition of verl's real ppo_trainer.yaml with our overlay, and every bad-config path."""

import pytest
from hydra import compose, initialize_config_module
from hydra.core.global_hydra import GlobalHydra
from omegaconf import OmegaConf

from verl_focal.config.schema import SECTIONS, ConfigError, defaults_as_dict, markdown_table, validate_algorithm_config


def test_overlay_defaults_equal_schema(composed_config):
    cfg = composed_config()
    yaml_sections = {k: OmegaConf.to_container(cfg.algorithm[k], resolve=True) for k in SECTIONS}
    assert yaml_sections == defaults_as_dict()
    assert cfg.algorithm.adv_estimator == "f_grpo"
    # verl's own defaults are intact underneath
    assert cfg.trainer.use_v1 is True and cfg.trainer.v1.trainer_mode == "sync"
    assert "actor_rollout_ref" in cfg and "reward" in cfg


def test_our_keys_need_no_plus_and_verl_keys_still_compose(composed_config):
    cfg = composed_config(["algorithm.focal.gamma=1.0", "algorithm.cue.alpha=1.0", "actor_rollout_ref.rollout.n=16"])
    assert cfg.algorithm.focal.gamma == 1.0 and cfg.algorithm.cue.alpha == 1.0
    assert cfg.actor_rollout_ref.rollout.n == 16


@pytest.mark.parametrize(
    "override,message",
    [
        (
            "algorithm.focal.gama=1.0",
            r"^unknown key algorithm.focal.gama \(did you mean 'gamma'\?\); valid keys under algorithm.focal: \[",
        ),
        ("algorithm.cue.aplha=1.0", r"^unknown key algorithm.cue.aplha \(did you mean 'alpha'\?\)"),
        ("algorithm.cue.judge.modle=x", r"^unknown key algorithm.cue.judge.modle \(did you mean 'model'\?\)"),
        ("+algorithm.focal.gama=1.0", r"^unknown key\(s\) algorithm.focal.gama \(did you mean 'gamma'\?\)"),
        (
            "trainer.total_epoch=3",
            r"^unknown key trainer.total_epoch \(did you mean 'trainer.total_epochs'\?\): verl's config has no "
            r"trainer.total_epoch; write trainer.total_epochs=3$",  # no "+KEY" advice: nothing would read it
        ),
    ],
)
def test_unknown_key_gets_did_you_mean_not_hydras_plus_advice(composed_config, override, message):
    """Struct mode rejects the key; under our namespaces the advice is the right name, never "use +"."""
    from verl_focal.config.errors import ConfigError
    from verl_focal.integration.startup.validate import validate_all

    with pytest.raises(ConfigError, match=message) as info:
        validate_all(composed_config([override]))  # "+key" composes, and our schema refuses it
    assert "use +" not in str(info.value) and "\n" not in str(info.value)


def _compose_stock(overrides):
    GlobalHydra.instance().clear()
    with initialize_config_module(config_module="verl.trainer.config", version_base=None):
        return compose(config_name="ppo_trainer", overrides=overrides)


def test_stock_ppo_trainer_needs_plus_for_our_keys():
    from hydra.errors import ConfigCompositionException

    with pytest.raises(ConfigCompositionException, match="focal"):
        _compose_stock(["algorithm.focal.gamma=0.5"])
    cfg = _compose_stock(["algorithm.adv_estimator=f_grpo", "+algorithm.focal.gamma=0.25"])
    sections = validate_algorithm_config(cfg.algorithm)
    assert sections["focal"].gamma == 0.25
    assert sections["focal"].base == "grpo"  # missing keys take schema defaults


BAD = [
    (
        {"focal": {"gamma": -0.5}},
        r"algorithm.focal.gamma must be >= 0.0, got -0.5; "
        r"set algorithm.focal.gamma=0.5 \(default\) or another value >= 0$",
    ),
    ({"focal": {"gamma": float("nan")}}, r"algorithm.focal.gamma must be finite, got nan"),
    ({"focal": {"gamma": "high"}}, r"algorithm.focal.gamma must be a number, got 'high'"),
    (
        {"focal": {"base": "ppo"}},
        r"algorithm.focal.base='ppo' is not one of \['grpo', 'drgrpo', 'rloo'\]; set algorithm.focal.base=grpo",
    ),
    ({"focal": {"base": "drgrpoo"}}, r"algorithm.focal.base='drgrpoo' is not one of .* \(did you mean 'drgrpo'\?\)"),
    ({"focal": {"correctness": "yes"}}, r"algorithm.focal.correctness='yes' is not one of"),
    ({"focal": {"correct_threshold": float("inf")}}, r"algorithm.focal.correct_threshold must be finite"),
    (
        {"focal": {"gama": 1}},
        r"unknown key\(s\) algorithm.focal.gama \(did you mean 'gamma'\?\); valid keys under algorithm.focal:",
    ),
    ({"focal": 3}, r"algorithm.focal must be a mapping"),
    (
        {"cue": {"alpha": -2.0}},
        r"algorithm.cue.alpha must be >= 0.0, got -2.0; set algorithm.cue.alpha=0.8 \(default\) or another value >= 0$",
    ),
    ({"cue": {"epsilon": 1.5}}, r"algorithm.cue.epsilon must be <= 1.0"),
    ({"cue": {"rho": 0}}, r"algorithm.cue.rho must be > 0.0"),
    ({"cue": {"epsilon": 0}}, r"algorithm.cue.epsilon must be > 0.0, got 0.0; set algorithm.cue.epsilon=0.5"),
    ({"cue": {"floor": 0}}, r"algorithm.cue.floor must be > 0.0, got 0.0; set algorithm.cue.floor=1.05"),
    ({"cue": {"clip": [2.0, 3.0]}}, r"algorithm.cue.clip=\[2.0, 3.0\]: need 0 <= min <= 1 <= max"),
    ({"cue": {"clip": [0.3]}}, r"algorithm.cue.clip must be null or a pair \[min, max\] of numbers, got \[0.3\]; set"),
    ({"cue": {"floor_mode": "min"}}, r"algorithm.cue.floor_mode='min' is not one of \['none', 'additive', 'max'\]"),
    ({"cue": {"floor_mode": "additve"}}, r"\(did you mean 'additive'\?\)"),
    ({"cue": {"renormalize": "yes"}}, r"algorithm.cue.renormalize must be true or false"),
    ({"cue": {"seed": 1.5}}, r"algorithm.cue.seed must be an integer"),
    ({"cue": {"uniform_boost": 0}}, r"algorithm.cue.uniform_boost must be > 0.0"),
    ({"cue": {"judge": {"timeout_s": 0}}}, r"algorithm.cue.judge.timeout_s must be > 0.0"),
    ({"cue": {"judge": {"max_concurrency": 0}}}, r"algorithm.cue.judge.max_concurrency must be >= 1"),
    ({"cue": {"judge": {"api_key": "sk-123"}}}, r"unknown key\(s\) algorithm.cue.judge.api_key"),
]


@pytest.mark.parametrize("algo,message", BAD, ids=[m[:40] for _, m in BAD])
def test_bad_config_messages(algo, message):
    with pytest.raises(ConfigError, match=message):
        validate_algorithm_config(OmegaConf.create(algo) if not isinstance(algo.get("focal"), int) else algo)


def test_validate_all_runs_verls_own_checks(composed_config):
    from verl_focal.integration.startup.validate import validate_all

    cfg = composed_config(["algorithm.adv_estimator=no_such_estimator"])
    with pytest.raises(ValueError, match="no_such_estimator"):
        validate_all(cfg)
    cfg = composed_config(["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4"])
    with pytest.raises(Exception, match="micro_batch"):
        validate_all(cfg)  # verl's own: rollout/ref micro batch sizes still unset


def test_config_reference_table_lists_every_schema_field():
    table = markdown_table()
    flat = []

    def walk(d, prefix):
        for k, v in d.items():
            if isinstance(v, dict) and k != "partitioner_kwargs":
                walk(v, f"{prefix}.{k}")
            else:
                flat.append(f"{prefix}.{k}")

    walk(defaults_as_dict(), "algorithm")
    for key in flat:
        assert f"`{key}`" in table
    assert len(table.splitlines()) == len(flat) + 2


def test_docs_config_table_is_current():
    import pathlib

    page = (pathlib.Path(__file__).parents[2] / "docs" / "config.md").read_text()
    assert markdown_table() in page, "regenerate the table in docs/config.md: python -m verl_focal.config.schema"


def test_start_up_validation_catches_a_judge_without_its_key_variable(composed_config, monkeypatch):
    from verl_focal.integration.startup.validate import validate_all

    monkeypatch.delenv("VERL_FOCAL_TEST_NO_SUCH_KEY", raising=False)
    cfg = composed_config(
        [
            "algorithm.adv_estimator=cue_grpo",
            "algorithm.cue.partitioner=judge",
            "algorithm.cue.judge.model=judge-model",
            "algorithm.cue.judge.api_key_env=VERL_FOCAL_TEST_NO_SUCH_KEY",
        ]
    )
    with pytest.raises(ValueError, match="algorithm.cue.judge: .*VERL_FOCAL_TEST_NO_SUCH_KEY"):
        validate_all(cfg)
