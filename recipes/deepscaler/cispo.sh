#!/usr/bin/env bash
# CISPO on DeepScaleR (F-GRPO paper, Table 1 column "CISPO"): verl's built-in cispo policy loss,
# IS weights clipped to [1 - eps_low, 1 + eps_high] = [0, 6] with the paper's eps_low=1.0, eps_high=5.0.
set -euo pipefail
RECIPE_NAME="${RECIPE_NAME:-cispo}"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
recipe_main "$@" -- \
    algorithm.adv_estimator=grpo \
    actor_rollout_ref.actor.policy_loss.loss_mode=cispo \
    actor_rollout_ref.actor.clip_ratio_low=1.0 \
    actor_rollout_ref.actor.clip_ratio_high=5.0
