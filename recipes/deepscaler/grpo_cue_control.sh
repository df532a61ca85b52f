#!/usr/bin/env bash
# GRPO on the Cue-GRPO paper's setup (arXiv 2608.03467): the control that cue_grpo.sh pairs with.  Paper setup:
# Qwen2.5-Math-7B with LoRA rank 16, 1,000 MATH level 3-5 problems, K=64 rollouts per prompt; plain GRPO
# advantages.  cue_grpo.sh runs this script with the Cue-GRPO estimator and its section added (--with), so the
# two differ in the method's keys alone (tests/recipes/test_recipes_on_cpu.py diffs their --dry-run configs).
# Settings the summaries do not give are marked "ours" below.
#   MODEL=meta-llama/Llama-3.1-8B-Instruct bash recipes/deepscaler/grpo_cue_control.sh   # the paper's second model
# Data:  verl-focal prep-data math-subset --tokenizer <model dir> --out $DATA_DIR/math_l3to5/<model tag>.parquet
set -euo pipefail
RECIPE_NAME="${RECIPE_NAME:-grpo_cue_control}"
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
    algorithm.adv_estimator=grpo \
    actor_rollout_ref.model.lora_rank=16 \
    actor_rollout_ref.model.lora_alpha=32 \
    actor_rollout_ref.model.target_modules=all-linear \
    actor_rollout_ref.rollout.load_format=safetensors \
    actor_rollout_ref.rollout.layered_summon=true \
    actor_rollout_ref.actor.optim.lr=1.0e-5 \
    actor_rollout_ref.actor.ppo_mini_batch_size=16 \
    trainer.project_name=verl_focal_cue
