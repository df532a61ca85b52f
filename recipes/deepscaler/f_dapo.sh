#!/usr/bin/env bash
# F-DAPO: DAPO (dapo.sh) with the focal weight, gamma 0.5 (F-GRPO paper, Table 1 column "F-DAPO").
set -euo pipefail
export RECIPE_SCRIPT="${RECIPE_SCRIPT:-${BASH_SOURCE[0]}}"
export RECIPE_NAME="${RECIPE_NAME:-f_dapo}"
export RECIPE_VARS="${RECIPE_VARS:-} GAMMA"
exec "$(dirname "${BASH_SOURCE[0]}")/dapo.sh" \
    --with algorithm.adv_estimator=f_grpo \
    --with "algorithm.focal.gamma=${GAMMA:-0.5}" \
    "$@"
