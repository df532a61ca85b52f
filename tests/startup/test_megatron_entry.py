"""Megatron through our entry point (gpu-readiness finding 8, T10).

Before: ``--dry-run actor_rollout_ref.actor.strategy=megatron`` ended in a raw ``ConfigAttributeError`` traceback
and ``--config-name=ppo_megatron_trainer`` in "bad override".  Now both get one line naming the command that runs
Megatron with our hooks, and that command's config composes from verl's own Megatron YAML and passes the
start-up checks our hooked trainer runs in its constructor (a hint is a promise).
"""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

from verl_focal.integration.startup.compose import MEGATRON_COMMAND


@pytest.mark.parametrize("arg", ["actor_rollout_ref.actor.strategy=megatron", "critic.strategy=megatron",
                                 "--config-name=ppo_megatron_trainer"])
def test_megatron_is_refused_in_one_line_with_the_command(arg):
    r = subprocess.run([sys.executable, "-m", "verl_focal.main_ppo", "--dry-run", arg], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    errors = [ln for ln in r.stderr.splitlines() if ": error: " in ln]
    assert len(errors) == 1 and errors[0].endswith(MEGATRON_COMMAND) and f"error: {arg}: " in errors[0]


def test_the_megatron_command_composes_and_passes_start_up():
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from verl_focal.integration.startup.compose import verl_config_searchpath
    from verl_focal.integration.startup.validate import validate_start

    words = shlex.split(MEGATRON_COMMAND)
    assert words[:3] == ["python", "-m", "verl.trainer.main_ppo"] and words[-1] == "..."
    name = words[words.index("--config-name") + 1]
    overrides = [w for w in words[words.index("--config-name") + 2:-1]]
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=verl_config_searchpath().removeprefix("file://"), version_base=None):
            cfg = compose(config_name=name, overrides=overrides)
    finally:
        GlobalHydra.instance().clear()
    assert cfg.actor_rollout_ref.actor.strategy == "megatron"
    assert cfg.trainer.v1.trainer_mode == "focal_sync"
    sections = validate_start(cfg)
    assert sections["focal"].gamma == 1.0
