"""``verl-focal check`` with the judge partitioner, against the loopback scripted server."""

from __future__ import annotations

from verl_focal.cli import main

BASE = [
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2",
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2",
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2",
    "algorithm.adv_estimator=cue_grpo",
    "algorithm.cue.partitioner=judge",
]


def test_check_reports_judge_problems(judge_server, capsys):
    ok = [*BASE, f"algorithm.cue.judge.base_url={judge_server.base_url}", "algorithm.cue.judge.model=judge-model"]
    assert main(["check", "--skip-probe", *ok]) == 0

    bad_model = [*BASE, f"algorithm.cue.judge.base_url={judge_server.base_url}", "algorithm.cue.judge.model=gpt-9"]
    assert main(["check", "--skip-probe", *bad_model]) == 2
    assert "algorithm.cue.judge.model='gpt-9' is not served" in capsys.readouterr().err

    # (unreachable URL, missing key variable, 401, 404: check_judge's own tests, test_judge_parts_on_cpu.py)
