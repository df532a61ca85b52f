#!/usr/bin/env bash
# Control: GRPO at lr 6.8e-7, the same average step size as F-GRPO gamma=0.5 (F-GRPO paper).
set -euo pipefail
export RECIPE_SCRIPT="${RECIPE_SCRIPT:-${BASH_SOURCE[0]}}"
export RECIPE_NAME="${RECIPE_NAME:-grpo_low_lr}"
exec "$(dirname "${BASH_SOURCE[0]}")/grpo.sh" \
    --with actor_rollout_ref.actor.optim.lr=6.8e-7 \
    "$@"
