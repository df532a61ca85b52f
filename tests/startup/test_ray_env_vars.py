"""A non-string value under ``ray_kwargs.ray_init.runtime_env.env_vars`` is refused at start-up, and the quoting the
refusal suggests passes the same check.

Found while adding the reward-loop e2e run: ``+ray_kwargs.ray_init.runtime_env.env_vars.VERL_FOCAL_REWARD_WORKERS=1``
composes (Hydra parses ``1`` as an int) and then fails inside ``ray.init`` with Ray's
``TypeError: runtime_env['env_vars'] must be of type Dict[str, str]``, after our checks had passed.
"""

from __future__ import annotations

import shlex

import pytest

from verl_focal.config.errors import ConfigError
from verl_focal.integration.startup.ray_env import ENV_VARS_KEY, check_env_vars

BASE = ["algorithm.adv_estimator=f_grpo", "trainer.logger=[console]"]


@pytest.mark.parametrize(("override", "kind"), [("1", "int"), ("0.5", "float"), ("true", "bool")])
def test_a_typed_value_is_refused_with_a_hint_that_passes(composed_config, override, kind):
    cfg = composed_config([*BASE, f"+{ENV_VARS_KEY}.VERL_FOCAL_REWARD_WORKERS={override}"])
    with pytest.raises(ConfigError) as e:
        check_env_vars(cfg)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"{ENV_VARS_KEY}.VERL_FOCAL_REWARD_WORKERS=") and f"is not a string ({kind})" in msg, msg
    # The hint is a shell word: unquote it as the shell would, compose it, and the check passes.
    hint = msg.rsplit("in a shell ", 1)[1]
    (fixed,) = shlex.split(hint)
    cfg = composed_config([*BASE, fixed])
    check_env_vars(cfg)
    assert cfg.ray_kwargs.ray_init.runtime_env.env_vars.VERL_FOCAL_REWARD_WORKERS == override


def test_strings_and_no_env_vars_pass(composed_config):
    check_env_vars(composed_config(BASE))
    check_env_vars(composed_config([*BASE, f"+{ENV_VARS_KEY}.WANDB_MODE=offline"]))


def test_validate_start_runs_it(composed_config):
    from verl_focal.integration.startup.validate import validate_start

    cfg = composed_config([*BASE, f"+{ENV_VARS_KEY}.VERL_FOCAL_REWARD_WORKERS=2"])
    with pytest.raises(ConfigError, match="Ray takes strings only"):
        validate_start(cfg)
