"""The lab's commands without the ``[lab]`` extra: one line naming the pip command, exit 2, before any work.

The extra is simulated missing in a fresh interpreter by a ``sys.meta_path`` finder that refuses matplotlib (as an
uninstalled package would); the training commands are not affected.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import tomllib

from verl_focal.cli import COMMANDS, LAB_EXTRA, lab_extra_error

ROOT = Path(__file__).resolve().parents[2]
LAB_COMMANDS = sorted(n for n, (mod, _) in COMMANDS.items() if mod.startswith("verl_focal.lab."))

_BLOCKED = """
import json, sys

class Block:  # matplotlib is not installed
    def find_spec(self, name, path=None, target=None):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Block())
from verl_focal.cli import main

out = {}
for argv in ARGVS:
    try:
        rc = main(argv)
    except SystemExit as e:
        rc = e.code
    out[" ".join(argv)] = rc
out["loaded"] = sorted(m for m in sys.modules if m.startswith("verl_focal.lab") or m.startswith("matplotlib"))
print(json.dumps(out))
"""


def _extras() -> dict[str, list[str]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def test_the_cli_names_the_extra_pyproject_declares_and_the_tests_install_it():
    dists = {re.split(r"[<>=!~; \[]", req, maxsplit=1)[0] for req in _extras()["lab"]}
    assert dists == set(LAB_EXTRA.values())
    assert "verl-focal[lab]" in _extras()["test"]  # `make test` (and `make demo`, which installs .[test]) has it
    base = {re.split(r"[<>=!~; \[]", req, maxsplit=1)[0] for req in
            tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]}
    assert not base & dists, "the lab's packages are not base dependencies"


def test_with_the_extra_installed_no_command_is_refused():
    assert LAB_COMMANDS == ["agreement", "demo", "eval", "sim", "tail-miss"]
    assert all(lab_extra_error(n) is None for n in COMMANDS)


def test_without_matplotlib_each_lab_command_says_which_pip_install_to_run_in_one_line():
    argvs = [[n, "--quick"] if n == "demo" else [n] for n in LAB_COMMANDS] + [["cues", "-h"]]
    code = _BLOCKED.replace("ARGVS", repr(argvs))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("verl-focal ")]
    assert lines == [f"verl-focal {n}: error: this command is part of the lab and needs its extra (matplotlib not "
                     "installed); run: pip install 'verl-focal[lab]'" for n in LAB_COMMANDS], r.stderr[-2000:]
    assert {a: rc for a, rc in out.items() if a != "loaded"} == {**{" ".join(a): 2 for a in argvs[:-1]}, "cues -h": 0}
    assert out["loaded"] == []  # refused before the command's module (or matplotlib) is imported
