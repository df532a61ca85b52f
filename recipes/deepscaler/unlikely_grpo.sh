#!/usr/bin/env bash
# Unlikeliness reward (He, Fried & Welleck, arXiv 2506.02355) on the F-GRPO DeepScaleR setup: a
# correct rollout's reward is scaled by 1 - beta*(G - rank)/G, rank 1 = most likely under the
# rollout policy, before GRPO's advantage (docs/methods.md §10). beta 0.25 is the paper's value.
# Not a row of either paper: a like-for-like comparison with grpo.sh / f_grpo.sh at N=8.
#
# Which likelihood ranks the rollouts: LIKELIHOOD=mean (default), the per-token mean of the
# rollout policy's log-probs. That is what the authors' released code ranks by, so it is the
# reading that reproduces their published runs; the paper's text says "likelihood", i.e. the
# summed sequence log-prob (LIKELIHOOD=sum, our estimator's default when no recipe sets it).
# The two differ only between responses of different lengths.
#
# Groups with all rollouts right or all wrong: the authors' pipeline drops them before the
# advantage and fills the update batch with mixed groups (their script's advantage_threshold
# and dynamic_update). verl's equivalent is algorithm.filter_groups (metric acc), opt-in here
# with FILTER_GROUPS=1 (as DYNAMIC_SAMPLING=1 in dapo.sh), off by default so that the run
# compares with grpo.sh / f_grpo.sh, which keep those groups (their advantage is 0 either way).
# The paper's second mitigation, more PPO epochs per batch, is a separate knob:
# add actor_rollout_ref.actor.ppo_epochs=2 to combine them.
#   BETA=0.5 LIKELIHOOD=sum FILTER_GROUPS=1 bash recipes/deepscaler/unlikely_grpo.sh
set -euo pipefail
export RECIPE_SCRIPT="${RECIPE_SCRIPT:-${BASH_SOURCE[0]}}"
export RECIPE_NAME="${RECIPE_NAME:-unlikely_grpo}"
export RECIPE_VARS="${RECIPE_VARS:-} BETA LIKELIHOOD FILTER_GROUPS MAX_NUM_GEN_BATCHES"
extra=()
if [[ "${FILTER_GROUPS:-0}" == 1 ]]; then
    extra+=(--with algorithm.filter_groups.enable=true --with algorithm.filter_groups.metric=acc
        --with "algorithm.filter_groups.max_num_gen_batches=${MAX_NUM_GEN_BATCHES:-10}")
fi
exec "$(dirname "${BASH_SOURCE[0]}")/grpo.sh" \
    --with algorithm.adv_estimator=unlikely_grpo \
    --with "algorithm.unlikely.beta=${BETA:-0.25}" \
    --with "algorithm.unlikely.likelihood=${LIKELIHOOD:-mean}" \
    "${extra[@]}" \
    "$@"
