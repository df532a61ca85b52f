#!/usr/bin/env bash
# GRPO on DeepScaleR (F-GRPO paper, Table 1 column "GRPO"; Qwen2.5-7B by default, N=8).
# Everything else is the shared base (verl_focal/config/recipe/deepscaler.yaml + recipes/lib/common.sh).
#   bash recipes/deepscaler/grpo.sh --dry-run
#   MODEL=Qwen/Qwen3-4B-Base bash recipes/deepscaler/grpo.sh
set -euo pipefail
RECIPE_NAME="${RECIPE_NAME:-grpo}"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
recipe_main "$@" -- \
    algorithm.adv_estimator=grpo
