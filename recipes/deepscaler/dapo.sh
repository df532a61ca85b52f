#!/usr/bin/env bash
# DAPO on DeepScaleR (F-GRPO paper, Table 1 column "DAPO"): clip-higher 0.2 / 0.28 with
# token-mean loss (the base already aggregates token-mean), GRPO advantages.
# The paper names only clip-higher; DAPO's other parts are opt-in:
#   DYNAMIC_SAMPLING=1  drop groups whose rollouts are all right or all wrong (algorithm.filter_groups, metric acc)
#   OVERLONG_BUFFER=L   DAPO overlong shaping over the last L response tokens (reward manager "dapo")
set -euo pipefail
RECIPE_NAME="${RECIPE_NAME:-dapo}"
RECIPE_VARS="${RECIPE_VARS:-} DYNAMIC_SAMPLING MAX_NUM_GEN_BATCHES OVERLONG_BUFFER OVERLONG_PENALTY"
extra=()
if [[ "${DYNAMIC_SAMPLING:-0}" == 1 ]]; then
    extra+=(algorithm.filter_groups.enable=true algorithm.filter_groups.metric=acc
        "algorithm.filter_groups.max_num_gen_batches=${MAX_NUM_GEN_BATCHES:-10}")
fi
if [[ -n "${OVERLONG_BUFFER:-}" ]]; then
    extra+=(reward.reward_manager.name=dapo
        +reward.reward_kwargs.overlong_buffer_cfg.enable=true
        "+reward.reward_kwargs.overlong_buffer_cfg.len=${OVERLONG_BUFFER}"
        "+reward.reward_kwargs.overlong_buffer_cfg.penalty_factor=${OVERLONG_PENALTY:-1.0}"
        +reward.reward_kwargs.overlong_buffer_cfg.log=false
        '+reward.reward_kwargs.max_resp_len=${data.max_response_length}')
fi
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
recipe_main "$@" -- \
    algorithm.adv_estimator=grpo \
    actor_rollout_ref.actor.clip_ratio_low=0.2 \
    actor_rollout_ref.actor.clip_ratio_high=0.28 \
    actor_rollout_ref.actor.loss_agg_mode=token-mean \
    "${extra[@]}"
