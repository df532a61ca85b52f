#!/usr/bin/env bash
# Control: GRPO + entropy bonus 1e-3 (F-GRPO paper, regularisation baselines, Qwen2.5-7B N=8).
set -euo pipefail
export RECIPE_SCRIPT="${RECIPE_SCRIPT:-${BASH_SOURCE[0]}}"
export RECIPE_NAME="${RECIPE_NAME:-grpo_entropy}"
exec "$(dirname "${BASH_SOURCE[0]}")/grpo.sh" \
    --with actor_rollout_ref.actor.entropy_coeff=0.001 \
    "$@"
