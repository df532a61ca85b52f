# Shared helper of the verl-focal recipes (bash).  A recipe script does
#
#     RECIPE_NAME=${RECIPE_NAME:-grpo}
#     source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
#     recipe_main "$@" -- <the recipe's own Hydra overrides (its deltas)>
#
# The paper's constants live in the packaged Hydra config verl_focal/config/recipe/deepscaler.yaml,
# selected by the override +recipe=deepscaler that this helper puts first.
# This file adds what depends on the machine, the model and the recipe, from these environment
# variables (default in brackets):
#
#   MODEL              HF name or local directory                       [Qwen/Qwen2.5-7B]
#   N                  rollouts per prompt (group size)                  [8]
#   ENGINE             rollout engine: vllm | sglang                     [vllm]    (paper: SGLang; CI runs vLLM)
#   NNODES             nodes in the Ray cluster                          [1]       (paper: 2, i.e. 16 x H100)
#   GPUS_PER_NODE      GPUs per node                                     [8]
#   MAX_CKPT_TO_KEEP   checkpoints kept (trainer.max_actor_ckpt_to_keep)  [2]       (7B: 7.6e9 params x 12 B ~ 92 GB each)
#   ROLLOUT_TP         rollout tensor-parallel size                      [2]
#   GPU_MEM_UTIL       rollout engine GPU memory fraction                [0.6]
#   TRAIN_BATCH_SIZE   prompts per step                                  [256]
#   MAX_PROMPT_LENGTH  templated prompt tokens                           [1024]
#   MAX_RESPONSE_LENGTH response tokens                                  [per model: 8192; Qwen3-4B-Base 4096]
#   TOKEN_LEN_FACTOR   actor ppo_max_token_len_per_gpu = factor x (prompt + response)  [2]
#   DATA_DIR           where `verl-focal prep-data` wrote               [$VERL_FOCAL_DATA or ~/data/verl_focal]
#   TRAIN_FILES        training parquet                                  [$DATA_DIR/deepscaler/<model tag>.parquet]
#   VAL_FILES          comma list of validation parquets                 [the six math sets in $DATA_DIR/eval]
#   VAL_OOD            1: also validate on the OOD sets gpqa_diamond, ifeval, synlogic  [0: off; the files
#                      are large and IFEval/SynLogic are scored on CPU; ignored when VAL_FILES is set;
#                      some SynLogic prompts exceed 1024 tokens: raise MAX_PROMPT_LENGTH to what
#                      `prep-data eval` reports, or verl drops/rejects them]
#   STEPS_PER_EPOCH    steps per epoch (checkpoint + validation cadence) [rows of TRAIN_FILES // TRAIN_BATCH_SIZE,
#                                                                         or PAPER_TRAIN_ROWS // TRAIN_BATCH_SIZE
#                                                                         while the file is absent]
#   SEED               training seed: data.seed (prompt order), actor_rollout_ref.rollout.seed (vLLM's sampling),
#                      actor_rollout_ref.actor.data_loader_seed (mini-batch order when actor.shuffle is on)  [42]
#   EXP_NAME           experiment name                                   [<recipe>_<model tag>_n<N>, + _s<SEED>
#                                                                         when SEED is set]
#   CKPT_ROOT          checkpoints go to $CKPT_ROOT/$EXP_NAME            [~/checkpoints/verl_focal]
#   PYTHON             interpreter with verl-focal installed             [the active virtualenv's python,
#                                                                         else this checkout's .venv/bin/python
#                                                                         (what `make demo` builds), else python3]
#   RECIPE_ALLOW_VARS  names of your own environment variables that are one or two letters away from a recipe
#                      variable (MODELS near MODEL): a name like that is refused as a typo unless listed here  []
#
# Flags (anywhere on the command line; everything else is a Hydra override appended last):
#   --with OVERRIDE    a recipe-level delta from a wrapper script (e.g. f_grpo.sh over grpo.sh):
#                      placed after the wrapped recipe's deltas and before the user's overrides
#   --dry-run          print the fully resolved verl config as YAML and exit (nothing launched)
#   --print-overrides  print the override list, one per line, and exit (no Python started)
#   --help             this text
#
# Multi-node: start Ray first (`ray start --head` on node 0, `ray start --address=<head>:6379` on
# the others), then run the recipe on node 0 with NNODES set; verl attaches to the running cluster.

RECIPES_LIB="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# Every variable a recipe reads that has a form to check, in one table; recipe_main checks them all before
# anything starts, naming the variable the user set and the fix (exit 2).  The common ones always; a recipe's own
# (GAMMA, K, ...) when the script lists them in RECIPE_VARS.  Columns: name, kind, min, max (choices for
# "choice"), what it sets.  Kinds: int (digits, no leading zero), num (a plain decimal number, as Hydra reads one),
# flag (0 or 1), choice.  The bounds
# of the algorithm.* keys are the schema's (tests/recipes/test_recipe_vars.py walks them through both).
_RECIPE_VAR_TABLE='
N                   int    1   -   actor_rollout_ref.rollout.n, the rollouts per prompt
NNODES              int    1   -   trainer.nnodes
GPUS_PER_NODE       int    1   -   trainer.n_gpus_per_node
ROLLOUT_TP          int    1   -   actor_rollout_ref.rollout.tensor_model_parallel_size
GPU_MEM_UTIL        num    0<  1   actor_rollout_ref.rollout.gpu_memory_utilization
TRAIN_BATCH_SIZE    int    1   -   data.train_batch_size, the prompts per step
MAX_PROMPT_LENGTH   int    1   -   data.max_prompt_length
MAX_RESPONSE_LENGTH int    1   -   data.max_response_length
TOKEN_LEN_FACTOR    int    1   -   actor_rollout_ref.actor.ppo_max_token_len_per_gpu = factor x prompt + response length
ENGINE              choice sglang|vllm - actor_rollout_ref.rollout.name
MAX_CKPT_TO_KEEP    int    1   -   trainer.max_actor_ckpt_to_keep, the checkpoints kept
VAL_OOD             flag   -   -   whether the OOD sets gpqa_diamond, ifeval, synlogic are validated
STEPS_PER_EPOCH     int    1   -   trainer.save_freq and trainer.test_freq, the steps between checkpoints and validations
PAPER_TRAIN_ROWS    int    1   -   the steps per epoch while TRAIN_FILES is absent
SEED                int    0   -   data.seed, actor_rollout_ref.rollout.seed and actor_rollout_ref.actor.data_loader_seed, the training seed
GAMMA               num    0   -   algorithm.focal.gamma
K                   int    1   512 algorithm.passk.k
BETA                num    0   1   algorithm.unlikely.beta
LIKELIHOOD          choice sum|mean - algorithm.unlikely.likelihood
EPSILON             num    0<  -   algorithm.maxrl.epsilon
C_POS               num    0   -   algorithm.ds_grpo.correct_coef
C_NEG               num    0   -   algorithm.ds_grpo.incorrect_coef
DS_STD              choice population|sample - algorithm.ds_grpo.std
BASE_RECIPE         choice grpo|dapo|cispo - the recipe maxrl.sh runs on (its loss and clipping)
CUE_FLOOR_MODE      choice none|additive|max - algorithm.cue.floor_mode
FILTER_GROUPS       flag   -   -   algorithm.filter_groups, which drops groups that are all right or all wrong
DYNAMIC_SAMPLING    flag   -   -   algorithm.filter_groups, which drops groups that are all right or all wrong
MAX_NUM_GEN_BATCHES int    0   -   algorithm.filter_groups.max_num_gen_batches; 0 = no limit
OVERLONG_BUFFER     int    1   -   reward.reward_kwargs.overlong_buffer_cfg.len
OVERLONG_PENALTY    num    0   -   reward.reward_kwargs.overlong_buffer_cfg.penalty_factor'
_COMMON_VARS="N NNODES GPUS_PER_NODE ROLLOUT_TP GPU_MEM_UTIL TRAIN_BATCH_SIZE MAX_PROMPT_LENGTH MAX_RESPONSE_LENGTH
TOKEN_LEN_FACTOR ENGINE MAX_CKPT_TO_KEEP VAL_OOD STEPS_PER_EPOCH PAPER_TRAIN_ROWS SEED"

# _check_var NAME: refuse (exit 2) a value of NAME that its row of _RECIPE_VAR_TABLE does not accept
_check_var() {
    local name="$1" row kind lo hi what val ok=1 need
    row="$(grep -E "^$name[[:space:]]" <<<"$_RECIPE_VAR_TABLE")" || _recipe_die "internal: $name is not in _RECIPE_VAR_TABLE"
    read -r _ kind lo hi what <<<"$row"
    [[ -n "${!name:-}" ]] || return 0  # unset or empty: the default
    val="${!name}"
    case "$kind" in
        int)
            [[ "$val" =~ ^(0|[1-9][0-9]*)$ ]] && ((val >= lo)) && { [[ "$hi" == - ]] || ((val <= hi)); } || ok=0
            need="an integer >= $lo"
            [[ "$hi" == - ]] || need="an integer from $lo to $hi"
            ;;
        num)
            [[ "$val" =~ ^((0|[1-9][0-9]*)([.][0-9]*)?|[.][0-9]+)([eE][-+]?[0-9]+)?$ ]] &&
                awk -v v="$val" -v lo="${lo%<}" -v strict="${lo//[^<]/}" -v hi="$hi" \
                    'BEGIN { ok = strict ? v + 0 > lo + 0 : v + 0 >= lo + 0; if (hi != "-") ok = ok && v + 0 <= hi + 0; exit !ok }' ||
                ok=0
            need="a number $([[ "$lo" == *'<' ]] && echo "> ${lo%<}" || echo ">= $lo")"
            [[ "$hi" == - ]] || need+=" and <= $hi"
            ;;
        flag)
            [[ "$val" == 0 || "$val" == 1 ]] || ok=0
            need="0 or 1"
            ;;
        choice)
            [[ "|$lo|" == *"|$val|"* ]] || ok=0
            need="one of ${lo//|/, }"
            ;;
    esac
    ((ok)) || _recipe_die "$name=$val: must be $need (it sets $what); set $name to such a value, or unset it for this recipe's default"
}

# Every variable a recipe reads, free text included (the table above has the checked ones): an environment
# variable a small edit away from one of them is a typo (SEEDS for SEED, MODLE for MODEL), refused by _check_typos.
_RECIPE_TEXT_VARS="MODEL DATA_DIR TRAIN_FILES VAL_FILES EXP_NAME CKPT_ROOT PYTHON CUE_PARTITIONER JUDGE_MODEL JUDGE_URL
JUDGE_API_KEY_ENV VERL_FOCAL_DATA RECIPE_NAME RECIPE_SCRIPT RECIPE_VARS RECIPE_ALLOW_VARS"
# names of the standard environment and of common tools, never taken for a typo: exact names, then prefixes
_STANDARD_ENV_NAMES="HOME PATH SHELL TERM USER PWD OLDPWD LANG LANGUAGE LOGNAME MAIL EDITOR VISUAL PAGER DISPLAY
HOSTNAME HOST HOSTTYPE OSTYPE MACHTYPE TMPDIR TEMP TMP TZ SHLVL COLUMNS LINES PS1 PS2 PS4 IFS OPTIND OPTARG UID EUID
GROUPS PPID RANDOM SECONDS LINENO MODULEPATH MODULESHOME MANPATH INFOPATH CDPATH HISTFILE HISTSIZE HISTFILESIZE
HISTCONTROL PROMPT_COMMAND COLORTERM LS_COLORS LESS LESSOPEN LESSCLOSE MOTD_SHOWN SUDO_USER SUDO_UID SUDO_GID
SUDO_COMMAND SLURM_JOB_ID NODE_RANK WORLD_SIZE RANK LOCAL_RANK MASTER_ADDR MASTER_PORT OMP_NUM_THREADS MKL_NUM_THREADS
TOKENIZERS_PARALLELISM VIRTUAL_ENV DEBIAN_FRONTEND IS_SANDBOX CONTAINER_NAME"
_STANDARD_ENV_PREFIXES="_ LC_ XDG_ SSH_ SUDO_ CUDA_ NCCL_ NVIDIA_ NV_ HF_ HUGGINGFACE_ TRANSFORMERS_ TORCH PYTORCH_
VLLM_ SGLANG_ RAY_ WANDB_ CONDA MAMBA PYTHON PIP_ PYENV GIT_ VERL_ BASH SLURM_ PBS_ KUBERNETES_ AWS_ GCP_ GOOGLE_
AZURE_ SSL_ CURL_ REQUESTS_ HTTP HTTPS_ NO_PROXY FTP_ DBUS_ GPG_ GNOME_ KDE_ QT_ GTK_ JAVA_ NODE_ NPM_ RUST CARGO_ GO
DOCKER_ TERM_ WSL_ WINDOWS_ VSCODE_ JUPYTER_ JPY_ LD_ DYLD_ OMPI_ PMI_ PMIX_ MPI_ I_MPI_ UCX_ ROCM_ HIP_ MIOPEN_"

# _check_typos: refuse an environment variable that looks like a misspelt recipe variable (upper-case, not a name of
# the standard environment, within edit distance 1 of a recipe variable of 3-5 letters or 2 of a longer one,
# transpositions counting 1); names the closest recipe variable.  RECIPE_ALLOW_VARS lists names to let through.
_check_typos() {
    local known env_names hit name near here readers
    here=" $(echo $_COMMON_VARS ${RECIPE_VARS:-}) MODEL DATA_DIR TRAIN_FILES VAL_FILES EXP_NAME CKPT_ROOT PYTHON VERL_FOCAL_DATA RECIPE_NAME RECIPE_SCRIPT RECIPE_VARS RECIPE_ALLOW_VARS "
    [[ "${RECIPE_NAME:-}" != cue_grpo* ]] || here+="CUE_PARTITIONER "
    [[ "${RECIPE_NAME:-}" != cue_grpo_judge ]] || here+="JUDGE_MODEL JUDGE_URL JUDGE_API_KEY_ENV "
    known="$(printf '%s\n' $_RECIPE_TEXT_VARS $(awk 'NF { print $1 }' <<<"$_RECIPE_VAR_TABLE"))"
    env_names="$(compgen -e | grep -E '^[A-Z][A-Z0-9_]*$' || true)"
    [[ -n "$env_names" ]] || return 0
    hit="$(awk -v known="$known" -v std=" $(echo $_STANDARD_ENV_NAMES) " -v prefixes="$(echo $_STANDARD_ENV_PREFIXES)" \
        -v allow=" ${RECIPE_ALLOW_VARS:-} " -v here="$here" '
        function osa(a, b,   i, j, la, lb, c, d, ai, bj) {  # optimal string alignment distance
            la = length(a); lb = length(b)
            for (i = 0; i <= la; i++) d[i, 0] = i
            for (j = 0; j <= lb; j++) d[0, j] = j
            for (i = 1; i <= la; i++) for (j = 1; j <= lb; j++) {
                ai = substr(a, i, 1); bj = substr(b, j, 1); c = (ai == bj) ? 0 : 1
                d[i, j] = d[i - 1, j] + 1
                if (d[i, j - 1] + 1 < d[i, j]) d[i, j] = d[i, j - 1] + 1
                if (d[i - 1, j - 1] + c < d[i, j]) d[i, j] = d[i - 1, j - 1] + c
                if (i > 1 && j > 1 && ai == substr(b, j - 1, 1) && substr(a, i - 1, 1) == bj && d[i - 2, j - 2] + 1 < d[i, j])
                    d[i, j] = d[i - 2, j - 2] + 1
            }
            return d[la, lb]
        }
        BEGIN { n = split(known, K, "\n"); for (i = 1; i <= n; i++) isknown[K[i]] = 1; np = split(prefixes, P, " ") }
        {
            name = $1
            if (name in isknown || index(std, " " name " ") || index(allow, " " name " ")) next
            for (i = 1; i <= np; i++) if (index(name, P[i]) == 1) next
            best = ""; bestd = 99
            for (i = 1; i <= n; i++) {
                k = K[i]; lk = length(k)
                limit = lk <= 2 ? 0 : (lk <= 5 ? 1 : 2)
                if (limit == 0 || length(name) - lk > limit || lk - length(name) > limit) continue
                dist = osa(name, k)
                # the closest; between equals, one this recipe reads
                score = dist * 2 + (index(here, " " k " ") ? 0 : 1)
                if (dist <= limit && score < bestd) { best = k; bestd = score }
            }
            if (best != "") { print name, best; exit }
        }' <<<"$env_names")"
    [[ -n "$hit" ]] || { _check_setting_names "$env_names" "$known"; return 0; }
    read -r name near <<<"$hit"
    if [[ "$here" != *" $near "* ]]; then  # the hint must not lead to the next refusal: say who reads it
        readers="$({ grep -lE "\\\$\\{?$near\\b" "$RECIPES_LIB"/../*/*.sh 2>/dev/null || true; } | xargs -r -n1 basename | sort | tr '\n' ' ')"
        _recipe_die "$name=${!name} is set in the environment, but no recipe reads $name (did you mean $near? only ${readers% } read it, not recipe ${RECIPE_NAME:-?}), so the value would be ignored; unset $name, or run a recipe that reads $near"
    fi
    _recipe_die "$name=${!name} is set in the environment, but no recipe reads $name (did you mean $near?), so the value would be ignored; set $near instead, or unset $name (or list it in RECIPE_ALLOW_VARS=\"$name\" if it is not meant for the recipe)"
}

# Words that make a variable's name look like a training setting (LR, KL_COEF, LEARNING_RATE, ENTROPY, ...): such a
# variable that no recipe reads is refused by _check_setting_names, not only a near miss of a recipe variable; the
# verl key that sets it goes on the command line as an override.  _SETTING_KEYS: the key meant, where one is clear.
_SETTING_WORDS="LR LEARNING RATE KL COEF COEFF ENTROPY BATCH MINI MICRO EPOCH EPOCHS STEP STEPS TEMPERATURE TOPP TOPK
CLIP GAMMA BETA ALPHA LAMBDA LAM EPS EPSILON SEEDS ROLLOUT ROLLOUTS SAMPLES RESPONSE LENGTH TOKENS WARMUP DECAY LOSS
ESTIMATOR GRAD PPO GRPO DAPO CISPO FREQ"
_SETTING_KEYS='
LR              actor_rollout_ref.actor.optim.lr=VALUE
LEARNING_RATE   actor_rollout_ref.actor.optim.lr=VALUE
ACTOR_LR        actor_rollout_ref.actor.optim.lr=VALUE
KL_COEF         actor_rollout_ref.actor.use_kl_loss=true actor_rollout_ref.actor.kl_loss_coef=VALUE
KL_LOSS_COEF    actor_rollout_ref.actor.use_kl_loss=true actor_rollout_ref.actor.kl_loss_coef=VALUE
ENTROPY         actor_rollout_ref.actor.entropy_coeff=VALUE
ENTROPY_COEFF   actor_rollout_ref.actor.entropy_coeff=VALUE
TEMPERATURE     actor_rollout_ref.rollout.temperature=VALUE
TOTAL_EPOCHS    trainer.total_epochs=VALUE'

# _check_setting_names ENV_NAMES KNOWN: refuse the first environment variable whose name has a word of
# _SETTING_WORDS and that no recipe reads (not standard, not a tool's prefix, not in RECIPE_ALLOW_VARS)
_check_setting_names() {
    local env_names="$1" known="$2" name key
    name="$(awk -v known="$known" -v std=" $(echo $_STANDARD_ENV_NAMES) " -v prefixes="$(echo $_STANDARD_ENV_PREFIXES)" \
        -v allow=" ${RECIPE_ALLOW_VARS:-} " -v words=" $(echo $_SETTING_WORDS) " '
        BEGIN { n = split(known, K, "\n"); for (i = 1; i <= n; i++) isknown[K[i]] = 1; np = split(prefixes, P, " ") }
        {
            if ($1 in isknown || index(std, " " $1 " ") || index(allow, " " $1 " ")) next
            for (i = 1; i <= np; i++) if (index($1, P[i]) == 1) next
            nw = split($1, W, "_")
            for (i = 1; i <= nw; i++) if (index(words, " " W[i] " ")) { print $1; exit }
        }' <<<"$env_names")"
    [[ -n "$name" ]] || return 0
    key="$(awk -v n="$name" '$1 == n { $1 = ""; print substr($0, 2) }' <<<"$_SETTING_KEYS")"
    if [[ -n "$key" ]]; then
        key="pass it as a verl override on the command line instead (${key//VALUE/${!name}})"
    else
        key="pass the verl key it means as an override on the command line instead (the recipe's own variables: bash $0 --help)"
    fi
    _recipe_die "$name=${!name} is set in the environment and looks like a setting, but no recipe reads $name, so the value would be ignored; $key, or unset $name (or list it in RECIPE_ALLOW_VARS=\"$name\" if it is not meant for the recipe)"
}

# _check_vars: every common variable, then the recipe's own (RECIPE_VARS, listed by the scripts that read them);
# a variable of the table that this recipe does not read is refused (it would be ignored without a word).
# Every recipe reads the common ones and SEED.
_check_vars() {
    local v name kind lo hi what readers read_here
    _check_typos
    for v in $_COMMON_VARS ${RECIPE_VARS:-}; do _check_var "$v"; done
    read_here=" $(echo $_COMMON_VARS ${RECIPE_VARS:-}) SEED "
    while read -r name kind lo hi what; do
        [[ -n "$name" && -n "${!name:-}" && "$read_here" != *" $name "* ]] || continue
        readers="$({ grep -lE "RECIPE_VARS=.*[\" ]$name( |\")" "$RECIPES_LIB"/../*/*.sh 2>/dev/null || true; } |
            xargs -r -n1 basename | tr '\n' ' ')"
        _recipe_die "$name=${!name}: recipe ${RECIPE_NAME:-?} does not read $name (it sets $what${readers:+ in ${readers% }}), so the value would be ignored; unset $name, or run a recipe that reads it"
    done <<<"$_RECIPE_VAR_TABLE"
}
PAPER_TRAIN_ROWS="${PAPER_TRAIN_ROWS:-39202}"
MATH_VAL_SETS=(aime24 aime25 amc23 math500 minerva_math olympiadbench)
OOD_VAL_SETS=(gpqa_diamond ifeval synlogic)

_recipe_die() {
    echo "recipe ${RECIPE_NAME:-?}: error: $*" >&2
    exit 2
}

# The interpreter: $PYTHON if set, else the active virtualenv, else this checkout's .venv, else python3.
_default_python() {
    local repo_venv="${RECIPES_LIB}/../../.venv/bin/python"
    if [[ -n "${VIRTUAL_ENV:-}" && -x "$VIRTUAL_ENV/bin/python" ]]; then
        echo "$VIRTUAL_ENV/bin/python"
    elif [[ -x "$repo_venv" ]]; then
        (cd "$(dirname "$repo_venv")" && echo "$(pwd)/python")
    else
        echo python3
    fi
}

# Refuse, in one line, an interpreter without verl-focal and its dependencies (found, not imported: fast).
_check_python() {
    command -v "$PYTHON" >/dev/null 2>&1 || _recipe_die "PYTHON=$PYTHON: no such interpreter; set PYTHON to the python that has verl-focal installed"
    local missing
    missing="$("$PYTHON" -c 'import importlib.util as u; print(" ".join(m for m in ("verl_focal", "verl", "hydra") if u.find_spec(m) is None))' 2>/dev/null)" ||
        missing="verl_focal"
    [[ -z "$missing" ]] ||
        _recipe_die "$PYTHON cannot import ${missing// /, }: run 'make demo' (or 'make install') in the checkout first, then 'source .venv/bin/activate', or set PYTHON=/path/to/venv/bin/python"
}

# Model presets: tag (used in file and run names), response length, extra overrides.
_model_preset() {
    local base
    base="$(basename "${MODEL%/}")"
    base="${base,,}"
    MODEL_TAG="$base"
    PRESET_RESPONSE_LENGTH=""
    PRESET_OVERRIDES=()
    case "$base" in
        qwen2.5-7b) PRESET_RESPONSE_LENGTH=8192 ;;
        qwen3-4b-base)
            # paper: max response 4096 and thinking on for Qwen3-4B-Base
            PRESET_RESPONSE_LENGTH=4096
            PRESET_OVERRIDES=(+data.apply_chat_template_kwargs.enable_thinking=true)
            ;;
        llama-3.2-3b-instruct) PRESET_RESPONSE_LENGTH=8192 ;;
        llama-3.1-8b-instruct) PRESET_RESPONSE_LENGTH=8192 ;;
        qwen2.5-math-7b) PRESET_RESPONSE_LENGTH=3072 ;;  # 4,096-token context: 1,024 prompt + 3,072
    esac
}

_usage() {
    local script="$1"
    sed -n '2,/^set /p' "$script" | sed -e '/^set /d' -e 's/^# \{0,1\}//'
    echo
    sed -n '1,/^RECIPES_LIB=/p' "${RECIPES_LIB}/common.sh" | sed -e '/^RECIPES_LIB=/d' -e 's/^# \{0,1\}//'
}

_steps_per_epoch() {
    local rows=""
    if [[ "$TRAIN_FILES" != *,* && -f "$TRAIN_FILES" ]]; then
        rows="$("$PYTHON" -c 'import sys, pyarrow.parquet as pq; print(pq.ParquetFile(sys.argv[1]).metadata.num_rows)' \
            "$TRAIN_FILES")" || _recipe_die "cannot read the row count of $TRAIN_FILES"
    else
        rows="$PAPER_TRAIN_ROWS"
    fi
    # verl's training dataloader drops the last partial batch
    echo $((rows / TRAIN_BATCH_SIZE))
}

# recipe_main "$@" -- <recipe overrides>
recipe_main() {
    local mode=launch
    local -a user_args=() recipe_args=() with_args=()
    local seen_sep=0 want_with=0 a
    for a in "$@"; do
        if ((seen_sep)); then
            recipe_args+=("$a")
            continue
        fi
        if ((want_with)); then
            with_args+=("$a")
            want_with=0
            continue
        fi
        case "$a" in
            --) seen_sep=1 ;;
            --with) want_with=1 ;;
            --dry-run) mode=dry-run ;;
            --print-overrides) mode=print ;;
            -h | --help) mode=help ;;
            -*) _recipe_die "unknown flag $a (flags: --dry-run, --print-overrides, --help; Hydra overrides have no dashes)" ;;
            *) user_args+=("$a") ;;
        esac
    done
    ((want_with == 0)) || _recipe_die "--with needs an override after it"
    if [[ "$mode" == help ]]; then
        _usage "${RECIPE_SCRIPT:-$0}"
        exit 0
    fi

    _check_vars  # the values the user set, before any default is filled in or anything is started

    PYTHON="${PYTHON:-$(_default_python)}"
    MODEL="${MODEL:-Qwen/Qwen2.5-7B}"
    N="${N:-8}"
    ENGINE="${ENGINE:-vllm}"
    NNODES="${NNODES:-1}"
    MAX_CKPT_TO_KEEP="${MAX_CKPT_TO_KEEP:-2}"
    GPUS_PER_NODE="${GPUS_PER_NODE:-8}"
    ROLLOUT_TP="${ROLLOUT_TP:-2}"
    GPU_MEM_UTIL="${GPU_MEM_UTIL:-0.6}"
    TRAIN_BATCH_SIZE="${TRAIN_BATCH_SIZE:-256}"
    MAX_PROMPT_LENGTH="${MAX_PROMPT_LENGTH:-1024}"
    TOKEN_LEN_FACTOR="${TOKEN_LEN_FACTOR:-2}"
    DATA_DIR="${DATA_DIR:-${VERL_FOCAL_DATA:-$HOME/data/verl_focal}}"

    [[ "$mode" == print ]] || _check_python
    if [[ -f "$MODEL" ]]; then  # a weights or config file: the presets, file names and verl want its folder
        local model_dir
        model_dir="$(cd "$(dirname "$MODEL")" && pwd)"
        if [[ -f "$model_dir/config.json" ]]; then
            _recipe_die "MODEL=$MODEL is a file, not a model folder; set MODEL=$model_dir (the folder that holds config.json and the weights)"
        fi
        _recipe_die "MODEL=$MODEL is a file, not a model folder, and its folder $model_dir has no config.json; set MODEL to the folder that save_pretrained wrote (config.json, weights, tokenizer), or to a hub name like Qwen/Qwen2.5-7B"
    fi
    _model_preset
    MAX_RESPONSE_LENGTH="${MAX_RESPONSE_LENGTH:-$PRESET_RESPONSE_LENGTH}"
    [[ -n "$MAX_RESPONSE_LENGTH" ]] || _recipe_die "no response-length preset for MODEL=$MODEL; set MAX_RESPONSE_LENGTH"

    _check_var MAX_RESPONSE_LENGTH  # a preset's value, or the user's (checked above)

    TRAIN_FILES="${TRAIN_FILES:-$DATA_DIR/deepscaler/$MODEL_TAG.parquet}"
    if [[ -z "${VAL_FILES:-}" ]]; then
        local s
        VAL_FILES=""
        for s in "${MATH_VAL_SETS[@]}"; do VAL_FILES+="${VAL_FILES:+,}$DATA_DIR/eval/$s.parquet"; done
        if [[ "${VAL_OOD:-0}" == 1 ]]; then
            for s in "${OOD_VAL_SETS[@]}"; do VAL_FILES+=",$DATA_DIR/eval/$s.parquet"; done
        fi
    fi
    if [[ -z "${STEPS_PER_EPOCH:-}" ]]; then  # from the training file's rows (the user's value is checked above)
        STEPS_PER_EPOCH="$(_steps_per_epoch)" || exit 2
        ((STEPS_PER_EPOCH > 0)) ||
            _recipe_die "TRAIN_FILES=$TRAIN_FILES has fewer rows than one batch of TRAIN_BATCH_SIZE=$TRAIN_BATCH_SIZE prompts (0 steps per epoch); lower TRAIN_BATCH_SIZE, or set STEPS_PER_EPOCH"
    fi
    EXP_NAME="${EXP_NAME:-${RECIPE_NAME}_${MODEL_TAG}_n${N}${SEED:+_s$SEED}}"  # one folder per training seed
    SEED="${SEED:-42}"
    CKPT_ROOT="${CKPT_ROOT:-$HOME/checkpoints/verl_focal}"

    local -a overrides=(
        "+recipe=deepscaler"
        "data.train_files=$TRAIN_FILES"
        "data.val_files=[$VAL_FILES]"
        "data.train_batch_size=$TRAIN_BATCH_SIZE"
        "data.max_prompt_length=$MAX_PROMPT_LENGTH"
        "data.max_response_length=$MAX_RESPONSE_LENGTH"
        "actor_rollout_ref.model.path=$MODEL"
        "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=$((TOKEN_LEN_FACTOR * (MAX_PROMPT_LENGTH + MAX_RESPONSE_LENGTH)))"
        "actor_rollout_ref.rollout.n=$N"
        "actor_rollout_ref.rollout.name=$ENGINE"
        "actor_rollout_ref.rollout.tensor_model_parallel_size=$ROLLOUT_TP"
        "actor_rollout_ref.rollout.gpu_memory_utilization=$GPU_MEM_UTIL"
        "data.seed=$SEED"
        "actor_rollout_ref.rollout.seed=$SEED"
        "actor_rollout_ref.actor.data_loader_seed=$SEED"
        "trainer.nnodes=$NNODES"
        "trainer.max_actor_ckpt_to_keep=$MAX_CKPT_TO_KEEP"
        "trainer.n_gpus_per_node=$GPUS_PER_NODE"
        "trainer.save_freq=$STEPS_PER_EPOCH"
        "trainer.test_freq=$STEPS_PER_EPOCH"
        "trainer.experiment_name=$EXP_NAME"
        "trainer.default_local_dir=$CKPT_ROOT/$EXP_NAME"
        "${PRESET_OVERRIDES[@]}"
        "${recipe_args[@]}"
        "${with_args[@]}"
        "${user_args[@]}"
    )

    case "$mode" in
        print)
            printf '%s\n' "${overrides[@]}"
            ;;
        dry-run)
            exec "$PYTHON" -m verl_focal.main_ppo --dry-run "${overrides[@]}"
            ;;
        launch)
            local f
            local -a missing=()
            for f in ${TRAIN_FILES//,/ } ${VAL_FILES//,/ }; do
                [[ -f "$f" ]] || missing+=("$f")
            done
            if ((${#missing[@]})); then
                printf 'recipe %s: missing data file: %s\n' "$RECIPE_NAME" "${missing[@]}" >&2
                echo "  prepare it with e.g.:  verl-focal prep-data deepscaler --tokenizer $MODEL --out $TRAIN_FILES" >&2
                echo "                         verl-focal prep-data eval --out-dir $DATA_DIR/eval" >&2
                exit 2
            fi
            if ((NNODES > 1)) && ! ray status >/dev/null 2>&1; then
                _recipe_die "NNODES=$NNODES but no Ray cluster is running here: run 'ray start --head' on this node and 'ray start --address=<this node>:6379' on the other $((NNODES - 1)), then rerun"
            fi
            exec "$PYTHON" -m verl_focal.main_ppo "${overrides[@]}"
            ;;
    esac
}
