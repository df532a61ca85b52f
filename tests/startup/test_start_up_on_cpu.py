"""Start-up refusals that need verl: name collisions, the hooked trainer's own start, and the
installed stack against verl's pins (read from verl's installed metadata)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from verl_focal.config.errors import ConfigError

OK = [
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2",
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2",
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2",
]


def _fake_f_grpo(*args, **kwargs):  # "another package's" estimator
    raise AssertionError("never called")


def test_a_foreign_estimator_under_our_name_is_refused_at_start_up(composed_config):
    from verl.trainer.ppo import core_algos

    from verl_focal.estimators.focal import compute_f_grpo_advantage
    from verl_focal.integration import registration
    from verl_focal.integration.startup.validate import validate_all

    registration.register_all()
    cfg = composed_config(["algorithm.adv_estimator=f_grpo"])
    ours = core_algos.ADV_ESTIMATOR_REGISTRY["f_grpo"]
    assert ours is compute_f_grpo_advantage
    core_algos.ADV_ESTIMATOR_REGISTRY["f_grpo"] = _fake_f_grpo  # e.g. a later verl ships its own
    try:
        assert registration.get_spec("f_grpo") is None  # the hook leaves theirs alone
        with pytest.raises(ConfigError) as info:
            validate_all(cfg)
        msg = str(info.value)
        assert f"{__name__}._fake_f_grpo" in msg
        assert "verl_focal.estimators.focal.compute_f_grpo_advantage" in msg
        assert "set algorithm.adv_estimator=verl_focal.f_grpo" in msg
        # the way out: the namespaced alias is always ours
        validate_all(composed_config(["algorithm.adv_estimator=verl_focal.f_grpo", *OK]))
        assert registration.get_spec("verl_focal.f_grpo").fn is compute_f_grpo_advantage
    finally:
        core_algos.ADV_ESTIMATOR_REGISTRY["f_grpo"] = ours
    assert registration.collision_problem("f_grpo") is None


COLLISION = textwrap.dedent(
    """
    import json, logging, sys
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    import verl  # entry points disabled in this process: verl_focal.plugin is not loaded yet
    from verl.trainer.ppo import core_algos

    @core_algos.register_adv_est("f_grpo")
    def upstream_f_grpo(*a, **k):
        pass

    import verl_focal.plugin  # must not raise: verl would swallow it at DEBUG level
    from verl_focal.cli import main
    ok = ["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2",
          "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2",
          "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2"]
    rc_plain = main(["check", "--skip-probe", *ok, "algorithm.adv_estimator=f_grpo"])
    rc_alias = main(["check", "--skip-probe", *ok, "algorithm.adv_estimator=verl_focal.f_grpo"])
    print("RESULT " + json.dumps({"plain": rc_plain, "alias": rc_alias,
                                  "held": core_algos.ADV_ESTIMATOR_REGISTRY["f_grpo"].__qualname__}))
    """
)


def test_upstream_f_grpo_first_warns_at_import_and_check_refuses():
    env = dict(os.environ, VERL_USE_EXTERNAL_PLUGINS="none")
    proc = subprocess.run([sys.executable, "-c", COLLISION], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.split("RESULT ", 1)[1])
    assert res == {"plain": 2, "alias": 0, "held": "upstream_f_grpo"}
    assert "WARNING" in proc.stderr and "'f_grpo' is already registered to __main__.upstream_f_grpo" in proc.stderr
    assert "algorithm.adv_estimator='f_grpo' is registered in verl to __main__.upstream_f_grpo" in proc.stderr


def test_hooked_trainer_start_refuses_a_bad_config(composed_config):
    """Stock verl main_ppo with trainer_mode=focal_sync builds our hooked class: it checks first."""
    from verl_focal.integration.hooks.trainer import FocalHookMixin

    class FakeBase:  # stands in for verl's PPOTrainer, whose __init__ starts workers
        def __init__(self, config, *args, **kwargs):
            self.started = True

    class Hooked(FocalHookMixin, FakeBase):
        pass

    bad = composed_config(["algorithm.adv_estimator=cue_grpo", "algorithm.cue.partitioner=nosuchpkg.mod:Foo"])
    with pytest.raises(ConfigError, match="no module named 'nosuchpkg'"):
        Hooked(bad)
    assert Hooked(composed_config(["algorithm.adv_estimator=cue_grpo"])).started


def test_verl_pins_are_read_from_verls_installed_metadata():
    """Fails the day verl's pins move: then update the README's GPU install note and our extras."""
    import importlib.metadata as md

    from verl_focal.integration.startup.versions import verl_pins

    assert md.version("verl") == "0.9.1"
    assert {n: str(r.specifier) for n, r in verl_pins("vllm").items()} == {
        "vllm": "==0.24.0", "torch": "==2.11.0", "transformers": "==5.9.0"}
    assert {n: str(r.specifier) for n, r in verl_pins("sglang").items()} == {
        "sglang": "==0.5.12", "torch": "==2.11.0", "transformers": "==5.9.0"}
    assert "transformers" in verl_pins(None)


def test_our_extras_delegate_to_verls():
    import pathlib

    import tomllib

    meta = tomllib.loads((pathlib.Path(__file__).parents[2] / "pyproject.toml").read_text())
    extras = meta["project"]["optional-dependencies"]
    assert extras["vllm"] == ["verl[vllm]>=0.9.0,<0.10"] and extras["sglang"] == ["verl[sglang]>=0.9.0,<0.10"]


def test_a_version_mismatch_is_one_line_naming_both_versions(monkeypatch):
    from verl_focal.integration import versions

    real = versions._installed
    fake = {"vllm": "0.31.0", "torch": "2.13.0+cpu", "transformers": "5.9.0"}
    monkeypatch.setattr(
        versions, "_installed", lambda n: fake.get(n) if n in fake else (None if n == "sglang" else real(n))
    )
    lines = versions.version_mismatches()
    assert len(lines) == 2
    assert any("vllm 0.31.0 is installed but verl[vllm]==0.9.1 was tested with vllm==0.24.0" in ln for ln in lines)
    assert any("torch 2.13.0+cpu" in ln and "torch==2.11.0" in ln for ln in lines)
    assert all("\n" not in ln for ln in lines)


SCORER = [
    "reward.custom_reward_function.path=pkg://verl_focal.reward",
    "reward.custom_reward_function.name=compute_score",
]


@pytest.mark.parametrize(
    "override,needle",
    [
        ("+reward.custom_reward_function.reward_kwargs.rel_tl=0.001",
         "reward_kwargs.rel_tl is not read by verl_focal.reward.compute_score (did you mean 'rel_tol'?)"),
        ("+reward.custom_reward_function.reward_kwargs.rel_tol=0.9", "rel_tol=0.9 must be a number in [0, 0.5)"),
        ("+reward.custom_reward_function.reward_kwargs.timeout_s=0", "reward_kwargs.timeout_s=0 must be > 0"),
        ("+reward.custom_reward_function.reward_kwargs.cue_set=math_v9", "reward_kwargs.cue_set='math_v9'"),
    ],
)
def test_our_scorers_reward_kwargs_are_checked_at_start_up(composed_config, override, needle):
    """verl hands reward kwargs to the scorer only in the reward workers: a typo or a bad value
    must be refused by validate_all (check, --dry-run, both entry points), not at step 1."""
    from verl_focal.integration.startup.validate import validate_all

    with pytest.raises(ConfigError) as info:
        validate_all(composed_config(["algorithm.adv_estimator=f_grpo", *OK, *SCORER, override]))
    assert needle in str(info.value)


def test_good_reward_kwargs_and_other_scorers_pass(composed_config, tmp_path):
    from verl_focal.integration.startup.validate import validate_all

    good = ["+reward.custom_reward_function.reward_kwargs.rel_tol=0.001",
            "+reward.custom_reward_function.reward_kwargs.cue_set=math_v1"]
    validate_all(composed_config(["algorithm.adv_estimator=f_grpo", *OK, *SCORER, *good]))
    # another package's scorer has its own kwargs: not ours to judge
    scorer = tmp_path / "somebody_reward.py"
    scorer.write_text("def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):\n"
                      "    return 0.0\n")
    other = [f"reward.custom_reward_function.path={scorer}", "reward.custom_reward_function.name=compute_score",
             "+reward.custom_reward_function.reward_kwargs.anything=1"]
    validate_all(composed_config(["algorithm.adv_estimator=f_grpo", *OK, *other]))


def test_a_wrapper_of_our_estimator_still_counts_as_ours():
    """A profiler that wraps a registered estimator with functools.wraps (as bench/advantage_step.py
    does) must not look like another package's estimator: the hook would silently stop supplying rows."""
    import functools

    from verl.trainer.ppo import core_algos

    from verl_focal.integration import registration

    registration.register_all()
    ours = core_algos.ADV_ESTIMATOR_REGISTRY["f_grpo"]

    @functools.wraps(ours)
    def timed(*a, **k):
        return ours(*a, **k)

    core_algos.ADV_ESTIMATOR_REGISTRY["f_grpo"] = timed
    try:
        assert registration.get_spec("f_grpo") is not None and registration.collision_problem("f_grpo") is None
        core_algos.ADV_ESTIMATOR_REGISTRY["f_grpo"] = _fake_f_grpo
        assert registration.get_spec("f_grpo") is None and registration.collision_problem("f_grpo") is not None
    finally:
        core_algos.ADV_ESTIMATOR_REGISTRY["f_grpo"] = ours
