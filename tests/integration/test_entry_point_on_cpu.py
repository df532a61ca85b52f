"""Plugin loading as verl does it: fresh processes, VERL_USE_EXTERNAL_MODULES, Ray CPU actors."""

import os
import subprocess
import sys
import textwrap

PROBE = textwrap.dedent(
    """
    import sys
    import verl
    from verl.trainer.ppo.core_algos import get_adv_estimator_fn as g
    fn = g('f_grpo')
    print('MODULE', fn.__module__)
    print('EXPLICIT', 'verl_focal' in sys.modules and 'verl_focal.plugin' in sys.modules)
    """
)


def _run(code, **env):
    e = dict(os.environ)
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=600)


def test_fresh_process_import_verl_registers_f_grpo_and_double_import_is_idempotent():
    # The acceptance line, plus the module imported a second time through
    # VERL_USE_EXTERNAL_MODULES (verl imports it before the entry points).
    proc = _run(PROBE, VERL_USE_EXTERNAL_MODULES="verl_focal.plugin")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "MODULE verl_focal.estimators.focal" in proc.stdout
    # entry points disabled: nothing registers, and verl says so by name
    proc = _run(PROBE, VERL_USE_EXTERNAL_PLUGINS="none")
    assert proc.returncode != 0 and "Unknown advantage estimator" in proc.stderr


def test_reimport_by_file_path_keeps_a_single_registration(caplog):
    import importlib.util

    import verl  # noqa: F401
    from verl.trainer.ppo import core_algos

    import verl_focal.estimators.focal as mod
    from verl_focal.integration.registration import collision_problem, register_all, register_spec

    spec = importlib.util.spec_from_file_location("estimators_focal_copy", mod.__file__)
    copy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(copy)
    # Same function body under another module name is a *different* estimator: left alone, and
    # said at WARNING level (verl swallows a plugin's exceptions at DEBUG).
    with caplog.at_level("WARNING", logger="verl_focal.integration.registration"):
        register_spec(copy.SPEC)
    assert (
        "'f_grpo' is already registered to verl_focal.estimators.focal.compute_f_grpo_advantage"
        in caplog.text
    )
    assert "estimators_focal_copy.compute_f_grpo_advantage is NOT registered" in caplog.text
    assert core_algos.get_adv_estimator_fn("f_grpo") is mod.compute_f_grpo_advantage
    assert core_algos.get_adv_estimator_fn("verl_focal.f_grpo") is mod.compute_f_grpo_advantage
    assert collision_problem("f_grpo") is None  # ours still holds the name
    # Re-executing the module itself (same module name) re-registers silently.
    importlib.reload(mod)
    caplog.clear()
    with caplog.at_level("WARNING", logger="verl_focal.integration.registration"):
        register_all()
    assert core_algos.get_adv_estimator_fn("f_grpo") is mod.compute_f_grpo_advantage and not caplog.text


def test_registered_inside_a_ray_cpu_actor():
    import ray

    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:

        @ray.remote(num_cpus=0)
        def probe():
            import sys

            import verl  # noqa: F401
            from verl.trainer.ppo.core_algos import get_adv_estimator_fn
            from verl.trainer.ppo.v1 import get_trainer_cls

            return (
                get_adv_estimator_fn("f_grpo").__module__,
                get_trainer_cls("focal_sync").__name__,
                "verl_focal.plugin" in sys.modules,
            )

        module, trainer, loaded = ray.get(probe.remote(), timeout=600)
    finally:
        if started:
            ray.shutdown()
    assert module == "verl_focal.estimators.focal"
    assert trainer == "FocalPPOTrainerSync"
    assert loaded


def test_check_command_reports_bad_config_and_passes_good_one():
    from verl_focal.cli import main

    base = [
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2",
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2",
    ]
    assert main(["check", "--skip-probe", *base, "algorithm.focal.gamma=1.0"]) == 0
    assert main(["check", "--skip-probe", *base, "algorithm.focal.gamma=-1"]) == 2
    # --trainer: the separated trainers' own config (hybrid_engine=false composed in) passes; a setting
    # their constructors would assert against after start-up does not
    for trainer in ("one_step_off", "fully_async"):
        assert main(["check", "--skip-probe", "--trainer", trainer, *base, "algorithm.focal.gamma=1.0"]) == 0
        assert main(["check", "--skip-probe", "--trainer", trainer, *base, "actor_rollout_ref.hybrid_engine=true"]) == 2


def test_check_command_probe_detects_missing_plugin(capsys):
    from verl_focal.check import _plugin_problems

    probe = {"ok": True, "plugin_loaded": False, "estimators": [], "trainer_modes": [], "expected": ["f_grpo"]}
    problems, warned = _plugin_problems(probe, {})
    assert warned == []
    assert any("did not load verl_focal.plugin" in p for p in problems)
    assert any("estimator 'f_grpo' is not registered" in p for p in problems)
    assert any("focal_sync" in p for p in problems)
    # a policy that leaves us out on purpose: our entry point is hooked all the same, so a warning, not FAILED
    for policy in ("none", "other_plugin"):
        problems, warned = _plugin_problems(probe, {"VERL_USE_EXTERNAL_PLUGINS": policy})
        assert problems == [] and len(warned) == 1, (policy, problems)
        assert f"VERL_USE_EXTERNAL_PLUGINS={policy} leaves verl_focal.plugin out" in warned[0]
        assert "VERL_USE_EXTERNAL_MODULES=verl_focal.plugin" in warned[0]
    assert _plugin_problems(probe, {"VERL_USE_EXTERNAL_PLUGINS": "verl_focal,x"})[0] == problems_of_auto(probe)


def problems_of_auto(probe):
    from verl_focal.check import _plugin_problems

    return _plugin_problems(probe, {"VERL_USE_EXTERNAL_PLUGINS": "auto"})[0]
