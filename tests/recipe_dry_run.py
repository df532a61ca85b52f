"""A recipe's ``--dry-run`` with its last step in the test process.

``bash recipes/deepscaler/<script> --dry-run`` runs as a user runs it (its checks of the variables and the data,
its own ``python -c`` helpers) up to its ``exec $PYTHON -m verl_focal.main_ppo --dry-run ...``; that argv is
recorded by a stand-in ``PYTHON`` and run through ``verl_focal.main_ppo.main`` in this process, in the script's
environment and folder.  A fresh interpreter would spend 10-15 s importing verl for each dry run; the tests that
exec it for real are ``tests/recipes/test_recipes_on_cpu.py``'s ``test_dry_run_end_to_end``, the example-data
one and the README's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def dry_run(script: Path, env: dict[str, str], tmp_path: Path, capsys, monkeypatch, args: tuple[str, ...] = (),
            cwd: Path | None = None) -> tuple[int, str, str]:
    """``bash script --dry-run args...`` with exactly ``env``: (exit code, stdout, stderr) of the script and, when
    it got as far as the launch line, of ``main_ppo.main`` with that line's argv (``env`` and ``cwd`` applied
    with ``monkeypatch`` meanwhile)."""
    from verl_focal.main_ppo import main as main_ppo

    argv_file = tmp_path / f"{script.name}.argv"
    stub = tmp_path / "python"  # the recipe helper's PYTHON: records the launch line, runs everything else
    stub.write_text(f'#!/usr/bin/env bash\nif [ "$1 $2" = "-m verl_focal.main_ppo" ]; then\n'
                    f'  shift 2; printf "%s\\n" "$@" > "{argv_file}"; exit 0\nfi\nexec "{sys.executable}" "$@"\n')
    stub.chmod(0o755)
    argv_file.unlink(missing_ok=True)
    r = subprocess.run(["bash", str(script), "--dry-run", *args], env={**env, "PYTHON": str(stub)},
                       capture_output=True, text=True, timeout=120, cwd=cwd)
    if r.returncode != 0:
        return r.returncode, r.stdout, r.stderr
    argv = argv_file.read_text().splitlines()
    assert argv[0] == "--dry-run", argv
    for k in set(os.environ) - set(env):
        monkeypatch.delenv(k)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    if cwd is not None:
        monkeypatch.chdir(cwd)
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main_ppo(argv)
    out, err = capsys.readouterr()
    return info.value.code, r.stdout + out, r.stderr + err
