"""Assertions shared by the e2e tests (metrics as verl's file logger wrote them, one dict per step),
and the reader of a run's outputs."""

from __future__ import annotations

import json
import math
from pathlib import Path

from launch import run_trainer


def _records(files: list[Path]) -> list[dict]:
    return [json.loads(line) for f in files for line in f.read_text().splitlines() if line.strip()]


def run_and_read(out: Path, module: str, overrides: list[str], extra_env: dict[str, str] | None = None,
                 timeout: float = 900, device: str = "cpu") -> dict:
    """Run ``module`` (:func:`launch.run_trainer` on ``device``, ``timeout`` seconds at most) with outputs under
    ``out``; assert it exited 0.

    Returns ``log`` (the whole output), ``lines`` (verl's file logger, ``{"step", "data"}`` per line),
    ``stats`` (the ``hf_cpu`` servers' weight-update records), ``syncs`` (one list of weight-sync records
    per vLLM worker process, ``verl_cpu_backend/vllm_cpu.py``), ``seconds`` and ``leftovers`` (the command lines
    of the processes the run left running, which the launcher stopped).
    """
    out.mkdir(parents=True, exist_ok=True)
    rc, seconds = run_trainer(module, overrides, out, timeout=timeout, extra_env=extra_env, device=device)
    log = (out / "train.log").read_text(errors="replace")
    assert rc == 0, f"{module} exited {rc} after {seconds:.0f}s; log tail:\n{log[-6000:]}"
    metrics = out / "metrics.jsonl"
    lines = [json.loads(line) for line in metrics.read_text().splitlines() if line.strip()]
    stats = _records(sorted((out / "rollout_stats").glob("server_*.jsonl")))
    syncs = [_records([f]) for f in sorted((out / "rollout_stats").glob("vllm_worker_*.jsonl"))]
    leftovers = (out / "leftovers.txt").read_text().splitlines()
    if leftovers:
        print(f"stopped {len(leftovers)} process(es) the run left running: " + "; ".join(c[:80] for c in leftovers))
    return {"log": log, "lines": lines, "stats": stats, "syncs": syncs, "seconds": seconds, "leftovers": leftovers}


#: rollouts per prompt of the cue run with the package's scorer (test_main_ppo_cpu.test_cue_grpo_main_ppo): the
#: tiny model is right 6-8 % of the time there, and with 48 a run without a partitioned group is about one in
#: 2.5 million (``python tests/e2e/partition_odds.py``; checked in test_e2e_fixtures.py)
CUE_SCORER_N = 48

# f_grpo (γ = 0.5) + DAPO's group filter on `acc` + CISPO's loss: the hf_cpu and the vLLM run
FOCAL_DAPO_CISPO = [
    "algorithm.adv_estimator=f_grpo",
    "algorithm.focal.gamma=0.5",
    "algorithm.filter_groups.enable=true",
    "algorithm.filter_groups.metric=acc",
    "actor_rollout_ref.actor.policy_loss.loss_mode=cispo",
    "actor_rollout_ref.actor.clip_ratio_low=10",
    "actor_rollout_ref.actor.clip_ratio_high=0.28",
]


def assert_focal_dapo(steps: list[dict], n: int, batch: int) -> None:
    """``f_grpo`` (γ = 0.5) with DAPO's ``filter_groups`` on ``acc``: ``acc`` came from the reward
    extras for every row, the filter kept only mixed groups, and the focal diagnostics lie in range."""
    for m in steps:
        assert m["focal/groups"] == batch
        assert m["focal/acc_from_extra_frac"] == 1.0  # acc came from the reward extras
        # DAPO filtering kept only groups with both right and wrong answers.
        assert m["focal/frac_active"] == 1.0
        assert m["focal/frac_all_correct"] == 0.0 and m["focal/frac_all_wrong"] == 0.0
        p = m["focal/p_hat_active_mean"]
        assert 0.0 < p < 1.0
        # p̂ is a multiple of 1/n in a group of n: the weights lie in [(1/n)^γ, (1-1/n)^γ].
        w = m["focal/weight_mean_active"]
        assert (1 / n) ** 0.5 - 1e-9 <= w <= (1 - 1 / n) ** 0.5 + 1e-9
        for key in ("focal/p_hat_mean", "focal/p_hat_p10", "focal/p_hat_p50", "focal/p_hat_p90"):
            assert 0.0 <= m[key] <= 1.0 and math.isfinite(m[key]), (key, m[key])
        # The advantage scale is bounded by the focal weight times GRPO's max |A| = sqrt(n-1).
        bound = (1 - 1 / n) ** 0.5 * math.sqrt(n - 1) + 1e-4
        assert abs(m["critic/advantages/max"]) <= bound and abs(m["critic/advantages/min"]) <= bound


def _assert_cue_weights(m: dict) -> None:
    cue = {k: v for k, v in m.items() if k.startswith("cue/")}
    assert all(math.isfinite(v) for v in cue.values()), cue
    # The hook's prepare step partitioned from `acc`; the estimator used it unchanged.
    assert m["cue/groups_repartitioned"] == 0.0, cue
    if m["cue/groups_partitioned"] > 0:
        assert m["cue/clusters_per_group"] >= 1.0
        assert 0.0 <= m["cue/frac_groups_multi_cluster"] <= 1.0
        # algorithm.cue.clip = [0.3, 3.0] (packaged default)
        assert 0.3 - 1e-9 <= m["cue/w_min"] <= m["cue/w_mean"] <= m["cue/w_max"] <= 3.0 + 1e-9


def assert_cue(steps: list[dict], source: str, rows: int = 0) -> None:
    """``cue_grpo``: every partitioned group was clustered from ``source`` and at least one group was
    partitioned over the run; the hook's prefetch was joined, the estimator used the hook's partition
    unchanged, the diagnostics are finite and in range.

    ``source="signatures"`` (reward kwarg ``cue_set``): from the reward's ``cue_sig``, and no response
    was decoded.  ``source="text"`` (``algorithm.cue.source=text``): from the texts the hook decoded from
    the batch's token ids; a step that partitioned g groups decoded at least 2g responses (each such
    group has >= 2 correct ones) and at most ``rows``.
    """
    assert source in ("signatures", "text"), source
    used, other = ("cue/groups_from_signatures", "cue/groups_from_text")[:: 1 if source == "signatures" else -1]
    partitioned = 0.0
    for m in steps:
        _assert_cue_weights(m)
        g = m["cue/groups_partitioned"]
        partitioned += g
        assert m[used] == g and m[other] == 0.0, m
        assert m["verl_focal/prefetched"] == 1.0, m
        if source == "signatures":
            assert m["verl_focal/decoded_rows"] == 0.0, m
        elif g > 0:
            assert 2 * g <= m["verl_focal/decoded_rows"] <= rows, m
    assert partitioned >= 1, "no group with >= 2 correct answers in two steps"


def assert_scorer_in_reward_loop(run: dict, out: Path) -> None:
    """``reward.custom_reward_function.path=pkg://verl_focal.reward`` in verl's reward loop: every training row's
    ``acc`` reached the hook from the reward extras; every row of the validation dump (``out/val``) carries the
    scorer's keys with a binary ``acc`` and ``verify_timeout == 0`` (no call timed out, queueing included); and no
    process logged a pool warning (a worker killed and replaced, or a broken pool)."""
    for s in run["steps"]:
        assert s["data"]["verl_focal/acc_rows_frac"] == 1.0, s["data"]
    dumps = sorted((out / "val").glob("*.jsonl"))
    assert dumps, f"no validation dump under {out / 'val'}"
    rows = [json.loads(line) for f in dumps for line in f.read_text().splitlines() if line.strip()]
    assert len(rows) == 8, len(rows)  # tiny_assets' val set: 8 prompts, one sample each
    assert all(r["verify_timeout"] == 0.0 and r["acc"] in (0.0, 1.0) and r["score"] == r["acc"] for r in rows), rows
    assert "verl_focal.reward: a job ran past" not in run["log"]
    assert "verl_focal.reward: the worker pool broke" not in run["log"]


# maxrl + DAPO's group filter on `acc` + CISPO's loss (the settings of FOCAL_DAPO_CISPO)
MAXRL_DAPO_CISPO = ["algorithm.adv_estimator=maxrl", *FOCAL_DAPO_CISPO[2:]]


def assert_maxrl_dapo(steps: list[dict], n: int, batch: int) -> None:
    """``maxrl`` with DAPO's ``filter_groups`` on ``acc``: ``acc`` came from the reward extras for every row,
    the filter kept only mixed groups (no singleton), and the weight over GRPO's population-std advantage,
    √((1 − p̂)/p̂) for p̂ in [1/n, 1 − 1/n], and the advantages (c − p̂)/p̂ in [−1, n − 1] lie in range."""
    for m in steps:
        assert m["verl_focal/acc_rows_frac"] == 1.0, m
        assert m["maxrl/groups"] == batch and m["maxrl/frac_active"] == 1.0 and m["maxrl/singleton_groups"] == 0.0
        w = m["maxrl/weight_mean_active"]
        assert (1 / (n - 1)) ** 0.5 - 1e-4 <= w <= (n - 1) ** 0.5 + 1e-4, m
        assert -1 - 1e-4 <= m["critic/advantages/min"] < 0 < m["critic/advantages/max"] <= n - 1 + 1e-4, m


def assert_ds_grpo(steps: list[dict]) -> None:
    """``ds_grpo``: every row's ``acc`` and old log-prob reached the estimator, every log-prob was finite
    and the mean one below 0 (log-probs of sampled tokens), and no group was cut to one rollout."""
    for m in steps:
        assert m["verl_focal/acc_rows_frac"] == 1.0 and m["verl_focal/old_log_prob_rows_frac"] == 1.0, m
        assert m["ds_grpo/nonfinite_logprob_rows"] == 0.0 and m["ds_grpo/singleton_groups"] == 0.0, m
        assert m["ds_grpo/mean_log_prob"] < 0.0, m


def assert_unlikely(steps: list[dict], beta: float) -> None:
    """``unlikely_grpo``: every row's ``acc`` and old log-prob reached the estimator, every log-prob was
    finite, and each correct rollout's factor ``1 − β(G − rank)/G`` lies in ``[1 − β, 1]``; at least one
    correct rollout was ranked over the run."""
    ranked = 0.0
    for m in steps:
        assert m["verl_focal/acc_rows_frac"] == 1.0 and m["verl_focal/old_log_prob_rows_frac"] == 1.0, m
        assert m["unlikely/nonfinite_logprob_rows"] == 0.0 and m["unlikely/beta"] == beta
        ranked += m["unlikely/correct_rows"]
        if m["unlikely/correct_rows"] > 0:
            assert 1 - beta - 1e-9 <= m["unlikely/factor_min"] <= m["unlikely/factor_mean"] <= 1 + 1e-9, m
    assert ranked >= 1, "no correct rollout to rank"
