#!/usr/bin/env bash
# The GPU smoke on the device machine, with .gpu/ carried (gpu/fetch_wheels.sh): the carried wheels go to
# /tmp/site, gpu/stub stands in for Ray, and each part of gpu/smoke.py runs under its own time limit, so one hang
# cannot take the others. Writes $OUT/part<N>.json (OUT defaults to /tmp/smoke). Exit 0 when every part passed.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/smoke}
mkdir -p "$OUT"
nvidia-smi -L || true
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    .gpu/wheels/*.whl || { echo "gpu/run.sh: installing the carried wheels failed" >&2; exit 3; }
export PYTHONPATH="/tmp/site:$PWD/gpu/stub" PYTHONUNBUFFERED=1
DEVICE=${DEVICE:-cuda}
rc=0
# part:seconds, the caps of docs/gpu.md
for part in 0:60 1:90 2:120 3:90 4:45; do
    p=${part%%:*}
    timeout "${part##*:}" python3 gpu/smoke.py --device "$DEVICE" --parts "$p" --out "$OUT/part$p.json" ${SMALL:+--small} \
        || { echo "gpu/run.sh: part $p failed or ran past ${part##*:} s"; rc=1; }
done
exit $rc
