"""`verl-focal eval -h` and `verl-focal -h` summarise eval with every sub-command it has, and every sub-command has its
own help line."""

from __future__ import annotations

from verl_focal.cli import main as cli_main
from verl_focal.lab.eval.cli import COMMANDS


def _help(argv: list[str]) -> int:
    try:
        return cli_main(argv)
    except SystemExit as e:
        return e.code


def test_eval_help_names_every_sub_command(capsys):
    assert _help(["eval", "-h"]) == 0
    out = capsys.readouterr().out
    summary = out.split("positional arguments")[0]
    for name in ("frontier", "plan", "families", "interpolate"):
        assert name in summary.split("\n\n", 1)[1], name  # in the description line, not only the usage
    body = out.split("positional arguments")[1]
    for name in COMMANDS:
        assert f"\n    {name} " in body, name  # each with its own help line
    assert _help(["-h"]) == 0
    top = capsys.readouterr().out
    line = next(ln for ln in top.splitlines() if ln.strip().startswith("eval "))
    assert all(name in line for name in ("frontier", "plan", "families", "interpolate"))
