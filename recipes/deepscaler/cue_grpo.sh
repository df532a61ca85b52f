#!/usr/bin/env bash
# Cue-GRPO (arXiv 2608.03467): rarity-aware credit redistribution among each group's correct
# rollouts, clusters from the deterministic strategy-cue partition.  Paper setup: Qwen2.5-Math-7B
# with LoRA rank 16, 1,000 MATH level 3-5 problems, K=64 rollouts per prompt, alpha=0.8,
# epsilon=0.5, rho=0.75, multiplier clip [0.3, 3.0], floor tau=1.05 (its form is uncertain:
# CUE_FLOOR_MODE=none|additive|max, default none = clip then renormalise to unit mean).
# Settings the summaries do not give are marked "ours" below.
#   MODEL=meta-llama/Llama-3.1-8B-Instruct bash recipes/deepscaler/cue_grpo.sh   # the paper's second model
# Data:  verl-focal prep-data math-subset --tokenizer <model dir> --out $DATA_DIR/math_l3to5/<model tag>.parquet
set -euo pipefail
RECIPE_NAME="${RECIPE_NAME:-cue_grpo}"
RECIPE_VARS="${RECIPE_VARS:-} CUE_FLOOR_MODE"
MODEL="${MODEL:-Qwen/Qwen2.5-Math-7B}"
N="${N:-64}"
# ours: 32 prompts x 64 rollouts = 2,048 responses per step (as 256 x 8 in the F-GRPO recipes)
TRAIN_BATCH_SIZE="${TRAIN_BATCH_SIZE:-32}"
# ours: Qwen2.5-Math-7B has a 4,096-token context (1,024 prompt + 3,072 response); same for Llama
MAX_RESPONSE_LENGTH="${MAX_RESPONSE_LENGTH:-3072}"
PAPER_TRAIN_ROWS=1000
DATA_DIR="${DATA_DIR:-${VERL_FOCAL_DATA:-$HOME/data/verl_focal}}"
_tag="$(basename "${MODEL%/}")"
TRAIN_FILES="${TRAIN_FILES:-$DATA_DIR/math_l3to5/${_tag,,}.parquet}"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
recipe_main "$@" -- \
    algorithm.adv_estimator=cue_grpo \
    "algorithm.cue.partitioner=${CUE_PARTITIONER:-strategy_cue}" \
    algorithm.cue.alpha=0.8 \
    algorithm.cue.epsilon=0.5 \
    algorithm.cue.rho=0.75 \
    "algorithm.cue.clip=[0.3,3.0]" \
    algorithm.cue.renormalize=true \
    "algorithm.cue.floor_mode=${CUE_FLOOR_MODE:-none}" \
    algorithm.cue.floor=1.05 \
    '+reward.custom_reward_function.reward_kwargs.cue_set=${algorithm.cue.cue_set}' \
    actor_rollout_ref.model.lora_rank=16 \
    actor_rollout_ref.model.lora_alpha=32 \
    actor_rollout_ref.model.target_modules=all-linear \
    actor_rollout_ref.rollout.load_format=safetensors \
    actor_rollout_ref.rollout.layered_summon=true \
    actor_rollout_ref.actor.optim.lr=1.0e-5 \
    actor_rollout_ref.actor.ppo_mini_batch_size=16 \
    trainer.project_name=verl_focal_cue
