"""Extract the trainer command lines of verl's own launch scripts, for the corpus test (test_verl_examples.py).

Each script runs under bash with its commands stubbed: ``python``/``python3`` record their argv and exit 0 (``-c``
probes such as ``import torch_npu`` exit 1, as on a machine without an NPU), and the other tools the scripts call
(``nvidia-smi``, ``hf``, ``wget``...) are no-ops; launchers (``uv run``, ``ray job submit --``) run the
command they wrap.  Every call of a trainer entry point (verl's
``main_ppo``, the one-step-off and fully-async mains) is kept with its overrides as the script built them.

    python tests/startup/verl_examples/extract.py VERL_CHECKOUT > tests/startup/verl_examples/corpus.json

VERL_CHECKOUT: a checkout of verl's repository (its ``examples/`` and ``verl/experimental/*/shell/``).  The corpus
names the commit it was read from.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

COMMAND = "python tests/startup/verl_examples/extract.py VERL_CHECKOUT > tests/startup/verl_examples/corpus.json"
#: the trainer entry points whose command lines are kept, and the trainer each is (our --trainer)
ENTRIES = {
    "verl.trainer.main_ppo": "ppo",
    "verl.experimental.one_step_off_policy.main_ppo": "one_step_off",
    "verl.experimental.fully_async_policy.fully_async_main": "fully_async",
}
STUBBED = ("nvidia-smi", "hf", "huggingface-cli", "wget", "curl", "pip", "pip3", "modelscope", "git",
           "sleep", "ulimit", "ibstat", "npu-smi", "rocm-smi", "hostname", "nproc")

#: launchers that run a command of theirs: ``uv run ... python3 ...`` and ``ray job submit ... -- python3 ...`` run
#: the command from its ``python``/``--`` on
LAUNCHER_STUB = """#!/usr/bin/env bash
while [ $# -gt 0 ]; do
  case "$1" in python|python3) exec "$@";; --) shift; exec "$@";; esac
  shift
done
exit 0
"""
PYTHON_STUB = """#!/usr/bin/env bash
if [ "$1" = "-c" ]; then exit 1; fi
printf '%s\\0' "$@" >> "$RECORD"
printf '\\n\\0' >> "$RECORD"
exit 0
"""


def scripts(root: Path) -> list[Path]:
    found = sorted((root / "examples").rglob("*.sh")) + sorted((root / "verl" / "experimental").rglob("shell/*.sh"))
    return [p for p in found if "/sft/" not in str(p) and "npu" not in p.name.lower() and "ascend" not in str(p)]


def run(script: Path, root: Path, stub_dir: Path) -> list[list[str]]:
    record = stub_dir / "record"
    record.write_bytes(b"")
    env = {"PATH": f"{stub_dir}:/usr/bin:/bin", "HOME": "/home/user", "RECORD": str(record), "DEVICE": "gpu"}
    try:
        subprocess.run(["bash", str(script)], cwd=root, env=env, capture_output=True, timeout=20)
    except subprocess.TimeoutExpired:
        pass
    calls, current = [], []
    for part in record.read_bytes().split(b"\0"):
        if part == b"\n":
            calls.append(current)
            current = []
        elif part:
            current.append(part.decode())
    out = []
    for argv in calls:
        if "-m" in argv and argv[argv.index("-m") + 1] in ENTRIES:
            i = argv.index("-m")  # the checkout's own path (a script's $(pwd)) is written as /VERL_CHECKOUT
            out.append([ENTRIES[argv[i + 1]], *(a.replace(str(root), "/VERL_CHECKOUT") for a in argv[i + 2:])])
    return out


def main(root: str) -> None:
    root_path = Path(root).resolve()
    commit = subprocess.run(["git", "-C", str(root_path), "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or os.environ.get("VERL_COMMIT", "?")
    with tempfile.TemporaryDirectory() as d:
        stub_dir = Path(d)
        for name in ("python", "python3"):
            (stub_dir / name).write_text(PYTHON_STUB)
        (stub_dir / "date").write_text("#!/usr/bin/env bash\necho 20260822_0000\n")  # run names stay fixed
        for name in ("uv", "ray", "torchrun"):
            (stub_dir / name).write_text(LAUNCHER_STUB)
        for name in STUBBED:
            (stub_dir / name).write_text("#!/usr/bin/env bash\nexit 0\n")
        for f in stub_dir.iterdir():
            f.chmod(f.stat().st_mode | stat.S_IEXEC)
        corpus = {}
        for script in scripts(root_path):
            calls = run(script, root_path, stub_dir)
            if calls:
                corpus[str(script.relative_to(root_path))] = calls
    # one script a line, so that a later extraction diffs by script
    head = {"command": COMMAND, "verl_commit": commit}
    sys.stdout.write("{\n" + "".join(f" {json.dumps(k)}: {json.dumps(v)},\n" for k, v in head.items()))
    items = sorted(corpus.items())
    sys.stdout.write(' "scripts": {\n' + ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in items)
                     + "\n }\n}\n")

if __name__ == "__main__":
    main(sys.argv[1])
