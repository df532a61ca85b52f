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
