"""A trainer process where verl's entry point did not load the plugin (gpu-readiness finding 2, T1).

``VERL_USE_EXTERNAL_PLUGINS=none`` in a ``ray start`` environment, a list without ``verl_focal``, or a
``runtime_env`` of its own: verl then skips our ``verl.plugins`` entry point in the TaskRunner's process.
Before the fix the v1 TaskRunner failed with verl's misleading ``Unknown trainer 'focal_sync'``, the legacy
one trained unhooked (no ``acc``, p̂ from the shaped reward), and ``validate_start`` passed in both.

Each case runs in a fresh interpreter with the policy ``none``, as a TaskRunner started from such an
environment would: our runner module (what unpickling our TaskRunner class imports first) must leave the
hooks in effect, and a process that never arranged them must be refused in one line, before any model loads.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

COMPOSE = "from verl_focal.integration.startup.compose import compose_config\n"


def _run(body: str) -> subprocess.CompletedProcess:
    e = {**os.environ, "VERL_USE_EXTERNAL_PLUGINS": "none"}
    e.pop("VERL_USE_EXTERNAL_MODULES", None)
    return subprocess.run([sys.executable, "-c", COMPOSE + textwrap.dedent(body)], capture_output=True, text=True,
                          env=e, timeout=600)


@pytest.mark.parametrize("use_v1", [True, False])
def test_our_taskrunner_is_hooked_without_the_entry_point(use_v1):
    proc = _run(f"""
        import sys
        import verl
        assert "verl_focal.plugin" not in sys.modules  # the entry point really was skipped
        from verl_focal.integration import runner
        from verl_focal.integration.compat import install
        from verl_focal.integration.hooks.dataproto_hook import install_legacy_hook
        from verl_focal.integration.hooks.post_import import is_hooked
        cfg = compose_config(["algorithm.adv_estimator=f_grpo", "trainer.use_v1={str(use_v1).lower()}"])
        if {use_v1}:
            runner.check_here(cfg)
            from verl.trainer.ppo.v1 import trainer_base
            print("MODES", sorted(m for m in trainer_base.TRAINER_REGISTRY if m.startswith("focal_")))
        else:
            install("legacy", lambda: install_legacy_hook(lambda: None))
            runner.check_here(cfg)
        from verl.trainer.ppo import ray_trainer
        print("HOOKED", is_hooked(ray_trainer.compute_advantage), is_hooked(ray_trainer.compute_data_metrics))
        """)
    assert proc.returncode == 0, proc.stderr[-3000:]
    if use_v1:
        assert "MODES ['focal_colocate_async', 'focal_separate_async', 'focal_sync']" in proc.stdout
        assert "HOOKED True False" in proc.stdout
    else:
        assert "HOOKED True True" in proc.stdout


def test_a_process_without_the_hooks_is_refused_in_one_line():
    # No runner import: nothing arranged the hooks, as in verl's own TaskRunner under the policy `none`.
    proc = _run("""
        import verl
        from verl_focal.config.errors import ConfigError
        from verl_focal.integration.hooks.arrange import require_live
        cfg = compose_config(["algorithm.adv_estimator=f_grpo"])
        for features in (["advantage", "v1"], ["advantage", "legacy"], ["separated"]):
            try:
                require_live(features, "algorithm.adv_estimator=f_grpo")
            except ConfigError as e:
                print("REFUSED", features[-1], str(e).count(chr(10)), e)
        """)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [x for x in proc.stdout.splitlines() if x.startswith("REFUSED")]
    assert [x.split()[1] for x in lines] == ["v1", "legacy", "separated"], proc.stdout
    for x in lines:
        assert x.split()[2] == "0"  # one line
        assert "VERL_USE_EXTERNAL_PLUGINS='none'" in x and "plugin arranged: False" in x
        assert "VERL_USE_EXTERNAL_MODULES=verl_focal.plugin" in x
    # the first feature checked is verl's compute_advantage hook
    assert "the hook around verl's compute_advantage" in lines[0]


@pytest.mark.parametrize(("user", "environ", "expected"), [
    (None, None, "verl_focal.plugin"),
    ("my_pkg.plugin", None, "my_pkg.plugin,verl_focal.plugin"),
    (None, "a.b, c", "a.b,c,verl_focal.plugin"),
    ("verl_focal.plugin,x", "ignored", "verl_focal.plugin,x"),
])
def test_forward_plugin_adds_our_module_once(monkeypatch, user, environ, expected):
    from verl_focal.integration.hooks.runner import forward_plugin
    from verl_focal.integration.startup.compose import compose_config

    if environ is None:
        monkeypatch.delenv("VERL_USE_EXTERNAL_MODULES", raising=False)
    else:
        monkeypatch.setenv("VERL_USE_EXTERNAL_MODULES", environ)
    overrides = ["algorithm.adv_estimator=f_grpo"]
    if user is not None:
        overrides.append(f"+ray_kwargs.ray_init.runtime_env.env_vars.VERL_USE_EXTERNAL_MODULES='{user}'")
    cfg = compose_config(overrides)
    assert forward_plugin(cfg) == expected
    assert forward_plugin(cfg) == expected  # idempotent
    assert cfg.ray_kwargs.ray_init.runtime_env.env_vars.VERL_USE_EXTERNAL_MODULES == expected
