#!/usr/bin/env bash
# Fill .gpu/ (git-ignored) with what the GPU run carries: the wheels of gpu/wheels.txt for the H200's Python 3.12,
# verl-focal's own wheel (its entry point and package data), and Ray (gpu/ray.txt) unpacked, trimmed and packed as
# .gpu/ray.tar.xz. Run here, where PyPI is reachable; then the one device call is the command in docs/gpu.md.
# Refuses a bundle over 60 MiB (a device call carries at most 64). PYVER=3.11: the same for this machine's Python,
# for the CPU rehearsal (gpu/rehearse.sh), which sets GPU_DIR=.gpu-cpu so that .gpu keeps what the device call carries.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
PYVER=${PYVER:-3.12}
GPU_DIR=${GPU_DIR:-.gpu}
rm -rf "$GPU_DIR/wheels" "$GPU_DIR/ray.tar.xz"
mkdir -p "$GPU_DIR/wheels"
# download DIR SPEC: the binary wheel of SPEC for the target Python (PYVER) and Linux x86-64, without its requirements
download() {
    "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version "$PYVER" --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d "$1" "$2"
}
for spec in $(grep -v '^#' gpu/wheels.txt | grep .); do
    download "$GPU_DIR/wheels" "$spec" 2>/dev/null && continue
    # a release published as a source archive only (antlr4-python3-runtime 4.9.3): build it here, pure Python only
    "$PY" -m pip wheel -q --no-deps -w "$GPU_DIR/wheels" "$spec" 2>/dev/null
    name=$(echo "${spec%%==*}" | tr '-' '_')
    ls "$GPU_DIR/wheels" | grep -qi "^${name}-.*-py3-none-any.whl$" || {
        echo "gpu/fetch_wheels.sh: error: no cp${PYVER/./} manylinux or pure-Python wheel of $spec" >&2; exit 2; }
done
"$PY" -m pip wheel -q --no-deps -w "$GPU_DIR/wheels" .
# Ray: the wheel unpacked (unzip keeps the executables' modes), the folders gpu/ray.txt names removed, then xz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
download "$tmp" "$(grep '^ray==' gpu/ray.txt)"
unzip -q "$tmp"/ray-*.whl -d "$tmp/tree"
for d in $(sed -n 's/^-//p' gpu/ray.txt); do
    [ -e "$tmp/tree/$d" ] || { echo "gpu/fetch_wheels.sh: error: gpu/ray.txt removes $d, which the wheel lacks" >&2; exit 2; }
    rm -rf "${tmp:?}/tree/$d"
done
XZ_OPT=-9T0 tar -C "$tmp/tree" -cJf "$GPU_DIR/ray.tar.xz" .
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
ray_bytes=$(stat -c %s "$GPU_DIR/ray.tar.xz")
wheel_bytes=$(cat "$GPU_DIR"/wheels/*.whl | wc -c)
tree_bytes=$(du -sb "$tmp/tree" | cut -f1)
echo "gpu/fetch_wheels.sh: $(ls "$GPU_DIR/wheels" | wc -l) wheels ($(mib "$wheel_bytes") MiB) and Ray" \
     "($(mib "$ray_bytes") MiB; $(mib "$tree_bytes") MiB unpacked) in $GPU_DIR/"
mib=$(( (ray_bytes + wheel_bytes + 1048575) / 1048576 ))
if [ "$mib" -gt 60 ]; then
    echo "gpu/fetch_wheels.sh: error: ${mib} MiB in $GPU_DIR/ is over the 60 MiB budget of one device call" >&2
    exit 2
fi
