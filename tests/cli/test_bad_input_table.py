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
    (["check", "--skip-probe", *OK, "algorithm.cue.alpha=-2.0"],
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
    # demo
    (["demo", "--steps", "0"], ["--steps=0"]),
    (["demo", "--quick", "--device", "cuda"], ["--quick and --device cuda"]),
    (["demo", "--device", "tpu"], ["--device", "tpu"]),
    # cues
    (["cues", "{d}/nope.txt"], ["nope.txt"]),
    (["cues", "{d}/trace.txt", "--cue-set", "nosuch_set"], ["nosuch_set"]),
    (["cues", "{d}/trace.txt", "--epsilon", "0"], ["epsilon"]),
    # agreement
    (["agreement", "{d}/nope.jsonl", "--model", "m"], ["nope.jsonl"]),
    (["agreement", "{d}/bad.jsonl", "--model", "m"], ["bad.jsonl:1"]),
    (["agreement", "{d}/groups.jsonl", "--model", "m", "--base-url", DEAD_URL], [DEAD_URL, "unreachable"]),
    (["agreement", "{d}/groups.jsonl", "--model", "m", "--against", "strategy_cues"],
     ["'strategy_cues'", "did you mean 'strategy_cue'"]),
    # sim
    (["sim", "--n-actions", "10", "--n-correct", "20", "--no-progress"], ["n_correct"]),
    (["sim", "--n-grid", "x..y", "--no-progress"], ["x..y"]),
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
    # eval
    (["eval", "score", "--runs", "{d}/empty", "--out", "{d}/o"], ["--runs", "empty", "holds no"]),
    (["eval", "score", "--runs", "{d}/nope", "--out", "{d}/o"], ["--runs", "nope", "no such folder"]),
    (["eval", "score", "--runs", "{d}/runs", "--baseline", "grpp", "--out", "{d}/o"],
     ["--baseline 'grpp'", "did you mean 'grpo'"]),
    (["eval", "report", "--run", "noequals", "--out", "{d}/o"], ["--run 'noequals'", "NAME=PATH"]),
    (["eval", "generate", "--data", "{d}/nope.parquet", "--model", "{d}/model", "--out", "{d}/g.jsonl"],
     ["--data", "nope.parquet", "no such file"]),
    (["eval", "generate", "--data", "{d}/bad.json", "--model", "/no/such/model", "--out", "{d}/g.jsonl"],
     ["--model /no/such/model", "no such folder"]),
    (["eval", "generate", "--data", "{d}/bad.json", "--model", "{d}/model", "--out", "{d}/g.jsonl"], ["config.json"]),
    (["eval", "rare-nll", "--rare-set", "{d}/nope.jsonl", "--model", "{d}/model"], ["--rare-set", "nope.jsonl"]),
    (["eval", "rare-set", "--generations", "{d}/nope.jsonl", "--model", "/no/such/model", "--out", "{d}/r.jsonl"],
     ["--model /no/such/model"]),
    # the top level
    (["no-such-command"], ["no-such-command"]),
]

#: every command of the CLI appears at least three times
_COUNTS = {}
for _argv, _ in CASES:
    _COUNTS[_argv[0]] = _COUNTS.get(_argv[0], 0) + 1


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


def test_debug_shows_the_traceback_and_a_bug_keeps_it(files, capsys, monkeypatch):
    assert main(["tail-miss", "--mu", "1.5", "--tau", "0.1", "--debug"]) == 2
    assert "Traceback" in capsys.readouterr().err
    monkeypatch.setenv("VERL_FOCAL_DEBUG", "1")
    assert main(["eval", "score", "--runs", str(files / "empty"), "--out", str(files / "o")]) == 2
    assert "Traceback" in capsys.readouterr().err
    monkeypatch.delenv("VERL_FOCAL_DEBUG")
    import verl_focal.theory.cli_tail_miss as tm

    def boom(*a, **k):
        raise ZeroDivisionError("a bug of ours")

    monkeypatch.setattr(tm, "tail_miss_probability", boom)
    with pytest.raises(ZeroDivisionError):  # not a user error: the traceback stays
        main(["tail-miss", "--mu", "0.5", "--tau", "0.1"])


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
    ],
)
def test_main_ppo_dry_run_refuses_in_one_line(argv, needle, capsys):
    from verl_focal.main_ppo import main as main_ppo

    with pytest.raises(SystemExit) as info:
        main_ppo(["--dry-run", *argv])
    err = capsys.readouterr().err
    assert info.value.code == 2 and needle in err and "Traceback" not in err and "use +" not in err


def test_main_ppo_real_run_refuses_before_ray_in_one_line():
    """The real entry point in a fresh process, without --dry-run: refused by our check, Ray never starts."""
    proc = _py("-m", "verl_focal.main_ppo", "algorithm.adv_estimator=cue_grpo",
               "algorithm.cue.partitioner=strategy_cues")
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "did you mean 'strategy_cue'" in proc.stderr
    assert "engine is not available" not in proc.stderr  # quiet start-up
    assert "Started a local Ray instance" not in proc.stderr + proc.stdout
