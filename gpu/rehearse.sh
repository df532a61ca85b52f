#!/usr/bin/env bash
# The GPU run rehearsed on this machine's CPU, the way the device call runs it (docs/gpu.md): a stand-in of the
# GPU machine's image (a venv of this machine's Python with torch's CPU build and gpu/image.txt, nothing else), the
# carried wheels and Ray fetched for this Python into .gpu-cpu/, then `DEVICE=cpu SMALL=1 bash gpu/run.sh` with the
# stand-in's Python: every part, the trainer runs included. Exit status: gpu/run.sh's.
# Settings: PYTHON (python3; 3.11 here, the Python of the local torch CPU wheel), IMAGE (/tmp/gpu-image: built once,
# kept), OUT (/tmp/rehearsal), PARTS (all).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
IMAGE=${IMAGE:-/tmp/gpu-image}
PYVER=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
if [ ! -f "$IMAGE/.built" ] || [ gpu/image.txt -nt "$IMAGE/.built" ]; then
    rm -rf "$IMAGE"
    "$PY" -m venv "$IMAGE"
    "$IMAGE/bin/python" -m pip install -q torch==2.13.0
    "$IMAGE/bin/python" -m pip install -q --no-deps -r gpu/image.txt
    touch "$IMAGE/.built"
fi
if [ ! -f .gpu-cpu/ray.tar.xz ] || [ gpu/wheels.txt -nt .gpu-cpu/ray.tar.xz ] || [ gpu/ray.txt -nt .gpu-cpu/ray.tar.xz ]; then
    PYVER=$PYVER GPU_DIR=.gpu-cpu bash gpu/fetch_wheels.sh
else  # our own wheel changes with every edit: rebuild it alone
    rm -f .gpu-cpu/wheels/verl_focal-*.whl
    .venv/bin/python -m pip wheel -q --no-deps -w .gpu-cpu/wheels .
fi
site=$(mktemp -d)
trap 'rm -rf "$site"' EXIT
DEVICE=cpu SMALL=1 GPU_DIR=.gpu-cpu PYTHON="$IMAGE/bin/python" SITE="$site/site" OUT="${OUT:-/tmp/rehearsal}" \
    bash gpu/run.sh
