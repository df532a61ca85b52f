#!/usr/bin/env bash
# MaxRL (Tajwar et al., arXiv 2602.02710) on the F-GRPO DeepScaleR setup: advantage
# (c - p)/(p + epsilon), c the rollout's 0/1 correctness and p its group's success rate
# (docs/methods.md §11). EPSILON 1e-6 is the authors' value. Not a row of either paper: a
# like-for-like comparison with grpo.sh / f_grpo.sh at N=8.
#
# BASE_RECIPE picks the loss and clipping it runs with, as the focal recipes do:
#   grpo (default, grpo.sh), dapo (dapo.sh: clip-higher; with DYNAMIC_SAMPLING=1 DAPO's group filter),
#   cispo (cispo.sh: CISPO's loss).
#
# The authors' released Qwen3 run (their script qwen3_experiments/run_qwen3_training.sh: Qwen3-1.7B/4B-Base,
# adv_estimator=maxrl) differs from this base in: 16 rollouts per prompt, 256 prompts per step in one
# policy update (mini-batch 256), grad-norm clip 0.3, responses up to 4096 tokens; lr 1e-6, clip 0.2/0.2,
# no KL loss and no entropy bonus are the same. To run those values here:
#   N=16 MODEL=Qwen/Qwen3-4B-Base bash recipes/deepscaler/maxrl.sh \
#       actor_rollout_ref.actor.ppo_mini_batch_size=256 actor_rollout_ref.actor.optim.clip_grad=0.3
#   BASE_RECIPE=cispo EPSILON=0.1 bash recipes/deepscaler/maxrl.sh
set -euo pipefail
export RECIPE_SCRIPT="${RECIPE_SCRIPT:-${BASH_SOURCE[0]}}"
export RECIPE_NAME="${RECIPE_NAME:-maxrl}"
export RECIPE_VARS="${RECIPE_VARS:-} EPSILON BASE_RECIPE"
base="${BASE_RECIPE:-grpo}"
[[ "$base" == grpo || "$base" == dapo || "$base" == cispo ]] || base=grpo  # common.sh names the bad value
exec "$(dirname "${BASH_SOURCE[0]}")/${base}.sh" \
    --with algorithm.adv_estimator=maxrl \
    --with "algorithm.maxrl.epsilon=${EPSILON:-1e-6}" \
    "$@"
