#!/usr/bin/env bash
# The GPU run on the device machine, with .gpu/ carried (gpu/fetch_wheels.sh). Parts 0-4: the smoke (gpu/smoke.py),
# with the carried wheels in /tmp/site and gpu/stub standing in for Ray. Part 5: verl's real trainer under the real
# Ray (unpacked from .gpu/ray.tar.xz), two steps each of f_grpo and cue_grpo (gpu/trainer.py). Each part runs under
# its own time limit, so one hang cannot take the others. Writes $OUT/part<N>.json (OUT defaults to /tmp/smoke) and
# part 5's logs under $OUT/trainer/. Exit 0 when every part passed.
# Settings: DEVICE (cuda; cpu for the rehearsal), SMALL=1 (the smoke's small sizes), PARTS ("0 1 2 3 4 5"),
# GPU_DIR (.gpu), PYTHON (python3), SITE (/tmp/site).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/smoke}
GPU_DIR=${GPU_DIR:-.gpu}
PY=${PYTHON:-python3}
SITE=${SITE:-/tmp/site}
PARTS=${PARTS:-0 1 2 3 4 5}
DEVICE=${DEVICE:-cuda}
mkdir -p "$OUT"
# a reused OUT (the rehearsal's /tmp/rehearsal): no earlier run's result may stand for a part that writes none
rm -f "$OUT"/part[0-5].json "$OUT/trainer/part5.json"
nvidia-smi -L || true
start=$(date +%s)
t0=$start
"$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" \
    "$GPU_DIR"/wheels/*.whl || { echo "gpu/run.sh: installing the carried wheels failed" >&2; exit 3; }
echo "gpu/run.sh: carried wheels installed in $(( $(date +%s) - t0 )) s"
export PYTHONUNBUFFERED=1
rc=0
# part:seconds, the caps of docs/gpu.md
for part in 0:60 1:90 2:120 3:90 4:45 5:480; do
    p=${part%%:*}
    case " $PARTS " in *" $p "*) ;; *) continue ;; esac
    if [ "$p" = 5 ]; then
        t0=$(date +%s)
        # Python's tarfile (its lzma), not tar -J: the image need not have xz; the modes (Ray's executables) stay
        "$PY" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter="data")' \
            "$GPU_DIR/ray.tar.xz" "$SITE-ray" || { echo "gpu/run.sh: unpacking Ray failed" >&2; rc=1; continue; }
        echo "gpu/run.sh: Ray unpacked in $(( $(date +%s) - t0 )) s"
        PYTHONPATH="$SITE-ray:$SITE" timeout "${part##*:}" "$PY" gpu/trainer.py --device "$DEVICE" --out "$OUT/trainer" \
            || { echo "gpu/run.sh: part 5 failed or ran past ${part##*:} s"; rc=1; }
        cp "$OUT/trainer/part5.json" "$OUT/part5.json" 2>/dev/null
        continue
    fi
    PYTHONPATH="$SITE:$PWD/gpu/stub" timeout "${part##*:}" "$PY" gpu/smoke.py --device "$DEVICE" --parts "$p" \
        --out "$OUT/part$p.json" ${SMALL:+--small} || { echo "gpu/run.sh: part $p failed or ran past ${part##*:} s"; rc=1; }
done
echo "gpu/run.sh: parts $PARTS in $(( $(date +%s) - start )) s, install included; exit $rc"
exit $rc
