"""Every command x bad inputs: exit code 2, no traceback, and a message that names the thing.

Run in-process (``verl_focal.cli.main(argv)``, stderr captured) so that the table stays fast;
a few cases go through the real entry points in subprocesses at the end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from verl_focal.cli import main

#: overrides that satisfy verl's own micro-batch checks, so `check` reaches our sections
OK = [
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2",
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2",
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2",
]
CUE = [*OK, "algorithm.adv_estimator=cue_grpo"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    (d / "empty").mkdir()
    (d / "runs").mkdir()
    (d / "runs" / "grpo.jsonl").write_text(json.dumps({"uid": "u", "sample": 0, "response": "r", "acc": 1}) + "\n")
    (d / "bad.json").write_text('[{"problem": "1+1", "answer": "2"},\n')
    (d / "bad.jsonl").write_text('{"problem": "q", "solutions": "not a list"}\n')
    (d / "groups.jsonl").write_text(json.dumps({"problem": "q", "solutions": ["a", "b"]}) + "\n")
    (d / "trace.txt").write_text("We use induction on n.\n")
    (d / "model").mkdir()  # a folder without config.json
    (d / "hf").mkdir()  # passes the model-folder check; never loaded: every case below fails before that
    (d / "hf" / "config.json").write_text("{}")
    # eval inputs: each lacks what its sub-command needs, or is not JSONL at all
    gen = {"uid": "u", "sample": 0, "data_source": "d", "response": "answer 2"}
    (d / "nogt.jsonl").write_text(json.dumps(gen) + "\n")  # no ground_truth: cannot be scored
    (d / "unscored.jsonl").write_text(json.dumps(dict(gen, ground_truth="2")) + "\n")  # no acc/score: no report
    (d / "noprompt_gen.jsonl").write_text(json.dumps(dict(gen, ground_truth="2", acc=1)) + "\n")  # no prompt_text
    (d / "nobase.jsonl").write_text(json.dumps({"prompt_text": "p", "response": "r"}) + "\n")  # no base_nll
    (d / "empty.jsonl").write_text("")
    # a data source whose every ground truth is empty; one whose lines carry none, next to a source that has them
    (d / "emptygt.jsonl").write_text("".join(json.dumps(dict(gen, uid=f"e{i}", data_source="verl_focal/aime24",
                                                             ground_truth="")) + "\n" for i in range(3)))
    (d / "gtless_source.jsonl").write_text(json.dumps(dict(gen, ground_truth="2")) + "\n" + "".join(
        json.dumps(dict(gen, uid=f"m{i}", data_source="verl_focal/math500")) + "\n" for i in range(2)))
    (d / "blank.jsonl").write_text("\n\n")
    (d / "notjson.jsonl").write_text("uid,response\nu,r\n")
    (d / "runs_empty").mkdir()
    (d / "runs_empty" / "grpo.jsonl").write_text("")
    (d / "afile").write_text("x")
    # eval frontier: the runs r, c, m are given by --run
    (d / "fam.yaml").write_text("reference: {run: r}\ncontrols: [{family: lr, knob: lr, points: [{value: 1, run: c}]}]"
                                "\nmethods: [{name: m, run: m}]\n")
    (d / "binary.dat").write_bytes(bytes(range(256)) * 4)
    (d / "one_seed_frontier.json").write_text(json.dumps({"claims": [], "resampled": "problems", "seeds": [1]}))
    (d / "nul.txt").write_bytes(b"valid UTF-8, but \x00 binary")
    (d / "dup.jsonl").write_text((json.dumps(dict(gen, ground_truth="2")) + "\n") * 2)  # one sample twice
    (d / "badarr.json").write_text("[3]")  # a JSON array whose element is no trace
    (d / "trunc").mkdir()
    (d / "trunc" / "results.json").write_text('{"config": {"mode": "quick"')  # a demo killed while writing
    ood = [dict(gen, uid=f"i{i}", data_source="verl_focal/ifeval", response="No commas here.",
                ground_truth="Describe the number 3 in one sentence without commas.") for i in range(2)]
    (d / "ifeval_plain.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ood))  # the prompt, not its checks
    mc = [dict(gen, uid=f"g{i}", data_source="verl_focal/gpqa_diamond", response=r"\boxed{A}", ground_truth="Paris")
          for i in range(2)]
    (d / "gpqa_text.jsonl").write_text("".join(json.dumps(r) + "\n" for r in mc))  # the answer text, not a letter
    for name, steps in (("rq", 8), ("rd", 60)):  # two demo runs of different designs
        (d / name).mkdir()
        (d / name / "results.json").write_text(json.dumps({"config": {"mode": name, "rl_steps": steps},
                                                           "claims": [], "seeds_completed": [0]}))
    import pandas as pd

    pd.DataFrame({"data_source": ["d"], "question": ["1+1?"],
                  "reward_model": [{"ground_truth": "2"}]}).to_parquet(d / "noprompt.parquet")
    pd.DataFrame({"data_source": ["d"], "prompt": [[{"role": "user", "content": "1+1?"}]],
                  "reward_model": [{"style": "rule"}]}).to_parquet(d / "nogt.parquet")
    pd.DataFrame({"data_source": ["d"], "prompt": [[{"role": "user", "content": "1+1?"}]],
                  "reward_model": [{"ground_truth": "2"}]}).head(0).to_parquet(d / "norows.parquet")
    return d


def _closed_port_url() -> str:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/v1"


DEAD_URL = _closed_port_url()

# (argv with {d} for the temp folder, substrings the message must contain)
CASES = [
    # check: config mistakes, each refused before anything starts
    # ... a strategy our entry point cannot compose: the command that runs it with our hooks
    # (integration/startup/compose.py)
    (["check", "--skip-probe", *OK, "actor_rollout_ref.actor.strategy=megatron"],
     ["actor_rollout_ref.actor.strategy=megatron: python -m verl_focal.main_ppo composes verl's FSDP config",
      "--config-name ppo_megatron_trainer trainer.v1.trainer_mode=focal_sync"]),
    # ... an env var for the job's Ray processes that is not a string: Ray's TypeError inside ray.init otherwise
    (["check", "--skip-probe", *OK, "trainer.logger=[console]",
      "+ray_kwargs.ray_init.runtime_env.env_vars.VERL_FOCAL_REWARD_WORKERS=2"],
     ["ray_kwargs.ray_init.runtime_env.env_vars.VERL_FOCAL_REWARD_WORKERS=2 is not a string (int)",
      "Ray takes strings only",
      "'+ray_kwargs.ray_init.runtime_env.env_vars.VERL_FOCAL_REWARD_WORKERS=\"2\"'"]),
    # ... keys verl has but does not read under this config (startup/liveness.py), each with the fix
    (["check", "--skip-probe", *OK, "algorithm.adv_estimator=grpo", "actor_rollout_ref.actor.kl_loss_coef=0.001"],
     ["actor_rollout_ref.actor.kl_loss_coef=0.001 is not read under this configuration",
      "add actor_rollout_ref.actor.use_kl_loss=true"]),
    (["check", "--skip-probe", *OK, "algorithm.adv_estimator=f_grpo", "critic.optim.lr=3.4e-7"],
     ["critic.optim.lr=3.4e-7 is not read under this configuration", "actor_rollout_ref.actor.optim.lr"]),
    (["check", "--skip-probe", *OK, "actor_rollout_ref.rollout.do_sample=false"],
     ["actor_rollout_ref.rollout.do_sample=false is not read under this configuration", "identical"]),
    (["check", "--skip-probe", *OK, "actor_rollout_ref.rollout.val_kwargs.do_sample=false"],
     ["no vLLM or SGLang rollout", "val_kwargs.temperature=0 instead"]),
    # ... settings with which nothing trains (startup/no_update.py), each with its number
    (["check", "--skip-probe", *OK, "actor_rollout_ref.rollout.temperature=0"],
     ["actor_rollout_ref.rollout.temperature=0 decodes greedily: a prompt's 8 responses are then identical",
      "every group-relative advantage 0"]),
    (["check", "--skip-probe", *OK, "actor_rollout_ref.rollout.top_k=1"],
     ["actor_rollout_ref.rollout.top_k=1 decodes greedily"]),
    (["check", "--skip-probe", *OK, "actor_rollout_ref.actor.optim.lr=0"],
     ["actor_rollout_ref.actor.optim.lr=0: every update is zero"]),
    (["check", "--skip-probe", *OK, "actor_rollout_ref.actor.ppo_epochs=0"],
     ["actor_rollout_ref.actor.ppo_epochs=0: no update pass"]),
    (["check", "--skip-probe", *OK, "trainer.total_epochs=0"], ["trainer.total_epochs=0: verl's loop runs no"]),
    (["check", "--skip-probe", *OK, "trainer.total_training_steps=0"],
     ["trainer.total_training_steps=0: verl's loop runs no training step"]),
    # ... that verl itself would meet only after start-up (integration/startup/verl_checks.py)
    (["check", "--skip-probe", *OK, "algorithm.adv_estimator=f_grpo", "actor_rollout_ref.rollout.n=1"],
     ["actor_rollout_ref.rollout.n=1: f_grpo needs rollout.n >= 2", "nothing trains", "rollout.n=8"]),
    (["check", "--skip-probe", *CUE, "actor_rollout_ref.rollout.n=2"],
     ["actor_rollout_ref.rollout.n=2: cue_grpo needs rollout.n >= 3", "plain GRPO"]),
    (["check", "--skip-probe", *OK, "reward.custom_reward_function.path=pkg://verl_focal.rewards"],
     ["no importable module 'verl_focal.rewards'", "did you mean 'verl_focal.reward'"]),
    (["check", "--skip-probe", *OK, "reward.custom_reward_function.path=pkg://verl_focal.reward",
      "reward.custom_reward_function.name=compute_scores"],
     ["pkg://verl_focal.reward defines no 'compute_scores'", "did you mean 'compute_score'"]),
    (["check", "--skip-probe", *OK, "reward.custom_reward_function.path={d}/nope.py"],
     ["reward.custom_reward_function.path={d}/nope.py: no such file"]),
    (["check", "--skip-probe", *OK, "algorithm.use_kl_in_reward=true", "algorithm.kl_penalty=nonsense"],
     ["algorithm.kl_penalty=nonsense is not one of verl's", "low_var_kl"]),
    (["check", "--skip-probe", *OK, "actor_rollout_ref.actor.use_kl_loss=true",
      "actor_rollout_ref.actor.kl_loss_type=low_var_kll"],
     ["actor_rollout_ref.actor.kl_loss_type=low_var_kll", "did you mean 'low_var_kl'"]),
    (["check", "--skip-probe", *OK, "actor_rollout_ref.actor.policy_loss.loss_mode=cispoo"],
     ["policy_loss.loss_mode=cispoo is not one of verl's", "did you mean 'cispo'"]),
    (["check", "--skip-probe", "--trainer", "one_stp", *OK], ["did you mean 'one_step_off'"]),
    (["check", "--skip-probe", "--trainer", "fully_async", *CUE, "data.train_batch_size=64"],
     ["set data.train_batch_size=0"]),
    (["check", "--skip-probe", *OK, "algorithm.adv_estimator=ds_grpo", "algorithm.rollout_correction.bypass_mode=true",
      "actor_rollout_ref.rollout.calculate_log_probs=false"],
     ["algorithm.adv_estimator=ds_grpo reads the rollout policy's log-probs",
      "set actor_rollout_ref.rollout.calculate_log_probs=true"]),
    (["check", "--skip-probe", *OK, "algorithm.adv_estimator=unlikely_grpo",
      "algorithm.rollout_correction.bypass_mode=true", "actor_rollout_ref.rollout.calculate_log_probs=false"],
     ["algorithm.adv_estimator=unlikely_grpo reads the rollout policy's log-probs",
      "set actor_rollout_ref.rollout.calculate_log_probs=true"]),
    (["check", "--skip-probe", *OK, "algorithm.adv_estimator=maxrl", "algorithm.maxrl.epsilon=0"],
     ["algorithm.maxrl.epsilon must be > 0", "set algorithm.maxrl.epsilon=1e-06 (default)"]),
    (["check", "--skip-probe", *OK, "algorithm.adv_estimator=ds_grpo", "algorithm.ds_grpo.std=unbiased"],
     ["algorithm.ds_grpo.std='unbiased' is not one of ['population', 'sample']"]),
    (["check", "--skip-probe", *OK, "algorithm.adv_estimator=f_grpoo"],
     ["'f_grpoo'", "did you mean 'f_grpo'", "verl_focal.f_grpo", "grpo_passk"]),
    (["check", "--skip-probe", *CUE, "algorithm.cue.partitioner=strategy_cues"],
     ["'strategy_cues'", "did you mean 'strategy_cue'"]),
    (["check", "--skip-probe", *CUE, "algorithm.cue.partitioner=nosuchpkg.mod:Foo"],
     ["nosuchpkg.mod:Foo", "no module named 'nosuchpkg'"]),
    (["check", "--skip-probe", *CUE, "algorithm.cue.partitioner=json:JSONDecoder"],
     ["json:JSONDecoder", "is not a Partitioner"]),
    (["check", "--skip-probe", *CUE, "algorithm.cue.partitioner=verl_focal.partition.controls:SinglePartitionr"],
     ["has no attribute 'SinglePartitionr'", "did you mean 'SinglePartitioner'"]),
    (["check", "--skip-probe", *CUE, "algorithm.cue.epsilon=0"],
     ["algorithm.cue.epsilon must be > 0", "set algorithm.cue.epsilon=0.5"]),
    (["check", "--skip-probe", *CUE, "algorithm.cue.floor=0"],
     ["algorithm.cue.floor must be > 0", "set algorithm.cue.floor=1.05"]),
    (["check", "--skip-probe", *CUE, "algorithm.cue.alpha=-2.0"],
     ["algorithm.cue.alpha must be >= 0.0, got -2.0; set algorithm.cue.alpha=0.8 (default)"]),
    (["check", "--skip-probe", *OK, "algorithm.focal.gama=1"], ["algorithm.focal.gama", "did you mean 'gamma'"]),
    (["check", "--skip-probe", *OK, "+algorithm.focal.gama=1"], ["algorithm.focal.gama", "did you mean 'gamma'"]),
    (["check", "--skip-probe", *OK, "algorithm.focal.base=drgrpoo"], ["'drgrpoo'", "did you mean 'drgrpo'"]),
    (["check", "--skip-probe", *CUE, "algorithm.cue.floor_mode=additve"], ["'additve'", "did you mean 'additive'"]),
    (["check", "--skip-probe", *CUE, "algorithm.cue.cue_set=math_v2"], ["'math_v2'", "did you mean 'math_v1'"]),
    (["check", "--skip-probe", *CUE, "algorithm.cue.partitioner_kwargs={nosuch: 1}"],
     ["+algorithm.cue.partitioner_kwargs.nosuch=VALUE"]),
    (["check", "--skip-probe", *CUE, "+algorithm.cue.partitioner_kwargs.nosuch=1"], ["partitioner_kwargs", "nosuch"]),
    (["check", "--skip-probe", *CUE, "algorithm.cue.partitioner=verl_focal.partition.controls:SinglePartitioner",
      "+algorithm.cue.partitioner_kwargs.nosuch=1"], ["partitioner_kwargs", "nosuch"]),
    (["check", "--skip-probe", *CUE, "algorithm.cue.cue_set={d}/no_such_cues.yaml"],
     ["no_such_cues.yaml", "not found"]),
    # issue 39: a key the user sets that nothing reads (leaf-name did-you-mean; integration/startup/unread.py)
    (["check", "--skip-probe", *OK, "adv_estimator=grpo"],
     ["unknown key adv_estimator (did you mean 'algorithm.adv_estimator'?)", "write algorithm.adv_estimator=grpo"]),
    (["check", "--skip-probe", *OK, "+adv_estimator=grpo"],
     ["+adv_estimator: verl's config has no adv_estimator (did you mean 'algorithm.adv_estimator'?), and nothing "
      "reads it", "write algorithm.adv_estimator=grpo"]),
    (["check", "--skip-probe", *OK, "algorithm.f_grpo_gamma=1.0"],
     ["did you mean 'algorithm.focal.gamma'?", "write algorithm.focal.gamma=1.0"]),
    (["check", "--skip-probe", *OK, "+algorithm.f_grpo_gamma=1.0"],
     ["+algorithm.f_grpo_gamma", "did you mean 'algorithm.focal.gamma'?", "write algorithm.focal.gamma=1.0"]),
    (["check", "--skip-probe", *OK, "+custom_reward_function.path=pkg://verl_focal.rewardz"],
     ["custom_reward_function.path: a legacy key", "never reads",
      "write reward.custom_reward_function.path=pkg://verl_focal.rewardz"]),
    (["check", "--skip-probe", *OK, "reward_model.reward_manager=dapo"],
     ["reward_model.reward_manager: a legacy key", "write reward.reward_manager.name=dapo"]),
    (["check", "--skip-probe", *OK, "trainer=fully_async"],
     ["trainer=fully_async: `trainer` is verl's section", "--trainer fully_async"]),
    # issue 39: settings with which nothing trains, or a part nothing reads is trained
    # (integration/startup/no_signal.py)
    (["check", "--skip-probe", *OK, "algorithm.adv_estimator=f_grpo", "algorithm.focal.gamma=50"],
     ["algorithm.focal.gamma=50: the largest focal weight at actor_rollout_ref.rollout.n=8 is (1-1/8)^50 = 0.00126",
      "nothing trains", "set algorithm.focal.gamma=0.5"]),
    (["check", "--skip-probe", *OK, "algorithm.adv_estimator=f_grpo", "algorithm.focal.gamma=1e9"],
     ["(1-1/8)^1e+09 = 0", "nothing trains"]),
    (["check", "--skip-probe", *OK, "algorithm.adv_estimator=grpo", "actor_rollout_ref.rollout.n=1"],
     ["actor_rollout_ref.rollout.n=1: grpo compares each response with the others", "REINFORCE", "rollout.n=8"]),
    (["check", "--skip-probe", *OK, "algorithm.adv_estimator=f_grpo", "critic.enable=true"],
     ["critic.enable=true: algorithm.adv_estimator=f_grpo never reads a critic's values", "critic.enable=false"]),
    (["check", "--skip-probe", *OK, "algorithm.adv_estimator=f_grpo", "algorithm.use_pf_ppo=true"],
     ["algorithm.use_pf_ppo=true", "only for gae"]),
    # demo
    (["demo", "--steps", "0"], ["--steps=0"]),
    (["demo", "--arms", "F-GRPO", "N=8", "γ=1"], ["one arm name split by the shell", "--arms 'F-GRPO N=8 γ=1'"]),
    (["demo", "--replicate", "{d}/trunc", "{d}/rq"], ["{d}/trunc/results.json is not valid JSON", "cut short"]),
    (["demo", "--quick", "--device", "cuda"], ["--quick and --device cuda"]),
    (["demo", "--device", "tpu"], ["--device", "tpu"]),
    (["demo", "--seeds", "-3-2"], ["'-3-2' is not a seed", "integers >= 0", "0-23"]),
    (["demo", "--quick", "--out-dir", "{d}/afile"], ["--out-dir {d}/afile: is a file"]),
    (["demo", "--quick", "--out-dir", "{d}/afile/sub"], ["--out-dir {d}/afile/sub: cannot write there"]),
    (["demo", "--replicate", "{d}/rq", "{d}/rd"], ["different designs", "rl_steps: 8 vs 60"]),
    # cues
    (["cues", "{d}/nope.txt"], ["nope.txt"]),
    (["cues", "{d}/trace.txt", "--cue-set", "nosuch_set"], ["nosuch_set"]),
    (["cues", "{d}/trace.txt", "--epsilon", "0"], ["epsilon"]),
    (["cues", "{d}/badarr.json"], ["{d}/badarr.json[0]: a trace must be a string"]),
    # agreement
    (["agreement", "{d}/nope.jsonl", "--model", "m"], ["nope.jsonl"]),
    (["agreement", "{d}/bad.jsonl", "--model", "m"], ["bad.jsonl:1"]),
    (["agreement", "{d}/groups.jsonl", "--model", "m", "--base-url", DEAD_URL], [DEAD_URL, "unreachable"]),
    (["agreement", "{d}/groups.jsonl", "--model", "m", "--against", "strategy_cues"],
     ["'strategy_cues'", "did you mean 'strategy_cue'"]),
    # sim
    (["sim", "--n-actions", "10", "--n-correct", "20", "--no-progress"], ["n_correct"]),
    (["sim", "--n-grid", "x..y", "--no-progress"], ["x..y"]),
    (["sim", "--n-grid", "3-100", "--no-progress"], ["--n-grid 3-100", "powers of two", "4-64"]),
    (["sim", "--objective", "adam"], ["--objective", "adam"]),
    # tail-miss
    (["tail-miss", "--mu", "1.5", "--tau", "0.1"], ["--mu 1.5 must lie strictly between 0 and 1"]),
    (["tail-miss", "--mu", "0.5", "--tau", "0.7"], ["--tau 0.7"]),
    (["tail-miss", "--mu", "0.5", "--rho", "2"], ["--rho 2"]),
    (["tail-miss", "--mu", "0.5"], ["--tau", "--rho"]),
    # prep-data
    (["prep-data", "deepscaler", "--source", "{d}/bad.json", "--max-prompt-tokens", "0", "--out", "{d}/o.parquet"],
     ["bad.json", "not valid JSON", "line 2"]),
    (["prep-data", "deepscaler", "--source", "{d}/none.json", "--max-prompt-tokens", "0", "--out", "{d}/o.parquet"],
     ["none.json", "does not exist"]),
    (["prep-data", "math-subset", "--source", "{d}/bad.json", "--levels", "x",
     "--max-prompt-tokens", "0", "--out", "{d}/o.parquet"],
     ["--levels x"]),
    (["prep-data", "eval", "--sets", "aime2024", "--max-prompt-tokens", "0"], ["aime2024"]),
    (["prep-data", "example", "--out-dir", "{d}/afile"], ["--out-dir {d}/afile: is a file"]),
    # eval score: runs without the columns it needs, empty runs, files of the wrong format, bad options
    (["eval", "score", "--run", "a={d}/nogt.jsonl", "--out-dir", "{d}/o"],
     ["run a: {d}/nogt.jsonl", "'ground_truth'", "verl-focal eval generate"]),
    (["eval", "score", "--run", "a={d}/empty.jsonl", "--out-dir", "{d}/o"],
     ["run a: {d}/empty.jsonl: the file is empty", "verl-focal eval generate"]),
    (["eval", "score", "--run", "a={d}/blank.jsonl", "--out-dir", "{d}/o"], ["blank.jsonl: the file is empty"]),
    # ... empty ground truths (issue 45: scored 0, exit 0), and a data source without any (left out silently)
    (["eval", "score", "--run", "a={d}/emptygt.jsonl", "--out-dir", "{d}/o", "--workers", "0", "--no-progress"],
     ["run a: empty ground truth(s) in data source verl_focal/aime24 (3 of 3 answers)", "would score 0",
      "verl-focal prep-data eval"]),
    (["eval", "score", "--run", "a={d}/gtless_source.jsonl", "--out-dir", "{d}/o", "--workers", "0",
      "--no-progress"],
     ["run a: no ground_truth in data source verl_focal/math500 (all 2 lines)", "left out of the run",
      "verl-focal prep-data eval"]),
    (["eval", "score", "--runs", "{d}/runs_empty", "--out-dir", "{d}/o"],
     ["run grpo:", "grpo.jsonl: the file is empty"]),
    (["eval", "score", "--run", "a={d}/noprompt.parquet", "--out-dir", "{d}/o"],
     ["noprompt.parquet: is a parquet file, not JSONL", "verl-focal eval generate --data {d}/noprompt.parquet"]),
    (["eval", "score", "--run", "a={d}/notjson.jsonl", "--out-dir", "{d}/o"],
     ["notjson.jsonl: not JSONL", "line 1", "verl-focal eval generate"]),
    (["eval", "score", "--run", "a={d}/binary.dat", "--out-dir", "{d}/o"], ["binary.dat: is a binary file"]),
    (["eval", "score", "--run", "a={d}/dup.jsonl", "--out-dir", "{d}/o"],
     ["run a: 1 line(s) repeat a (problem, sample) pair", "dup.jsonl line 2 repeats line 1 (problem 'u', sample 0)"]),
    (["eval", "score", "--run", "a={d}/nogt.jsonl", "--out-dir", "{d}/afile"], ["--out-dir {d}/afile: is a file"]),
    (["eval", "score", "--run", "a={d}/nogt.jsonl", "--out-dir", "{d}/o", "--k-max", "0"], ["--k-max 0", ">= 1"]),
    (["eval", "score", "--run", "a={d}/nogt.jsonl", "--out-dir", "{d}/o", "--scorer", "nosuch.mod:f"],
     ["--scorer 'nosuch.mod:f'"]),
    (["eval", "scor", "--runs", "{d}/runs"], ["'scor'", "did you mean 'score'"]),
    # issue 39: a ground truth of the wrong form for its benchmark is an error, never a silent 0
    (["eval", "score", "--run", "a={d}/ifeval_plain.jsonl", "--out-dir", "{d}/o", "--workers", "0", "--no-progress"],
     ["run a: none of the 2 answers of data source verl_focal/ifeval could be scored", "IFEvalGroundTruthError",
      "prep-data eval"]),
    (["eval", "score", "--run", "a={d}/gpqa_text.jsonl", "--out-dir", "{d}/o", "--workers", "0", "--no-progress"],
     ["data source verl_focal/gpqa_diamond could be scored",
      "a multiple-choice ground truth must be the option letter (A-J), got 'Paris'"]),
    (["eval", "score", "--runs", "{d}/runs", "--out-dir", "{d}/o", "--failures", "{d}"],
     ["--failures {d}: is a folder"]),
    (["agreement", "{d}/groups.jsonl", "--model", "m", "--base-url", DEAD_URL, "--out", "{d}"],
     ["--out {d}: is a folder"]),
    (["eval", "score", "--runs", "{d}/empty", "--out", "{d}/o"], ["--runs", "empty", "holds no"]),
    (["eval", "score", "--runs", "{d}/nope", "--out", "{d}/o"], ["--runs", "nope", "no such folder"]),
    (["eval", "score", "--runs", "{d}/runs", "--baseline", "grpp", "--out", "{d}/o"],
     ["--baseline 'grpp'", "did you mean 'grpo'"]),
    (["eval", "report", "--run", "noequals", "--out", "{d}/o"], ["--run 'noequals'", "NAME=PATH"]),
    # eval report
    (["eval", "report", "--run", "a={d}/unscored.jsonl", "--out-dir", "{d}/o"],
     ["run a: {d}/unscored.jsonl", "'acc'/'score'", "verl-focal eval score"]),
    (["eval", "report", "--run", "a={d}/empty.jsonl", "--out-dir", "{d}/o"], ["empty.jsonl: the file is empty"]),
    (["eval", "report", "--run", "a={d}/norows.parquet", "--out-dir", "{d}/o"],
     ["norows.parquet: is a parquet file, not JSONL", "verl-focal eval score"]),
    (["eval", "report", "--run", "a={d}/notjson.jsonl", "--out-dir", "{d}/o"], ["notjson.jsonl: not JSONL"]),
    (["eval", "report", "--run", "a={d}/nope.jsonl", "--out-dir", "{d}/o"], ["nope.jsonl", "does not exist"]),
    (["eval", "report", "--run", "a={d}/unscored.jsonl", "--out-dir", "{d}/o", "--alpha", "1.5"], ["--alpha 1.5"]),
    # eval generate: the parquet lacks a column, has no usable row, is not a parquet
    (["eval", "generate", "--data", "{d}/noprompt.parquet", "--model", "{d}/hf", "--out", "{d}/g.jsonl"],
     ["--data {d}/noprompt.parquet: missing column(s) ['prompt']", "prep-data eval"]),
    (["eval", "generate", "--data", "{d}/nogt.parquet", "--model", "{d}/hf", "--out", "{d}/g.jsonl"],
     ["nogt.parquet: no usable row", "'ground_truth'", "prep-data eval"]),
    (["eval", "generate", "--data", "{d}/norows.parquet", "--model", "{d}/hf", "--out", "{d}/g.jsonl"],
     ["norows.parquet: the parquet has no rows"]),
    (["eval", "generate", "--data", "{d}/nogt.jsonl", "--model", "{d}/hf", "--out", "{d}/g.jsonl"],
     ["--data {d}/nogt.jsonl: is a JSONL/JSON file, not a parquet file", "prep-data eval"]),
    (["eval", "generate", "--data", "{d}/binary.dat", "--model", "{d}/hf", "--out", "{d}/g.jsonl"],
     ["binary.dat: is not a parquet file"]),
    (["eval", "generate", "--data", "{d}/noprompt.parquet", "--model", "{d}/hf", "--out", "{d}/g.jsonl", "--n", "0"],
     ["--n 0"]),
    (["eval", "generate", "--data", "{d}/noprompt.parquet", "--model", "{d}/hf", "--out", "{d}", "--n", "1"],
     ["--out {d}: is a folder"]),
    (["eval", "generate", "--data", "{d}/noprompt.parquet", "--model", "{d}/hf", "--out", "{d}/g.jsonl",
      "--backend", "vlm"], ["'vlm'", "did you mean 'vllm'"]),
    # eval frontier: runs as eval report reads them (unscored, empty, parquet), the families file, k; eval example
    (["eval", "frontier", "--families", "{d}/fam.yaml", "--run", "r={d}/unscored.jsonl", "--run",
      "c={d}/unscored.jsonl", "--run", "m={d}/unscored.jsonl", "--out-dir", "{d}/o"],
     ["unscored.jsonl: no line has the fields", "'acc'/'score'"]),
    (["eval", "frontier", "--families", "{d}/fam.yaml", "--run", "r={d}/empty.jsonl", "--run", "c={d}/empty.jsonl",
      "--run", "m={d}/empty.jsonl", "--out-dir", "{d}/o"], ["empty.jsonl: the file is empty"]),
    (["eval", "frontier", "--families", "{d}/fam.yaml", "--run", "r={d}/noprompt.parquet", "--run",
      "c={d}/noprompt.parquet", "--run", "m={d}/noprompt.parquet", "--out-dir", "{d}/o"],
     ["noprompt.parquet: is a parquet file, not JSONL"]),
    (["eval", "frontier", "--families", "{d}/nope.yaml", "--runs", "{d}", "--out-dir", "{d}/o"],
     ["--families {d}/nope.yaml: no such file"]),
    (["eval", "frontier", "--families", "{d}/fam.yaml", "--runs", "{d}", "--out-dir", "{d}/o"],
     ["{d}/fam.yaml: run 'r' (the reference) is not in --runs {d}"]),
    (["eval", "frontier", "--families", "{d}/fam.yaml", "--runs", "{d}", "--x", "pass@k", "--out-dir", "{d}/o"],
     ["--x 'pass@k': give pass@k with k >= 1"]),
    (["eval", "example", "--out-dir", "{d}/afile"], ["--out-dir {d}/afile: is a file"]),
    # eval plan: a pilot that is no frontier.json, or one not over seeds
    (["eval", "plan", "--pilot", "{d}/empty"], ["--pilot {d}/empty: no frontier.json there"]),
    (["eval", "plan", "--pilot", "{d}/bad.json"], ["--pilot {d}/bad.json: not an `eval frontier` frontier.json"]),
    (["eval", "plan", "--pilot", "{d}/one_seed_frontier.json"],
     ["one training run per point measures no seed-to-seed spread"]),
    # eval families / interpolate: a file or an empty folder where run folders / a model folder belong
    (["eval", "families", "--runs", "{d}/afile", "--out", "{d}/f.yaml"], ["--runs {d}/afile: not a folder"]),
    (["eval", "families", "--runs", "{d}/empty", "--out", "{d}/f.yaml"], ["no reference run: GRPO at N = 8"]),
    (["eval", "interpolate", "--rl", "{d}/afile", "--base", "{d}/empty", "--lambdas", "0.5", "--out", "{d}/i"],
     ["--rl {d}/afile: is a file"]),
    (["eval", "interpolate", "--rl", "{d}/empty", "--base", "{d}/empty", "--lambdas", "0.5", "--out", "{d}/i"],
     ["--rl {d}/empty: no config.json"]),
    # eval rare-set: generations without prompt_text, empty, parquet; --data without a prompt column
    (["eval", "rare-set", "--generations", "{d}/noprompt_gen.jsonl", "--model", "{d}/hf", "--out", "{d}/r.jsonl"],
     ["noprompt_gen.jsonl", "'prompt_text'", "verl-focal eval generate"]),
    (["eval", "rare-set", "--generations", "{d}/empty.jsonl", "--model", "{d}/hf", "--out", "{d}/r.jsonl"],
     ["empty.jsonl: the file is empty"]),
    (["eval", "rare-set", "--generations", "{d}/noprompt.parquet", "--model", "{d}/hf", "--out", "{d}/r.jsonl"],
     ["noprompt.parquet: is a parquet file, not JSONL"]),
    (["eval", "rare-set", "--data", "{d}/noprompt.parquet", "--model", "{d}/hf", "--out", "{d}/r.jsonl"],
     ["--data {d}/noprompt.parquet: missing column(s) ['prompt']"]),
    (["eval", "rare-set", "--generations", "{d}/noprompt_gen.jsonl", "--model", "{d}/hf", "--out", "{d}/r.jsonl",
      "--top-frac", "0"], ["--top-frac 0"]),
    # eval rare-nll: an item without base_nll, an empty file, a parquet, a binary file
    (["eval", "rare-nll", "--rare-set", "{d}/nobase.jsonl", "--model", "{d}/hf"],
     ["--rare-set {d}/nobase.jsonl", "'base_nll'", "verl-focal eval rare-set"]),
    (["eval", "rare-nll", "--rare-set", "{d}/empty.jsonl", "--model", "{d}/hf"], ["empty.jsonl: the file is empty"]),
    (["eval", "rare-nll", "--rare-set", "{d}/noprompt.parquet", "--model", "{d}/hf"],
     ["noprompt.parquet: is a parquet file, not JSONL", "verl-focal eval rare-set"]),
    (["eval", "rare-nll", "--rare-set", "{d}/binary.dat", "--model", "{d}/hf"], ["binary.dat: is a binary file"]),
    (["eval", "generate", "--data", "{d}/nope.parquet", "--model", "{d}/model", "--out", "{d}/g.jsonl"],
     ["--data", "nope.parquet", "no such file"]),
    (["eval", "generate", "--data", "{d}/bad.json", "--model", "/no/such/model", "--out", "{d}/g.jsonl"],
     ["--model /no/such/model", "no such folder"]),
    (["eval", "generate", "--data", "{d}/bad.json", "--model", "{d}/model", "--out", "{d}/g.jsonl"], ["config.json"]),
    (["eval", "rare-nll", "--rare-set", "{d}/nope.jsonl", "--model", "{d}/model"], ["--rare-set", "nope.jsonl"]),
    (["eval", "rare-set", "--generations", "{d}/nope.jsonl", "--model", "/no/such/model", "--out", "{d}/r.jsonl"],
     ["--model /no/such/model"]),
    # files that are not text: every message names the file
    (["cues", "{d}/binary.dat"], ["{d}/binary.dat: not a UTF-8 text file"]),
    (["cues", "{d}/nul.txt"], ["{d}/nul.txt: a binary file"]),
    (["cues", "{d}/trace.txt", "--cue-set", "{d}/binary.dat"], ["--cue-set {d}/binary.dat: not a UTF-8 text file"]),
    (["agreement", "{d}/binary.dat", "--model", "m"], ["{d}/binary.dat: not a UTF-8 text file"]),
    (["prep-data", "deepscaler", "--source", "{d}/binary.dat", "--max-prompt-tokens", "0", "--out", "{d}/o.parquet"],
     ["--source {d}/binary.dat: not a UTF-8 text file"]),
    (["sim", "--out-dir", "{d}/afile", "--quick", "--no-progress"], ["--out-dir {d}/afile: is a file"]),
    (["sim", "--replot", "{d}/nope"], ["--replot {d}/nope", "cannot read"]),
    (["sim", "--seeds", "0-x", "--quick"], ["--seeds", "'0-x'", "0-3"]),
    # the top level and nested commands: a typo gets a did-you-mean
    (["no-such-command"], ["no-such-command"]),
    (["chek"], ["'chek'", "did you mean 'check'"]),
    (["prep-data", "evl"], ["'evl'", "did you mean 'eval'"]),
]

#: every command of the CLI appears at least three times
_COUNTS = {}
for _argv, _ in CASES:
    _COUNTS[_argv[0]] = _COUNTS.get(_argv[0], 0) + 1


@pytest.mark.parametrize("argv,needle", [
    (["algorithm.adv_estimator=f_grpo", "algorithm.gamma=1.0"],
     "algorithm.gamma=1.0 is not read under this configuration (it is the discount of GAE and REINFORCE++"),
    (["algorithm.adv_estimator=grpo", "algorithm.focal.gamma=1.0"],
     "algorithm.focal.gamma is set, but algorithm.adv_estimator=grpo does not read it"),
    (["algorithm.adv_estimator=cue_grpo", "algorithm.focal.gamma=2"],
     "algorithm.focal.gamma is set, but algorithm.adv_estimator=cue_grpo does not read it, so it would have no "
     "effect; remove it, or train an estimator that reads it (f_grpo, f_cue_grpo)"),
])
def test_a_key_the_estimator_does_not_read_is_refused_in_one_line(argv, needle, capsys):
    """Issue 45: a key the user sets is refused unless something reads it under this configuration."""
    assert main(["check", "--skip-probe", *OK, *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err, err
    # what an estimator does read is never flagged: every estimator of ours reads the correctness keys
    assert main(["check", "--skip-probe", *OK, "algorithm.adv_estimator=passk_grpo",
                 "algorithm.focal.correctness=acc", "algorithm.passk.k=2"]) == 0


#: issue 45's held-out mistakes whose hint pointed to an unread key: each now names the key this run reads, and
#: the key named passes the same check (the second argv)
@pytest.mark.parametrize("bad,meant", [
    ("lr=3.4e-7", "actor_rollout_ref.actor.optim.lr=3.4e-7"),
    ("use_dynamic_bsz=true", "actor_rollout_ref.actor.use_dynamic_bsz=true"),
    ("+algorithm.focal_gamma=1.0", "algorithm.focal.gamma=1.0"),
    ("temperature=0.6", "actor_rollout_ref.rollout.temperature=0.6"),
    ("n=16", "actor_rollout_ref.rollout.n=16"),
])
@pytest.mark.parametrize("estimator", ["f_grpo", "gae"])
def test_a_hint_names_a_key_this_run_reads_and_the_key_passes(bad, meant, estimator, capsys):
    """With a critic (gae) the critic's keys are live too; the hint still names the policy's (``lr=`` meant the
    actor's learning rate; it used to get critic.optim.lr, the shallower key)."""
    extra = [f"algorithm.adv_estimator={estimator}"] + (
        ["critic.ppo_micro_batch_size_per_gpu=2"] if estimator == "gae" else [])
    assert main(["check", "--skip-probe", *OK, *extra, bad]) == 2
    err = capsys.readouterr().err
    if estimator == "gae" and meant.startswith("algorithm.focal."):
        # gae reads no focal key, so none is hinted (and not GAE's algorithm.gamma either): the fix is to remove it
        assert "did you mean" not in err and f"remove {bad.split('=')[0]}" in err, err
        return
    assert f"write {meant}" in err, err
    main(["check", "--skip-probe", *OK, *extra, meant])
    err = capsys.readouterr().err
    assert "is not read under this configuration" not in err and "does not read it" not in err, err
    assert "unknown key" not in err and "nothing reads it" not in err, err


def test_every_command_has_three_bad_inputs():
    from verl_focal.cli import COMMANDS

    assert {c: n for c, n in _COUNTS.items() if c in COMMANDS and n < 3} == {}
    assert set(COMMANDS) <= set(_COUNTS)


@pytest.mark.parametrize("argv,needles", CASES, ids=[" ".join(a[:3])[:60] + f"#{i}" for i, (a, _) in enumerate(CASES)])
def test_bad_input_is_one_clear_line(argv, needles, files, capsys):
    argv = [a.replace("{d}", str(files)) for a in argv]
    needles = [n.replace("{d}", str(files)) for n in needles]
    try:
        rc = main(argv)
    except SystemExit as e:  # argparse's own usage errors
        rc = e.code
    out = capsys.readouterr()
    assert rc == 2, out.err[-2000:]
    assert "Traceback" not in out.err and "Traceback" not in out.out
    for n in needles:
        assert n in out.err, f"{n!r} not in: {out.err[-2000:]}"
    lines = [ln for ln in out.err.splitlines() if ln.strip() and "--debug" not in ln and not ln.startswith("[warning]")]
    assert 1 <= len(lines) <= 2, out.err


#: every eval sub-command has a case for each kind of bad input file
EVAL_KINDS = {
    "generate": ["missing column(s)", "no usable row", "is a JSONL/JSON file"],
    "score": ["'ground_truth'", "the file is empty", "is a parquet file"],
    "report": ["'acc'/'score'", "the file is empty", "is a parquet file"],
    "frontier": ["'acc'/'score'", "the file is empty", "is a parquet file"],
    "example": ["is a file"],
    "plan": ["no frontier.json there", "not an `eval frontier` frontier.json", "measures no seed-to-seed spread"],
    "rare-set": ["'prompt_text'", "the file is empty", "is a parquet file"],
    "rare-nll": ["'base_nll'", "the file is empty", "is a parquet file"],
    "families": ["not a folder", "no reference run"],
    "interpolate": ["is a file", "no config.json"],
}


def test_every_eval_command_has_missing_column_empty_and_wrong_format_cases():
    from verl_focal.lab.eval.cli import COMMANDS as EVAL_COMMANDS

    assert set(EVAL_KINDS) == set(EVAL_COMMANDS)
    for sub, kinds in EVAL_KINDS.items():
        needles = [n for argv, ns in CASES if argv[:2] == ["eval", sub] for n in ns]
        for kind in kinds:
            assert any(kind in n for n in needles), (sub, kind)


MIXED_SCORER = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):
    ok = solution_str.strip().endswith(str(ground_truth))
    return {"score": float(ok), "acc": float(ok), "pred": solution_str[-1:]}
"""


def test_a_mixed_run_is_scored_and_the_rows_left_out_are_counted(tmp_path, monkeypatch, capsys):
    """Some usable rows: `eval score` and `eval report` go on with them and print how many were left
    out and the first bad line; the report's numbers come from the usable rows only."""
    (tmp_path / "mixed_scorer_mod.py").write_text(MIXED_SCORER)
    monkeypatch.syspath_prepend(str(tmp_path))
    good = [{"uid": f"p{i}", "sample": s, "data_source": "d", "response": f"x {i if s == 0 else 9}",
             "ground_truth": str(i)} for i in range(3) for s in range(2)]
    lines = [json.dumps(r) for r in good]
    lines.insert(2, json.dumps({"uid": "p0", "sample": 5, "response": "x 0"}))  # no ground_truth: line 3
    lines.append("{cut")  # a killed writer's last line: line 8
    run = tmp_path / "mixed.jsonl"
    run.write_text("\n".join(lines) + "\n")
    out = tmp_path / "o"
    assert main(["eval", "score", "--run", f"a={run}", "--out-dir", str(out), "--workers", "0",
                 "--scorer", "mixed_scorer_mod:compute_score", "--iterations", "10", "--no-progress"]) == 0
    got = capsys.readouterr()
    assert ("run a: left out 2 of 8 line(s) (1 not a JSON object, 1 without a needed field); "
            "first: mixed.jsonl line 3: lacks 'ground_truth'") in got.err
    assert "scored 6 answers" in got.out and "Traceback" not in got.err
    import csv

    row = next(csv.DictReader(open(out / "results.csv")))
    assert float(row["pass@1"]) == 50.0 and row["problems"] == "3"  # 1 of 2 samples right on each problem
    # report on the scored copy plus an unscored line: the same numbers, one line left out
    scored = (out / "scored" / "a.jsonl").read_text() + json.dumps(good[0]) + "\n"
    (tmp_path / "scored_mixed.jsonl").write_text(scored)
    assert main(["eval", "report", "--run", f"a={tmp_path / 'scored_mixed.jsonl'}", "--out", str(tmp_path / "o2"),
                 "--iterations", "10"]) == 0
    err = capsys.readouterr().err
    assert "run a: left out 1 of 7 line(s)" in err and "scored_mixed.jsonl line 7: lacks 'acc'/'score'" in err
    # a file in --runs that is not a run is named, not skipped silently
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a.jsonl").write_text(scored)
    (runs / "b.parquet").write_bytes(b"PAR1")
    assert main(["eval", "report", "--runs", str(runs), "--out-dir", str(tmp_path / "o3"), "--iterations", "10"]) == 0
    assert f"--runs {runs}: not a run, left out: b.parquet" in capsys.readouterr().err
    assert next(csv.DictReader(open(tmp_path / "o2" / "results.csv")))["pass@1"] == row["pass@1"]


@pytest.mark.parametrize("spelling", ["2-16", "2..16"])
def test_ranges_are_lo_hi_with_lo_dot_dot_hi_accepted(spelling, capsys):
    """One way to write a range across commands: LO-HI (as `demo --seeds 0-23`); LO..HI still parses."""
    assert main(["tail-miss", "--mu", "0.5", "--tau", "0.01", "--n", spelling]) == 0
    ns = [ln.split()[0] for ln in capsys.readouterr().out.splitlines()[2:6]]
    assert ns == ["2", "4", "8", "16"]
    from verl_focal.lab.theory.cli_sim import parse_seeds

    assert parse_seeds([spelling.replace("16", "4")]) == (2, 3, 4)


def test_output_folders_are_out_dir_with_out_as_alias():
    """Commands that write a folder take --out-dir; where --out named the folder before, it still works."""
    from verl_focal.cli import build_parser

    for argv in (["score", "--runs", "r"], ["report", "--runs", "r"]):
        for flag in ("--out-dir", "--out"):
            assert build_parser("eval").parse_args([*argv, flag, "x"]).out_dir == "x"
    assert build_parser("sim").parse_args(["--out-dir", "x"]).out_dir == "x"
    assert build_parser("prep-data").parse_args(["eval", "--out-dir", "x"]).out_dir == "x"


def test_debug_shows_the_traceback_and_a_bug_keeps_it(files, capsys, monkeypatch):
    assert main(["tail-miss", "--mu", "1.5", "--tau", "0.1", "--debug"]) == 2
    assert "Traceback" in capsys.readouterr().err
    monkeypatch.setenv("VERL_FOCAL_DEBUG", "1")
    assert main(["eval", "score", "--runs", str(files / "empty"), "--out", str(files / "o")]) == 2
    assert "Traceback" in capsys.readouterr().err
    monkeypatch.delenv("VERL_FOCAL_DEBUG")
    import verl_focal.lab.theory.cli_tail_miss as tm

    def boom(*a, **k):
        raise ZeroDivisionError("a bug of ours")

    monkeypatch.setattr(tm, "tail_miss_probability", boom)
    with pytest.raises(ZeroDivisionError):  # not a user error: the traceback stays
        main(["tail-miss", "--mu", "0.5", "--tau", "0.1"])


def test_an_unreadable_path_is_named_without_a_traceback(monkeypatch, capsys):
    """Any OSError about a path the user gave ends as one line naming the path (exit 2)."""
    import verl_focal.lab.theory.cli_tail_miss as tm

    def denied(*a, **k):
        raise PermissionError(13, "Permission denied", "/data/out.csv")

    monkeypatch.setattr(tm, "tail_miss_probability", denied)
    assert main(["tail-miss", "--mu", "0.5", "--tau", "0.1"]) == 2
    err = capsys.readouterr().err
    assert "error: /data/out.csv: Permission denied" in err and "Traceback" not in err


def test_version_names_ours_verl_torch_and_ray(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    import importlib.metadata as md

    for pkg in ("verl", "torch", "ray"):
        assert f"{pkg} {md.version(pkg)}" in out
    assert out.startswith("verl-focal ")


def test_every_option_has_help_and_every_nested_command_a_description():
    import argparse

    from verl_focal.cli import COMMANDS, build_parser

    missing = []

    def walk(p: argparse.ArgumentParser, where: str):
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sub in a.choices.items():
                    if not sub.description:
                        missing.append(f"{where} {name}: no description")
                    walk(sub, f"{where} {name}")
            elif not a.help and a.dest != "help":
                missing.append(f"{where} {'/'.join(a.option_strings) or a.dest}: no help")

    for name in COMMANDS:
        walk(build_parser(name), f"verl-focal {name}")
    assert missing == []


def _py(*args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    e.pop("VERL_FOCAL_DEBUG", None)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=600, env=e)


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["algorithm.adv_estimator=cue_grpo", "algorithm.cue.partitioner=strategy_cues"],
         "did you mean 'strategy_cue'"),
        (["algorithm.focal.gama=1"], "did you mean 'gamma'"),
        (["algorithm.adv_estimator=f_grpoo"], "did you mean 'f_grpo'"),
        (["algorithm.focal.gamma"], "algorithm.focal.gamma"),  # not key=value
        # the separated trainers assert hybrid_engine=false when built, and "naive" cannot move weights
        # between their pools: refused before Ray, naming the key and the value to use
        (["--trainer", "one_step_off", "actor_rollout_ref.hybrid_engine=true"],
         "set actor_rollout_ref.hybrid_engine=false"),
        (["--trainer", "fully_async", "actor_rollout_ref.rollout.checkpoint_engine.backend=naive"],
         "checkpoint_engine.backend=naive only syncs a colocated rollout"),
        (["--trainer", "fully_async", "data.train_batch_size=512"], "set data.train_batch_size=0"),
    ],
)
def test_main_ppo_dry_run_refuses_in_one_line(argv, needle, capsys):
    from verl_focal.main_ppo import main as main_ppo

    with pytest.raises(SystemExit) as info:
        main_ppo(["--dry-run", *argv])
    err = capsys.readouterr().err
    assert info.value.code == 2 and needle in err and "Traceback" not in err and "use +" not in err


@pytest.mark.parametrize("command", [["check", "--skip-probe", *OK], ["--dry-run", *OK]])
def test_a_wandb_logger_without_a_key_is_one_line(command, monkeypatch, tmp_path, capsys):
    """verl's default logger on a machine with no W&B key (startup/tracking.py): refused, naming the three fixes."""
    from verl_focal.main_ppo import main as main_ppo

    for k in ("WANDB_MODE", "WANDB_API_KEY", "WANDB_DISABLED", "WANDB_CONFIG_DIR", "NETRC"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    if command[0] == "check":
        code = main(command)
    else:
        with pytest.raises(SystemExit) as info:
            main_ppo(command)
        code = info.value.code
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    assert "includes wandb but no W&B key is configured" in err
    assert "set trainer.logger=[console], WANDB_MODE=offline, or WANDB_API_KEY" in err


def test_main_ppo_real_run_refuses_before_ray_in_one_line(tmp_path):
    """The real entry point in a fresh process, without --dry-run: refused by our check, Ray never starts."""
    proc = _py("-m", "verl_focal.main_ppo", "algorithm.adv_estimator=cue_grpo", "actor_rollout_ref.rollout.name=vllm",
               "algorithm.cue.partitioner=strategy_cues", f"trainer.default_local_dir={tmp_path}/ckpt")
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "did you mean 'strategy_cue'" in proc.stderr
    assert "engine is not available" not in proc.stderr  # quiet start-up
    assert "Started a local Ray instance" not in proc.stderr + proc.stdout


def test_dry_run_refuses_missing_local_inputs_but_not_hub_names(tmp_path, capsys):
    """--dry-run checks the local data files and model folders a run reads; hub names stay unchecked (offline)."""
    import pandas as pd

    from verl_focal.main_ppo import main as main_ppo

    train, val = tmp_path / "train.parquet", tmp_path / "val.parquet"
    for f in (train, val):  # real parquets: the dry run's size lines read their row counts
        pd.DataFrame({"data_source": ["d"], "prompt": [[{"role": "user", "content": "1+1?"}]],
                      "reward_model": [{"ground_truth": "2"}]}).to_parquet(f)
    data = [f"data.train_files={train}", f"data.val_files=[{val}]", "actor_rollout_ref.rollout.name=vllm"]
    cases = [
        ([f"data.train_files={tmp_path}/none.parquet", f"data.val_files=[{val}]"],
         f"data.train_files={tmp_path}/none.parquet (no such file)"),
        ([f"data.train_files={train}", f"data.val_files=[{val},{tmp_path}/v2.parquet]"],
         f"data.val_files: {tmp_path}/v2.parquet (no such file)"),
        ([*data, f"actor_rollout_ref.model.path={tmp_path}/no_model"],
         f"actor_rollout_ref.model.path={tmp_path}/no_model"),
    ]
    for argv, needle in cases:
        with pytest.raises(SystemExit) as info:
            main_ppo(["--dry-run", *OK, *argv])
        err = capsys.readouterr().err
        assert info.value.code == 2 and needle in err and "Traceback" not in err, err
        assert len([ln for ln in err.splitlines() if "error:" in ln]) == 1
    with pytest.raises(SystemExit) as info:  # a hub name is not a path: not checked
        main_ppo(["--dry-run", *OK, *data, "actor_rollout_ref.model.path=Qwen/Qwen2.5-7B"])
    assert info.value.code == 0
    assert "model:\n" in capsys.readouterr().out


def _local_paths_error(overrides: list[str]) -> str:
    """check_local_paths on a composed config: the refusal's message ('' when it passes)."""
    from verl_focal.config.errors import ConfigError
    from verl_focal.integration.startup.compose import compose_config
    from verl_focal.integration.startup.local_inputs import check_local_paths

    try:
        check_local_paths(compose_config(overrides))
    except ConfigError as e:
        return str(e)
    return ""


def test_missing_data_files_are_all_named_with_the_example_command(tmp_path):
    """Six missing validation files: every one is named (not "6 of 6 missing, e.g. the first"), and the fix names
    `verl-focal prep-data example` for a dry run without real data, and prep-data for the real sets."""
    sets = ["aime24", "aime25", "amc23", "math500", "minerva_math", "olympiadbench"]
    val = ",".join(f"{tmp_path}/eval/{s}.parquet" for s in sets)
    msg = _local_paths_error([f"data.train_files={tmp_path}/train.parquet", f"data.val_files=[{val}]",
                              "actor_rollout_ref.model.path=Qwen/Qwen2.5-7B"])
    assert msg.startswith(f"missing local input: data.train_files={tmp_path}/train.parquet (no such file); "
                          "data.val_files: 6 of 6 missing: ")
    assert ", ".join(f"{tmp_path}/eval/{s}.parquet" for s in sets) + " (no such file)" in msg
    assert "`verl-focal prep-data example --out-dir DIR` (recipes: DATA_DIR=DIR)" in msg
    assert "`verl-focal prep-data deepscaler|math-subset|eval`" in msg and "\n" not in msg
    (tmp_path / "eval").mkdir()
    (tmp_path / "eval" / "amc23.parquet").mkdir()  # a folder where a file should be: said so, per entry
    (tmp_path / "eval" / "aime24.parquet").write_bytes(b"PAR1")
    msg = _local_paths_error([f"data.val_files=[{val}]", "actor_rollout_ref.model.path=Qwen/Qwen2.5-7B",
                              f"data.train_files={tmp_path}/eval/aime24.parquet"])
    e = f"{tmp_path}/eval"
    assert (f"data.val_files: 5 of 6 missing: {e}/aime25.parquet (no such file), {e}/amc23.parquet (a folder, not a "
            f"file), {e}/math500.parquet (no such file)") in msg


@pytest.mark.parametrize("files,lacks", [
    ([], "the folder has no config.json and no tokenizer files (tokenizer.json, or the vocab files"),
    (["config.json", "tokenizer_config.json"], "the folder has no tokenizer files"),  # AutoTokenizer needs a vocab
    (["tokenizer.json"], "the folder has no config.json;"),
    (["config.json", "tokenizer.json"], None),
    (["config.json", "tokenizer_config.json", "vocab.json", "merges.txt"], None),  # a slow BPE tokenizer
    (["config.json", "tokenizer.model"], None),  # sentencepiece
])
def test_a_local_model_folder_needs_config_and_a_tokenizer(tmp_path, files, lacks):
    data = tmp_path / "d.parquet"
    data.write_bytes(b"PAR1")
    model = tmp_path / "model"
    model.mkdir()
    for f in files:
        (model / f).write_text("{}")
    msg = _local_paths_error([f"data.train_files={data}", f"data.val_files=[{data}]",
                              f"actor_rollout_ref.model.path={model}"])
    if lacks is None:
        assert msg == ""
        return
    assert msg.startswith(f"missing local input: actor_rollout_ref.model.path={model}: {lacks}")
    assert msg.endswith("a model folder needs config.json and its tokenizer (save both with save_pretrained), "
                        "or give a hub name like Qwen/Qwen2.5-7B")


def test_a_tokenizer_path_moves_the_tokenizer_check_and_a_hub_name_is_left_alone(tmp_path):
    data = tmp_path / "d.parquet"
    data.write_bytes(b"PAR1")
    model, tok = tmp_path / "model", tmp_path / "tok"
    model.mkdir()
    tok.mkdir()
    (model / "config.json").write_text("{}")
    base = [f"data.train_files={data}", f"data.val_files=[{data}]", f"actor_rollout_ref.model.path={model}"]
    msg = _local_paths_error([*base, f"actor_rollout_ref.model.tokenizer_path={tok}"])
    assert msg.startswith(f"missing local input: actor_rollout_ref.model.tokenizer_path={tok}: the folder has no "
                          "tokenizer files")
    (tok / "tokenizer.json").write_text("{}")
    assert _local_paths_error([*base, f"actor_rollout_ref.model.tokenizer_path={tok}"]) == ""
    # a hub name that is no local path is not checked (the check runs offline); a file is not a folder
    assert _local_paths_error([*base[:2], "actor_rollout_ref.model.path=Qwen/Qwen2.5-7B"]) == ""
    assert "a file, not a model folder" in _local_paths_error([*base[:2], f"actor_rollout_ref.model.path={data}"])


def test_a_weights_file_as_the_model_path_names_its_folder(tmp_path):
    """Issue 45: actor_rollout_ref.model.path=<dir>/model.safetensors: the message gives the folder to write."""
    data = tmp_path / "d.parquet"
    data.write_bytes(b"PAR1")
    model = tmp_path / "m"
    model.mkdir()
    for f in ("config.json", "tokenizer.json", "model.safetensors"):
        (model / f).write_text("{}")
    base = [f"data.train_files={data}", f"data.val_files=[{data}]"]
    msg = _local_paths_error([*base, f"actor_rollout_ref.model.path={model}/model.safetensors"])
    assert msg.startswith(f"missing local input: actor_rollout_ref.model.path={model}/model.safetensors: a file, not "
                          f"a model folder: give its folder, actor_rollout_ref.model.path={model};")
    assert _local_paths_error([*base, f"actor_rollout_ref.model.path={model}"]) == ""  # the hint passes


def test_check_summary_fits_a_screen_and_only_the_fresh_process_imports_verl():
    """The real `check`: the probe and the checks run in one fresh process; this one never imports verl."""
    code = ("import sys; from verl_focal.cli import main; rc = main(['check', '--verbose', *sys.argv[1:]]); "
            "print('VERL_IN_PARENT', 'verl' in sys.modules); sys.exit(rc)")
    proc = _py("-c", code, *OK, "algorithm.adv_estimator=f_grpo")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "VERL_IN_PARENT False" in out
    summary = out.split("resolved config:")[0]
    assert summary.startswith("verl-focal check: OK\n") and len(summary.splitlines()) <= 40
    assert "checked plugin: `import verl` (verl " in summary and "loaded verl_focal.plugin" in summary
    assert "checked config: algorithm.adv_estimator=f_grpo" in summary
    # which hooks the plugin installed in the fresh process (docs/architecture.md)
    assert "checked hooks: advantage, v1, separated\n" in summary
    assert "  focal:\n    gamma: 0.5" in summary and "  cue:" not in summary  # only the sections f_grpo reads
    assert "passed successfully" not in out  # verl's own status line is not ours to print
    assert "actor_rollout_ref:" in out.split("resolved config:")[1]  # --verbose: the whole config
    assert "Disabled critic" not in proc.stderr  # verl's note for every critic-free estimator: not ours to repeat


def test_check_with_an_unreachable_judge_is_failed_and_never_passed(capsys):
    argv = ["check", "--skip-probe", *CUE, "algorithm.cue.partitioner=judge", "algorithm.cue.judge.model=m",
            f"algorithm.cue.judge.base_url={DEAD_URL}"]
    assert main(argv) == 2
    got = capsys.readouterr()
    assert "passed" not in got.out + got.err and "OK" not in got.out
    assert "verl-focal check FAILED:" in got.err and "unreachable" in got.err


def test_recipes_refuse_a_python_without_verl_focal_in_one_line(tmp_path):
    """Unset PYTHON: the active virtualenv's python is used; one that lacks our dependencies is refused."""
    from pathlib import Path

    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    fake = venv / "bin" / "python"
    fake.write_text("#!/bin/sh\necho verl hydra\n")  # what the helper's find_spec probe prints when both are missing
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHON", "VIRTUAL_ENV")}
    env["VIRTUAL_ENV"] = str(venv)
    recipe = Path(__file__).resolve().parents[2] / "recipes" / "deepscaler" / "f_grpo.sh"
    proc = subprocess.run(["bash", str(recipe), "--dry-run"], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"recipe f_grpo: error: {fake} cannot import verl, hydra: run 'make demo' (or 'make install') in the "
        "checkout first, then 'source .venv/bin/activate', or set PYTHON=/path/to/venv/bin/python")


def test_a_probe_that_crashes_is_one_named_problem():
    from verl_focal.check import _parse_probe

    crash = "Traceback (most recent call last):\n  File x\nModuleNotFoundError: No module named 'verl'\n"
    res = _parse_probe("", 1, crash)
    assert res["ok"] is False and len(res["problems"]) == 1
    assert res["problems"][0].startswith("the fresh `import verl` process exited 1: ModuleNotFoundError: No module")


def test_a_run_on_fewer_problems_says_so_in_its_own_table_cell(tmp_path, capsys):
    """Issue 39 row 9: a half-written run (3 of 16 problems) is compared with the baseline; its cell says so."""
    runs = tmp_path / "runs"
    runs.mkdir()
    for name, problems in (("grpo", 16), ("f_grpo", 3)):
        rows = [{"uid": f"p{p}", "sample": s, "data_source": "verl_focal/aime24", "response": rf"\boxed{{{p}}}",
                 "ground_truth": str(p)} for p in range(problems) for s in range(2)]
        (runs / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["eval", "score", "--runs", str(runs), "--out-dir", str(tmp_path / "o"), "--workers", "0",
                 "--no-progress", "--iterations", "10", "--baseline", "grpo"]) == 0
    table = capsys.readouterr().out
    row = next(ln for ln in table.splitlines() if ln.startswith("| f_grpo"))
    assert "100.0 / 100.0 (on 3 of 16 problems)" in row
    assert "of 16 problems" not in next(ln for ln in table.splitlines() if ln.startswith("| grpo"))


def test_a_run_on_fewer_problems_is_said_on_stderr_and_every_mean_is_over_the_shared_problems(tmp_path, capsys):
    """Issue 45: a half-written run exited 0 and its in-domain mean was over other problems than the baseline's.
    grpo answers p3..p15 right and p0..p2 wrong (13 of 16 = 81.2% on its own problems); f_grpo holds p0..p2 only,
    all right.  On the 3 shared problems grpo is at 0.0 and f_grpo at 100.0, in the cells, the in-domain average
    and results.csv; stderr names the short run."""
    import csv

    runs = tmp_path / "runs"
    runs.mkdir()
    for name, problems, right in (("grpo", range(16), range(3, 16)), ("f_grpo", range(3), range(3))):
        rows = [{"uid": f"p{p}", "sample": s, "data_source": "verl_focal/aime24",
                 "response": rf"\boxed{{{p if p in right else 'x'}}}", "ground_truth": str(p)}
                for p in problems for s in range(2)]
        (runs / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["eval", "score", "--runs", str(runs), "--out-dir", str(tmp_path / "o"), "--workers", "0",
                 "--no-progress", "--iterations", "10", "--baseline", "grpo"]) == 0
    got = capsys.readouterr()
    assert ("verl-focal eval: warning: run f_grpo covers 3 of the 16 problems of aime24 (grpo 16): a half-written or "
            "partial run? every mean of aime24, the averages included, is over the 3 problems all runs share"
            ) in got.err.splitlines()
    rows = {ln.split("|")[1].strip(): [c.strip() for c in ln.split("|")[2:-1]] for ln in got.out.splitlines()
            if ln.startswith("| grpo") or ln.startswith("| f_grpo")}
    assert rows["grpo (baseline)"] == ["0.0 / 0.0 (on the 3 shared of its 16 problems)", "0.0 / 0.0"]
    assert rows["f_grpo"][0].startswith("100.0") and rows["f_grpo"][0].endswith("(on 3 of 16 problems)")
    assert rows["f_grpo"][1].startswith("100.0")
    table = list(csv.DictReader(open(tmp_path / "o" / "results.csv")))
    assert {(r["run"], r["benchmark"]): (r["problems"], r["pass@1"]) for r in table if r["run"] == "grpo"} == {
        ("grpo", "aime24"): ("3", "0.0000"), ("grpo", "avg-in-domain"): ("3", "0.0000")}


def test_some_answers_that_fail_to_score_are_counted_with_the_first_cause(tmp_path, capsys):
    gen = {"sample": 0, "response": r"\boxed{A}"}
    rows = [dict(gen, uid="m0", data_source="verl_focal/gpqa_diamond", ground_truth="A"),
            dict(gen, uid="m1", data_source="verl_focal/gpqa_diamond", ground_truth="Paris")]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["eval", "score", "--run", f"a={tmp_path / 'r.jsonl'}", "--out-dir", str(tmp_path / "o"),
                 "--workers", "0", "--no-progress", "--iterations", "10"]) == 0
    assert ("run a: 1 answer(s) failed to score and count as wrong; first: ValueError: a multiple-choice ground "
            "truth must be the option letter (A-J), got 'Paris'") in capsys.readouterr().err


def _example_args(tmp_path):
    from verl_focal.data.example import write_example

    write_example(str(tmp_path / "ex"), train_rows=4, val_rows=2, models=("Qwen/Qwen2.5-7B",))
    model = tmp_path / "model"
    model.mkdir()
    for f in ("config.json", "tokenizer.json"):
        (model / f).write_text("{}")
    return [*OK, f"data.train_files={tmp_path}/ex/deepscaler/qwen2.5-7b.parquet",
            f"data.val_files=[{tmp_path}/ex/eval/aime24.parquet]", f"actor_rollout_ref.model.path={model}",
            "actor_rollout_ref.rollout.name=vllm"]


def test_example_data_never_reaches_a_real_launch_and_the_dry_run_says_so(tmp_path, capsys, monkeypatch):
    """Issue 39 row 7: prep-data example output in DATA_DIR: the dry run warns what the launch will do; the
    launch refuses before Hydra and Ray, unless VERL_FOCAL_ALLOW_EXAMPLE_DATA=1."""
    from verl_focal.integration.startup.compose import compose_config
    from verl_focal.integration.startup.local_inputs import check_example_data
    from verl_focal.main_ppo import main as main_ppo

    args = _example_args(tmp_path)
    monkeypatch.delenv("VERL_FOCAL_ALLOW_EXAMPLE_DATA", raising=False)
    with pytest.raises(SystemExit) as info:
        main_ppo(["--dry-run", *args])
    assert info.value.code == 0
    assert ("2 data file(s) come from `verl-focal prep-data example` (integer arithmetic that teaches nothing), e.g. "
            f"{tmp_path}/ex/deepscaler/qwen2.5-7b.parquet; a real launch refuses them unless "
            "VERL_FOCAL_ALLOW_EXAMPLE_DATA=1") in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main_ppo(args)  # the real launch: refused by our check, before Hydra's main and Ray
    err = capsys.readouterr().err
    assert info.value.code == 2 and "a real run on them is refused" in err and "Traceback" not in err
    monkeypatch.setenv("VERL_FOCAL_ALLOW_EXAMPLE_DATA", "1")
    assert check_example_data(compose_config(args), launch=True) == [
        f"2 data file(s) come from `verl-focal prep-data example` (integer arithmetic that teaches nothing), e.g. "
        f"{tmp_path}/ex/deepscaler/qwen2.5-7b.parquet; training on them because VERL_FOCAL_ALLOW_EXAMPLE_DATA=1"]


def test_a_training_parquet_without_verls_columns_is_refused_by_the_dry_run(tmp_path, capsys):
    """Issue 39 row 12: a parquet with only problem and answer columns passed the dry run; verl fails at load."""
    import pandas as pd

    from verl_focal.main_ppo import main as main_ppo

    args = _example_args(tmp_path)
    raw = tmp_path / "raw.parquet"
    pd.DataFrame({"problem": ["1+1?"], "answer": ["2"]}).to_parquet(raw)
    args[3] = f"data.train_files={raw}"
    with pytest.raises(SystemExit) as info:
        main_ppo(["--dry-run", *args])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "Traceback" not in err
    assert (f"data.train_files={raw}: missing column(s) ['prompt', 'data_source', 'reward_model'] (it has "
            "['answer', 'problem'])") in err and "verl-focal prep-data deepscaler --source FILE" in err


def test_a_validation_parquet_whose_choice_answers_are_not_letters_is_refused_at_start_up(tmp_path, capsys):
    """Issue 39 row 8, for training: a GPQA ground truth in text form would make the scorer raise at the first
    validation, after the model loaded; the dry run names the file, the row and the fix.  Letter rows pass."""
    import pandas as pd

    from verl_focal.main_ppo import main as main_ppo

    args = _example_args(tmp_path)
    rows = [{"prompt": [{"role": "user", "content": "Q?"}], "data_source": "verl_focal/gpqa_diamond",
             "reward_model": {"style": "rule", "ground_truth": truth}} for truth in ("(B)", "Paris")]
    val = tmp_path / "gpqa.parquet"
    pd.DataFrame(rows).to_parquet(val)
    args[4] = f"data.val_files=[{val}]"
    with pytest.raises(SystemExit) as info:
        main_ppo(["--dry-run", *args])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "Traceback" not in err
    assert (f"data.val_files[0]={val}: row 1 (verl_focal/gpqa_diamond): a multiple-choice ground truth must be the "
            "option letter (A-J), got 'Paris'; make the set with `verl-focal prep-data eval`") in err


@pytest.mark.parametrize("argv,needle", [
    (["trainer=fully_async"], "--trainer fully_async"),
    (["adv_estimator=grpo"], "did you mean 'algorithm.adv_estimator'"),
    (["+algorithm.f_grpo_gamma=1.0"], "write algorithm.focal.gamma=1.0"),
    (["custom_reward_function.path=pkg://verl_focal.reward"], "a legacy key"),
])
def test_main_ppo_dry_run_refuses_unread_keys_in_one_line(argv, needle, capsys):
    from verl_focal.main_ppo import main as main_ppo

    with pytest.raises(SystemExit) as info:
        main_ppo(["--dry-run", *OK, *argv])
    err = capsys.readouterr().err
    assert info.value.code == 2 and needle in err and "Traceback" not in err and "use +" not in err


@pytest.mark.parametrize("override", [
    "+reward.custom_reward_function.reward_kwargs.rel_tol=0.001",  # a user reward function's kwargs: free keys
    "+data.apply_chat_template_kwargs.enable_thinking=true",  # the Qwen3 preset's key
    "+ray_kwargs.ray_init.num_gpus=1",
])
def test_added_keys_where_verl_takes_free_keys_are_not_refused(override, capsys):
    assert main(["check", "--skip-probe", *OK, override]) == 0
    assert "verl's config has no" not in capsys.readouterr().err


def test_an_added_key_outside_the_refused_sections_is_one_warning():
    from verl_focal.integration.startup.compose import compose_config
    from verl_focal.integration.startup.unread import check_unread

    ov = [*OK, "+actor_rollout_ref.rollout.enable_prefix_cachng=false"]
    assert check_unread(compose_config(ov), ov) == [
        "+actor_rollout_ref.rollout.enable_prefix_cachng is not a key of verl's config (did you mean "
        "'actor_rollout_ref.rollout.enable_prefix_caching'?): only code that looks it up by name reads it"]


def test_new_namespaces_of_ours_are_known_without_a_list():
    """The did-you-mean reads the estimators' specs and our schema: every estimator's prefix maps to its section."""
    import dataclasses

    from verl_focal.config.key_names import plain as _plain
    from verl_focal.config.key_names import suggest_key
    from verl_focal.config.schema import SECTIONS
    from verl_focal.estimators import all_specs, sections_by_estimator
    from verl_focal.integration.startup.compose import compose_config

    tree = _plain(compose_config([]))
    for spec in all_specs():
        for section in spec.sections:
            key = dataclasses.fields(SECTIONS[section])[0].name
            assert suggest_key(f"algorithm.{spec.name}_{key}", tree, estimators=sections_by_estimator()) == (
                f"algorithm.{section}.{key}"), spec.name


def _readme_main_ppo_line(path: str) -> list[str]:
    """The overrides of the doc's first ``python -m verl_focal.main_ppo`` command (continuation lines joined)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / path).read_text(encoding="utf-8")
    start = text.index("python -m verl_focal.main_ppo algorithm.adv_estimator=f_grpo")
    cmd = []
    for line in text[start:].splitlines():
        code = line.split("#", 1)[0].rstrip()
        cmd.append(code.rstrip("\\"))
        if not code.endswith("\\"):
            break
    return " ".join(cmd).split()[3:]


@pytest.mark.parametrize("doc", ["README.md", "docs/usage.md"])
def test_the_readmes_main_ppo_dry_run_passes_as_written_and_an_unset_mandatory_value_is_refused(doc, tmp_path,
                                                                                                capsys):
    """Issue 45: the README's `main_ppo --dry-run` line left actor_rollout_ref.rollout.name at ??? and passed; verl
    raises MissingMandatoryValue only after ray.init.  Its `...` filled with example files and a hub name, the line
    passes; without the engine it is refused, naming the key and the value to set."""
    from verl_focal.data.example import write_example
    from verl_focal.main_ppo import main as main_ppo

    write_example(str(tmp_path / "ex"), train_rows=4, val_rows=2, models=("Qwen/Qwen2.5-7B",))
    fill = {"data.train_files=...": f"data.train_files={tmp_path}/ex/deepscaler/qwen2.5-7b.parquet",
            "actor_rollout_ref.model.path=...": "actor_rollout_ref.model.path=Qwen/Qwen2.5-7B"}
    argv = [fill.get(a, a) for a in _readme_main_ppo_line(doc)] + [
        f"data.val_files=[{tmp_path}/ex/eval/aime24.parquet]", "trainer.logger=[console]"]
    assert "actor_rollout_ref.rollout.name=vllm" in argv and "..." not in " ".join(argv)
    with pytest.raises(SystemExit) as info:
        main_ppo(["--dry-run", *argv])
    assert info.value.code == 0, capsys.readouterr().err[-2000:]
    assert "\n    name: vllm\n" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        main_ppo(["--dry-run", *[a for a in argv if not a.startswith("actor_rollout_ref.rollout.name=")]])
    err = capsys.readouterr().err
    assert info.value.code == 2 and [ln for ln in err.strip().splitlines() if "--debug" not in ln] == [
        "python -m verl_focal.main_ppo: error: mandatory value(s) left unset (???): actor_rollout_ref.rollout.name; "
        "verl would stop with MissingMandatoryValue after Ray starts: set actor_rollout_ref.rollout.name=vllm (or "
        "sglang), the rollout engine"]


def test_a_launch_refuses_an_unset_mandatory_value_before_ray(tmp_path, capsys, monkeypatch):
    """The launch path (no --dry-run) runs the same check before Hydra's main and Ray; a reward model's engine name
    is mandatory only with the reward model on."""
    from verl_focal.integration.preflight import compose_config
    from verl_focal.integration.startup.mandatory import missing_mandatory
    from verl_focal.main_ppo import main as main_ppo

    monkeypatch.setattr("verl_focal.main_ppo._hydra_main", lambda: pytest.fail("reached Hydra's main"))
    with pytest.raises(SystemExit) as info:
        main_ppo([*OK, "trainer.logger=[console]"])
    assert info.value.code == 2 and "(???): actor_rollout_ref.rollout.name;" in capsys.readouterr().err
    assert missing_mandatory(compose_config(["actor_rollout_ref.rollout.name=vllm"])) == []
    assert missing_mandatory(compose_config(["actor_rollout_ref.rollout.name=vllm", "reward.reward_model.enable=true"])
                             ) == ["reward.reward_model.rollout.name"]


def test_check_names_an_unset_mandatory_value_and_its_fix_works():
    """`check` takes configs that name no engine yet, so it warns rather than refuses; the warning names the key and
    the setting that the dry run then accepts (the hint is a promise: with it set, the line is gone)."""
    from verl_focal.check import validate_here

    base = [*OK, "trainer.logger=[console]"]
    warned = [w for w in validate_here(base)["warnings"] if "(???)" in w]
    assert warned == ["mandatory value(s) left unset (???): actor_rollout_ref.rollout.name; a --dry-run and a launch "
                      "refuse this config until you set actor_rollout_ref.rollout.name=vllm (or sglang), the rollout "
                      "engine"]
    fixed = validate_here([*base, "actor_rollout_ref.rollout.name=vllm"])
    assert not fixed["problems"] and not [w for w in fixed["warnings"] if "(???)" in w]


def test_a_launch_never_resumes_from_another_runs_checkpoints(tmp_path, capsys, monkeypatch):
    """Issue 45: with resume_mode=auto the later "seeds" of a seed loop sharing one folder resumed from the first
    run's checkpoint.  A launch records its configuration next to the checkpoints; a later launch (or dry run) of
    another configuration into a folder with checkpoints is refused, naming the differing keys and the fix; the same
    configuration resumes; resume_mode=disable starts afresh; a dry run never writes the record."""
    from verl_focal.integration.startup.run_identity import RECORD
    from verl_focal.main_ppo import main as main_ppo

    launched = []
    monkeypatch.setattr("verl_focal.main_ppo._hydra_main", lambda: launched.append(1))
    monkeypatch.setenv("VERL_FOCAL_ALLOW_EXAMPLE_DATA", "1")
    ckpt = tmp_path / "ckpt" / "grpo_s42"
    args = [*_example_args(tmp_path), "trainer.logger=[console]", f"trainer.default_local_dir={ckpt}"]

    def launch(*extra, dry=False):
        try:
            main_ppo([*(["--dry-run"] if dry else []), *args, *extra])
        except SystemExit as e:
            return e.code, capsys.readouterr().err
        return 0, capsys.readouterr().err

    assert launch("data.seed=42", dry=True)[0] == 0 and not ckpt.exists()  # a dry run writes nothing
    assert launch("data.seed=42")[0] == 0 and launched == [1]
    record = json.loads((ckpt / RECORD).read_text())
    assert record["identity"]["data.seed"] == 42 and record["identity"]["algorithm.adv_estimator"] == "f_grpo"
    (ckpt / "global_step_10").mkdir()  # verl saved a checkpoint
    (ckpt / "latest_checkpointed_iteration.txt").write_text("10")
    for dry in (True, False):
        code, err = launch("data.seed=7", dry=dry)
        msg = next(ln for ln in err.splitlines() if "error:" in ln)
        assert code == 2 and msg == (
            f"python -m verl_focal.main_ppo: error: trainer.default_local_dir={ckpt} holds checkpoints of another run "
            f"({ckpt / RECORD}): data.seed: 42 there, 7 here; with trainer.resume_mode=auto this run would resume "
            "from that run's checkpoint: give this run its own folder (trainer.experiment_name and "
            "trainer.default_local_dir; recipes: EXP_NAME, or SEED, which names the folder), or set "
            "trainer.resume_mode=disable to start afresh there")
    code, err = launch("algorithm.adv_estimator=grpo")
    assert code == 2 and ('algorithm.adv_estimator: f_grpo there, grpo here; algorithm.focal: {"acc_key": "acc", '
                          '"base": "grpo"') in err
    assert "there, not read here; data.seed: 42 there, null here" in err  # no seed given: verl's null
    assert launch("data.seed=42")[0] == 0 and len(launched) == 2  # the same run resumes
    assert launch("data.seed=7", "trainer.resume_mode=disable")[0] == 0 and len(launched) == 3  # the fix passes
    assert json.loads((ckpt / RECORD).read_text())["identity"]["data.seed"] == 7
    assert launch("data.seed=7")[0] == 0  # and is now this folder's run
    other = tmp_path / "ckpt" / "grpo_s8"
    assert launch("data.seed=8", f"trainer.default_local_dir={other}")[0] == 0  # the other fix: its own folder


def test_checkpoints_without_a_record_are_one_warning_and_a_dry_run_writes_nothing(tmp_path):
    from verl_focal.integration.preflight import compose_config
    from verl_focal.integration.startup.run_identity import RECORD, check_run_identity

    (tmp_path / "global_step_3").mkdir()
    cfg = compose_config([f"trainer.default_local_dir={tmp_path}", "data.seed=1"])
    assert check_run_identity(cfg, write=False) == [
        f"trainer.default_local_dir={tmp_path} holds checkpoints without a {RECORD} (written before verl-focal "
        "recorded runs): trainer.resume_mode=auto resumes from them whatever run wrote them"]
    assert not (tmp_path / RECORD).exists()


@pytest.mark.parametrize("extra,needle", [
    (["actor_rollout_ref.rollout.name=vllm", "algorithm.adv_estimator=grpo",
      "actor_rollout_ref.actor.kl_loss_coef=0.001"],
     "actor_rollout_ref.actor.kl_loss_coef=0.001 is not read under this configuration"),
    ([], "(???): actor_rollout_ref.rollout.name;"),
])
def test_a_launch_with_hydras_own_flags_runs_the_same_checks_before_ray(tmp_path, extra, needle):
    """A launch that passes Hydra's own flags (here ``hydra.run.dir=...``, which users set to place the run's
    files) is composed by Hydra, not by us before it; it used to skip the launch checks (an unread key, a
    mandatory value left at ???) and start Ray.  It is refused in one line, exit 2, before Ray: no Ray session
    folder is made under the run's temporary directory."""
    proc = _py("-m", "verl_focal.main_ppo", f"hydra.run.dir={tmp_path / 'run'}", *OK, "trainer.logger=[console]",
               *extra, env={"RAY_TMPDIR": str(tmp_path / "ray")})
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("python -m verl_focal.main_ppo: error")]
    assert len(lines) == 1 and needle in lines[0], proc.stderr[-2000:]
    assert not (tmp_path / "ray").exists()


def test_resuming_from_a_chosen_checkpoint_of_another_run_is_named_in_a_warning(tmp_path):
    """resume_mode=resume_path: the user chose the checkpoint, so another configuration there is a warning naming
    the differing keys (not a refusal); the same configuration, or a checkpoint with no record, is silent."""
    from verl_focal.integration.startup.compose import compose_config
    from verl_focal.integration.startup.run_identity import RECORD, check_run_identity

    run = tmp_path / "grpo_s42"
    check_run_identity(compose_config([f"trainer.default_local_dir={run}", "data.seed=42"]), write=True)
    (run / "global_step_10").mkdir()
    step = run / "global_step_10"

    def lines(seed, where=step):
        return check_run_identity(compose_config([f"trainer.default_local_dir={tmp_path / 'new'}", f"data.seed={seed}",
                                                  "trainer.resume_mode=resume_path",
                                                  f"trainer.resume_from_path={where}"]), write=False)

    assert lines(7) == [f"trainer.resume_from_path={step} is a checkpoint of a run with another configuration "
                        f"({run / RECORD}): data.seed: 42 there, 7 here; this run resumes from it as asked"]
    assert lines(42) == []
    assert lines(7, tmp_path / "elsewhere" / "global_step_1") == []
