#!/usr/bin/env bash
# Pass@k Training (Chen et al., arXiv 2508.10751) on the F-GRPO DeepScaleR setup: the analytic
# pass@k group advantage instead of GRPO's (docs/methods.md §9). Not a row of either paper:
# a like-for-like comparison with grpo.sh / f_grpo.sh at N=8 rollouts per prompt.
#   K=2 bash recipes/deepscaler/passk_grpo.sh        # subset size k (must be <= N; checked at start-up)
set -euo pipefail
export RECIPE_SCRIPT="${RECIPE_SCRIPT:-${BASH_SOURCE[0]}}"
export RECIPE_NAME="${RECIPE_NAME:-passk_grpo}"
export RECIPE_VARS="${RECIPE_VARS:-} K"
exec "$(dirname "${BASH_SOURCE[0]}")/grpo.sh" \
    --with algorithm.adv_estimator=passk_grpo \
    --with "algorithm.passk.k=${K:-4}" \
    "$@"
