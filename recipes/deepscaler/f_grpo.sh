#!/usr/bin/env bash
# F-GRPO: GRPO with the focal weight (1 - p_hat)^gamma on each group's advantages
# (F-GRPO paper, Table 1 column "F-GRPO"; gamma 0.5, the paper's choice for Qwen2.5-7B).
#   GAMMA=1.0 bash recipes/deepscaler/f_grpo.sh        # the paper's sweep: 0.5, 1, 2
set -euo pipefail
export RECIPE_SCRIPT="${RECIPE_SCRIPT:-${BASH_SOURCE[0]}}"
export RECIPE_NAME="${RECIPE_NAME:-f_grpo}"
export RECIPE_VARS="${RECIPE_VARS:-} GAMMA"
exec "$(dirname "${BASH_SOURCE[0]}")/grpo.sh" \
    --with algorithm.adv_estimator=f_grpo \
    --with "algorithm.focal.gamma=${GAMMA:-0.5}" \
    "$@"
