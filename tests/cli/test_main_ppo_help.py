"""`python -m verl_focal.main_ppo -h`: our usage first (--dry-run, --trainer, `verl-focal check`), then Hydra's help."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _main_ppo(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "verl_focal.main_ppo", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_help_starts_with_our_usage_then_hydras():
    from verl_focal.main_ppo import USAGE

    r = _main_ppo("-h")
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith(USAGE)
    head = r.stdout[: len(USAGE)]
    assert head.splitlines()[0] == ("usage: python -m verl_focal.main_ppo [--dry-run] [--trainer "
                                    "{ppo,one_step_off,fully_async}] [--debug] [KEY=VALUE ...]")
    for needle in ("--dry-run", "--trainer NAME", "verl-focal check KEY=VALUE"):
        assert needle in head
    hydra = r.stdout[len(USAGE):]
    # then Hydra's help: the composed config
    assert hydra.startswith("\n\nHydra's help follows.\n") and "powered by Hydra" in hydra and "algorithm:" in hydra
    # with overrides, Hydra shows them applied; --dry-run is not run, nothing is started
    r = _main_ppo("--dry-run", "--help", "algorithm.focal.gamma=0.25")
    assert r.returncode == 0 and r.stdout.startswith(USAGE) and "gamma: 0.25" in r.stdout


def test_help_of_a_separated_trainer_is_ours_only():
    from verl_focal.main_ppo import USAGE

    r = _main_ppo("--trainer", "fully_async", "-h")
    assert r.returncode == 0 and r.stdout == USAGE + "\n"


def test_the_helps_example_passes_a_dry_run_with_the_inputs_it_says_to_add(tmp_path, capsys):
    """A hint is a promise: the example in our usage text, with the data files and model it says to add, passes
    the dry run (it named no engine and no micro-batch sizes, and failed)."""
    import shlex

    import pandas as pd
    import pytest

    from verl_focal.main_ppo import PROG, USAGE
    from verl_focal.main_ppo import main as main_ppo

    text = USAGE.split("example:", 1)[1].split("\n(", 1)[0].split("(add", 1)[0]
    argv = shlex.split(text.replace("\\\n", " "))
    assert argv[:3] == PROG.split() and "--dry-run" in argv
    train = tmp_path / "train.parquet"
    pd.DataFrame({"data_source": ["d"], "prompt": [[{"role": "user", "content": "1+1?"}]],
                  "reward_model": [{"ground_truth": "2"}]}).to_parquet(train)
    with pytest.raises(SystemExit) as info:
        main_ppo([*argv[3:], f"data.train_files={train}", f"data.val_files=[{train}]",
                  "actor_rollout_ref.model.path=Qwen/Qwen2.5-7B"])
    captured = capsys.readouterr()
    assert info.value.code == 0, captured.err[-2000:]
    assert "adv_estimator: f_grpo" in captured.out
