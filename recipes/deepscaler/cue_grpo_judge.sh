#!/usr/bin/env bash
# Cue-GRPO with the LLM-judge partition (CR under JP, as in UARL, arXiv 2601.08763): the same
# credit rule as cue_grpo.sh, clusters from a judge model served behind an OpenAI-compatible API.
# Required: JUDGE_MODEL (name the server knows).  Optional: JUDGE_URL [http://127.0.0.1:8000/v1],
# JUDGE_API_KEY_ENV (NAME of the env var holding the key; never the key itself).
#   vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000 &   # on a separate GPU
#   JUDGE_MODEL=Qwen/Qwen2.5-7B-Instruct bash recipes/deepscaler/cue_grpo_judge.sh
set -euo pipefail
export RECIPE_SCRIPT="${RECIPE_SCRIPT:-${BASH_SOURCE[0]}}"
export RECIPE_NAME="${RECIPE_NAME:-cue_grpo_judge}"
if [[ -z "${JUDGE_MODEL:-}" ]]; then
    echo "recipe $RECIPE_NAME: error: set JUDGE_MODEL to the model name your judge server serves" >&2
    exit 2
fi
exec "$(dirname "${BASH_SOURCE[0]}")/cue_grpo.sh" \
    --with algorithm.cue.partitioner=judge \
    --with "algorithm.cue.judge.base_url=${JUDGE_URL:-http://127.0.0.1:8000/v1}" \
    --with "algorithm.cue.judge.model=${JUDGE_MODEL}" \
    --with "algorithm.cue.judge.api_key_env=${JUDGE_API_KEY_ENV:-}" \
    "$@"
