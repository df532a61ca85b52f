#!/usr/bin/env bash
# Unlikeliness reward (He, Fried & Welleck, arXiv 2506.02355) on the F-GRPO DeepScaleR setup: a
# correct rollout's reward is scaled by 1 - beta*(G - rank)/G, rank 1 = most likely under the
# rollout policy, before GRPO's advantage (docs/methods.md §10). beta 0.25 is the paper's value.
# Not a row of either paper: a like-for-like comparison with grpo.sh / f_grpo.sh at N=8.
# The paper's second mitigation, more PPO epochs per batch, is a separate knob:
# add actor_rollout_ref.actor.ppo_epochs=2 to combine them.
#   BETA=0.5 LIKELIHOOD=mean bash recipes/deepscaler/unlikely_grpo.sh
set -euo pipefail
export RECIPE_SCRIPT="${RECIPE_SCRIPT:-${BASH_SOURCE[0]}}"
export RECIPE_NAME="${RECIPE_NAME:-unlikely_grpo}"
exec "$(dirname "${BASH_SOURCE[0]}")/grpo.sh" \
    --with algorithm.adv_estimator=unlikely_grpo \
    --with "algorithm.unlikely.beta=${BETA:-0.25}" \
    --with "algorithm.unlikely.likelihood=${LIKELIHOOD:-sum}" \
    "$@"
