#!/usr/bin/env bash
# F-CISPO: CISPO (cispo.sh) with the focal weight, gamma 1.0 (the paper's choice for F-CISPO;
# F-GRPO paper, Table 1 column "F-CISPO").
set -euo pipefail
export RECIPE_SCRIPT="${RECIPE_SCRIPT:-${BASH_SOURCE[0]}}"
export RECIPE_NAME="${RECIPE_NAME:-f_cispo}"
export RECIPE_VARS="${RECIPE_VARS:-} GAMMA"
exec "$(dirname "${BASH_SOURCE[0]}")/cispo.sh" \
    --with algorithm.adv_estimator=f_grpo \
    --with "algorithm.focal.gamma=${GAMMA:-1.0}" \
    "$@"
