#!/usr/bin/env bash
# Control: GRPO + KL penalty 1e-3 to the initial policy (F-GRPO paper, regularisation baselines).
# As a KL loss term (GRPO style) with verl's default low-variance estimator (k3); the paper
# does not name the estimator.  This enables the reference model.
set -euo pipefail
export RECIPE_SCRIPT="${RECIPE_SCRIPT:-${BASH_SOURCE[0]}}"
export RECIPE_NAME="${RECIPE_NAME:-grpo_kl}"
exec "$(dirname "${BASH_SOURCE[0]}")/grpo.sh" \
    --with actor_rollout_ref.actor.use_kl_loss=true \
    --with actor_rollout_ref.actor.kl_loss_coef=0.001 \
    --with actor_rollout_ref.actor.kl_loss_type=low_var_kl \
    "$@"
