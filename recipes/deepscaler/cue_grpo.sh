#!/usr/bin/env bash
# Cue-GRPO (arXiv 2608.03467): rarity-aware credit redistribution among each group's correct
# rollouts, clusters from the deterministic strategy-cue partition.  Paper setup: Qwen2.5-Math-7B
# with LoRA rank 16, 1,000 MATH level 3-5 problems, K=64 rollouts per prompt, alpha=0.8,
# epsilon=0.5, rho=0.75, multiplier clip [0.3, 3.0], floor tau=1.05 (its form is uncertain:
# CUE_FLOOR_MODE=none|additive|max, default none = clip then renormalise to unit mean).
# The setup (model, data, LoRA, lr, batch) is grpo_cue_control.sh's, its GRPO control: this script adds the
# estimator and its section only, so the two runs differ in the method alone.
#   MODEL=meta-llama/Llama-3.1-8B-Instruct bash recipes/deepscaler/cue_grpo.sh   # the paper's second model
# Data:  verl-focal prep-data math-subset --tokenizer <model dir> --out $DATA_DIR/math_l3to5/<model tag>.parquet
set -euo pipefail
export RECIPE_SCRIPT="${RECIPE_SCRIPT:-${BASH_SOURCE[0]}}"
export RECIPE_NAME="${RECIPE_NAME:-cue_grpo}"
export RECIPE_VARS="${RECIPE_VARS:-} CUE_FLOOR_MODE"
exec "$(dirname "${BASH_SOURCE[0]}")/grpo_cue_control.sh" \
    --with algorithm.adv_estimator=cue_grpo \
    --with "algorithm.cue.partitioner=${CUE_PARTITIONER:-strategy_cue}" \
    --with algorithm.cue.alpha=0.8 \
    --with algorithm.cue.epsilon=0.5 \
    --with algorithm.cue.rho=0.75 \
    --with "algorithm.cue.clip=[0.3,3.0]" \
    --with algorithm.cue.renormalize=true \
    --with "algorithm.cue.floor_mode=${CUE_FLOOR_MODE:-none}" \
    --with algorithm.cue.floor=1.05 \
    --with '+reward.custom_reward_function.reward_kwargs.cue_set=${algorithm.cue.cue_set}' \
    "$@"
