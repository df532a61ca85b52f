"""Every ``verl-focal check`` line of the README and docs, and ``check -h``'s example, passes as written on a fresh
machine: no W&B key, no rollout engine installed (this suite's .venv has none), nothing but the line itself."""

from __future__ import annotations

import shlex

import pytest
from test_docs_commands import CLI

from verl_focal.check import EXAMPLE
from verl_focal.cli import main

CHECK_LINES = [(where, argv[1:]) for where, argv in CLI if argv[:1] == ["check"] and "..." not in argv]


@pytest.fixture
def fresh_machine(monkeypatch, tmp_path):
    for var in ("WANDB_API_KEY", "WANDB_MODE", "WANDB_DISABLED", "WANDB_CONFIG_DIR", "NETRC"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)


def test_the_docs_cite_check_lines():
    assert len(CHECK_LINES) >= 2, CHECK_LINES


@pytest.mark.parametrize("where,argv", CHECK_LINES, ids=[w for w, _ in CHECK_LINES])
def test_a_cited_check_line_passes_as_written(where, argv, fresh_machine, capsys):
    assert main(["check", "--skip-probe", *argv]) == 0, (where, capsys.readouterr().err)


def test_check_help_shows_an_example_that_passes(fresh_machine, capsys):
    with pytest.raises(SystemExit):
        main(["check", "-h"])
    assert "example:" in capsys.readouterr().out
    argv = shlex.split(EXAMPLE.replace("\\\n", " "))
    assert argv[:2] == ["verl-focal", "check"]
    assert main(["check", "--skip-probe", *argv[2:]]) == 0, capsys.readouterr().err
