#!/usr/bin/env bash
# GRPO with group size N=16 (F-GRPO paper, Table 2 group-size sweep on Qwen2.5-7B; N=8 is grpo.sh).
set -euo pipefail
export RECIPE_SCRIPT="${RECIPE_SCRIPT:-${BASH_SOURCE[0]}}"
RECIPE_NAME="${RECIPE_NAME:-grpo}" N=16 exec "$(dirname "${BASH_SOURCE[0]}")/grpo.sh" "$@"
