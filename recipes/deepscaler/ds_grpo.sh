#!/usr/bin/env bash
# Differential smoothing, DS-GRPO (arXiv 2511.19942) on the F-GRPO DeepScaleR setup: GRPO's
# advantage (population std, as the authors' code) minus C_POS times a correct rollout's token-mean
# old log-prob, plus C_NEG times a wrong one's (docs/methods.md §12). C_POS = C_NEG = 0.05 are the
# authors' defaults (their code's correct/incorrect_sample_log_prob_coef). The F-GRPO paper's v2
# reports DS-GRPO as a comparison arm on the same DeepScaleR setup (Table 3), with settings it does
# not list beyond these; this recipe is the like-for-like run next to grpo.sh / f_grpo.sh at N=8.
#
# The old log-probs come from verl's old-log-prob pass, or in bypass mode
# (algorithm.rollout_correction.bypass_mode=true) from the rollout, which then needs
# actor_rollout_ref.rollout.calculate_log_probs=true (verl's default; checked at start-up).
#   C_POS=0.1 C_NEG=0.1 DS_STD=sample bash recipes/deepscaler/ds_grpo.sh
set -euo pipefail
export RECIPE_SCRIPT="${RECIPE_SCRIPT:-${BASH_SOURCE[0]}}"
export RECIPE_NAME="${RECIPE_NAME:-ds_grpo}"
export RECIPE_VARS="${RECIPE_VARS:-} C_POS C_NEG DS_STD"
exec "$(dirname "${BASH_SOURCE[0]}")/grpo.sh" \
    --with algorithm.adv_estimator=ds_grpo \
    --with "algorithm.ds_grpo.correct_coef=${C_POS:-0.05}" \
    --with "algorithm.ds_grpo.incorrect_coef=${C_NEG:-0.05}" \
    --with "algorithm.ds_grpo.std=${DS_STD:-population}" \
    "$@"
