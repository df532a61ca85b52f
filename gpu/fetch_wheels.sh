#!/usr/bin/env bash
# Fill .gpu/ (git-ignored) with what the GPU smoke carries: the wheels of gpu/wheels.txt for the H200's Python 3.12
# and verl-focal's own wheel (its entry point and package data). Run here, where PyPI is reachable; then the one
# device call is the command in docs/gpu.md. Refuses a bundle over 60 MiB (a device call carries at most 64).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
rm -rf .gpu/wheels
mkdir -p .gpu/wheels
for spec in $(grep -v '^#' gpu/wheels.txt | grep .); do
    "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d .gpu/wheels "$spec" 2>/dev/null && continue
    # a release published as a source archive only (antlr4-python3-runtime 4.9.3): build it here, pure Python only
    "$PY" -m pip wheel -q --no-deps -w .gpu/wheels "$spec" 2>/dev/null
    name=$(echo "${spec%%==*}" | tr '-' '_')
    ls .gpu/wheels | grep -qi "^${name}-.*-py3-none-any.whl$" || {
        echo "gpu/fetch_wheels.sh: error: no cp312 manylinux or pure-Python wheel of $spec" >&2; exit 2; }
done
"$PY" -m pip wheel -q --no-deps -w .gpu/wheels .
mib=$(du -sm .gpu | cut -f1)
echo "gpu/fetch_wheels.sh: $(ls .gpu/wheels | wc -l) wheels, ${mib} MiB in .gpu/"
if [ "$mib" -gt 60 ]; then
    echo "gpu/fetch_wheels.sh: error: ${mib} MiB is over the 60 MiB budget of one device call" >&2
    exit 2
fi
