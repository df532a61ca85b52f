"""``verl-focal prep-data``: write the papers' training and evaluation sets as verl parquet files.

Examples::

    verl-focal prep-data deepscaler --tokenizer /models/Qwen2.5-7B            # from the HF hub
    verl-focal prep-data deepscaler --source deepscaler.json --tokenizer /models/Qwen2.5-7B
    verl-focal prep-data math-subset --source math_train.parquet --tokenizer /models/Qwen2.5-Math-7B
    verl-focal prep-data eval --source aime24=aime24.jsonl --sets aime24,math500 --tokenizer /models/Qwen2.5-7B
    verl-focal prep-data eval --sets ifeval,synlogic --source ifeval=ifeval_input_data.jsonl \
        --source synlogic=synlogic_easy/validation.parquet

    verl-focal prep-data example --out-dir /tmp/example_data        # offline: small files for dry runs

Output goes under ``$VERL_FOCAL_DATA`` (default ``~/data/verl_focal``), where the recipes look.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from verl_focal.config.errors import InputError

DEFAULT_DATA_DIR = os.path.expanduser(os.environ.get("VERL_FOCAL_DATA", "~/data/verl_focal"))


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _json_obj(text: str) -> dict:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise argparse.ArgumentTypeError(f"not JSON: {e.msg}") from e
    if not isinstance(obj, dict):
        raise argparse.ArgumentTypeError("must be a JSON object, e.g. '{\"enable_thinking\": true}'")
    return obj


def _common(p: argparse.ArgumentParser, *, tokenizer_required_hint: bool) -> None:
    p.add_argument("--tokenizer", default=None,
                   help="model directory (or hub name) whose tokenizer + chat template count prompt tokens"
                   + (" (required unless --max-prompt-tokens 0)" if tokenizer_required_hint else " (optional)"))
    p.add_argument("--max-prompt-tokens", type=int, default=1024,
                   help="limit on the chat-templated prompt (system + user + template tokens + assistant header), "
                        "counted as verl's data.filter_overlong_prompts counts it (default 1024, the paper's)")
    p.add_argument("--prompt-style", choices=("system", "user-suffix"), default="system",
                   help="instruction as a system turn (paper) or appended to the user turn")
    p.add_argument("--chat-template-kwargs", type=_json_obj, default=None,
                   help="JSON passed to apply_chat_template, the same as data.apply_chat_template_kwargs "
                        "(e.g. '{\"enable_thinking\": true}' for Qwen3)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Sub-commands ``deepscaler``, ``math-subset`` and ``eval``."""
    sub = parser.add_subparsers(dest="dataset", required=True, metavar="{deepscaler,math-subset,eval,example}")

    d = sub.add_parser("deepscaler", help="F-GRPO training set (DeepScaleR, 39,202 rows in the paper)")
    d.add_argument("--source", default=None,
                   help="local .json/.jsonl/.parquet with problem/answer fields, or a HF dataset name "
                        "(default agentica-org/DeepScaleR-Preview-Dataset)")
    d.add_argument("--split", default="train", help="split of a HF dataset (default train)")
    d.add_argument("--out", default=os.path.join(DEFAULT_DATA_DIR, "deepscaler", "train.parquet"),
                   help="parquet file to write (default under $VERL_FOCAL_DATA)")
    d.add_argument("--problem-field", default="problem", help="field holding the problem text (default problem)")
    d.add_argument("--answer-field", default="answer", help="field holding the reference answer (default answer)")
    d.add_argument("--system-prompt", default=None, help="override the paper's system prompt")
    d.add_argument("--collapse-duplicates", action="store_true",
                   help="also keep only the first copy of problems repeated with agreeing answers "
                        "(the paper removes only conflicting ones)")
    _common(d, tokenizer_required_hint=True)

    m = sub.add_parser("math-subset", help="Cue-GRPO training set: a seeded sample of MATH level 3-5 problems")
    m.add_argument("--source", default=None,
                   help="local file or HF name of the MATH training split with problem/level and answer or "
                        "solution fields (default DigitalLearningGmbH/MATH-lighteval)")
    m.add_argument("--split", default="train", help="split of a HF dataset (default train)")
    m.add_argument("--out", default=os.path.join(DEFAULT_DATA_DIR, "math_l3to5", "train.parquet"),
                   help="parquet file to write (default under $VERL_FOCAL_DATA)")
    m.add_argument("--levels", type=_csv, default=["3", "4", "5"], help="comma list (default 3,4,5)")
    m.add_argument("--sample", type=int, default=1000, help="rows to keep (default 1000, the paper's)")
    m.add_argument("--seed", type=int, default=0, help="seed of the sample")
    m.add_argument("--problem-field", default="problem", help="field holding the problem text (default problem)")
    m.add_argument("--answer-field", default="answer",
                   help="field holding the answer; without it, the \\boxed{} answer of `solution` (default answer)")
    m.add_argument("--level-field", default="level", help="field holding the difficulty level (default level)")
    _common(m, tokenizer_required_hint=True)

    e = sub.add_parser("eval", help="evaluation sets (AIME24/25, AMC23, MATH500, Minerva, OlympiadBench; OOD: "
                                    "GPQA-Diamond, IFEval, SynLogic)")
    e.add_argument("--sets", type=_csv, default=None, help="comma list (default: all)")
    e.add_argument("--source", action="append", default=[], metavar="NAME=PATH",
                   help="read set NAME from a local file or another HF name instead of its default (repeatable)")
    e.add_argument("--out-dir", default=os.path.join(DEFAULT_DATA_DIR, "eval"),
                   help="folder for <set>.parquet files (default under $VERL_FOCAL_DATA)")
    e.add_argument("--seed", type=int, default=0, help="seed of the GPQA option order")
    e.add_argument("--ood-system-prompt", default=None,
                   help="system prompt of the IFEval and SynLogic rows (default F-GRPO Table 9's "
                        "\"You are a helpful assistant.\"; '' for no system turn)")
    e.add_argument("--synlogic-skip-unverified", action="store_true",
                   help="drop (and count) SynLogic rows of tasks that have no verifier instead of stopping")
    _common(e, tokenizer_required_hint=False)

    x = sub.add_parser("example", help="small valid train and validation parquets, offline (no network, no "
                                       "tokenizer), laid out as the recipes' DATA_DIR expects: for dry runs")
    x.add_argument("--out-dir", required=True, metavar="DIR",
                   help="the DATA_DIR to fill (deepscaler/, math_l3to5/, eval/); then "
                        "DATA_DIR=DIR bash recipes/deepscaler/<recipe>.sh --dry-run")
    x.add_argument("--train-rows", type=int, default=None, help="rows per training file (default 512)")
    x.add_argument("--val-rows", type=int, default=None, help="rows per validation file (default 16)")


def _print_stats(stats: dict, out: str) -> None:
    print(f"wrote {stats['written']} rows to {out} (counts in {out}.stats.json)")
    for k, v in stats.items():
        if k in ("options",):
            continue
        print(f"  {k:<28} {v}")


def _example(args: argparse.Namespace) -> int:
    """``prep-data example``: write the example DATA_DIR and say how to use it."""
    from verl_focal.data.example import TRAIN_ROWS, VAL_ROWS, write_example

    if os.path.exists(args.out_dir) and not os.path.isdir(args.out_dir):
        raise InputError(f"--out-dir {args.out_dir}: is a file; give a folder (it is created if missing)")
    written = write_example(args.out_dir, args.train_rows or TRAIN_ROWS, args.val_rows or VAL_ROWS)
    root = os.path.abspath(args.out_dir)
    folders: dict[str, list[tuple[str, int]]] = {}
    for path, rows in written:
        folders.setdefault(os.path.basename(os.path.dirname(path)), []).append((os.path.basename(path), rows))
    for folder, files in folders.items():
        print(f"{folder}/: " + ", ".join(f"{name} ({rows} rows)" for name, rows in files))
    print(f"example data (arithmetic; it teaches nothing) in {root}; check a recipe with it:\n"
          f"  DATA_DIR={root} bash recipes/deepscaler/f_grpo.sh --dry-run\n"
          f"real data: verl-focal prep-data deepscaler|math-subset|eval --tokenizer MODEL (docs/recipes.md)")
    return 0


def run(args: argparse.Namespace) -> int:
    from verl_focal.data.evalsets import EVAL_SETS
    from verl_focal.data.filters import load_tokenizer
    from verl_focal.data.prepare import (
        DEEPSCALER_HF,
        MATH_HF,
        PAPER_DEEPSCALER_COUNT,
        eval_spec,
        prepare_eval_set,
        prepare_training_set,
    )
    from verl_focal.data.records import DataPrepError
    from verl_focal.data.schema import MATH_SYSTEM_PROMPT, OOD_SYSTEM_PROMPT

    current = getattr(args, "source", None) if isinstance(getattr(args, "source", None), str) else None
    try:
        if args.dataset == "example":
            return _example(args)
        if args.dataset == "deepscaler":
            stats = prepare_training_set(
                source=args.source or DEEPSCALER_HF, out_path=args.out, name="deepscaler",
                tokenizer_path=args.tokenizer, max_prompt_tokens=args.max_prompt_tokens,
                system_prompt=args.system_prompt or MATH_SYSTEM_PROMPT, prompt_style=args.prompt_style,
                collapse_duplicates=args.collapse_duplicates, problem_field=args.problem_field,
                answer_field=args.answer_field, split=args.split, template_kwargs=args.chat_template_kwargs)
            _print_stats(stats, args.out)
            print(f"  (the paper reports {PAPER_DEEPSCALER_COUNT} rows for the full DeepScaleR set)")
        elif args.dataset == "math-subset":
            try:
                levels = [int(x) for x in args.levels]
            except ValueError:
                raise DataPrepError(f"--levels {','.join(args.levels)}: expected integers such as 3,4,5") from None
            stats = prepare_training_set(
                source=args.source or MATH_HF, out_path=args.out, name="math_l3to5",
                tokenizer_path=args.tokenizer, max_prompt_tokens=args.max_prompt_tokens,
                prompt_style=args.prompt_style, problem_field=args.problem_field, answer_field=args.answer_field,
                split=args.split, template_kwargs=args.chat_template_kwargs, levels=levels,
                level_field=args.level_field, sample=args.sample, seed=args.seed)
            _print_stats(stats, args.out)
        else:
            names = args.sets or list(EVAL_SETS)
            specs = [eval_spec(n) for n in names]
            overrides: dict[str, str] = {}
            for item in args.source:
                if "=" not in item:
                    raise DataPrepError(f"--source {item!r}: expected NAME=PATH, e.g. aime24=/data/aime24.jsonl")
                k, v = item.split("=", 1)
                eval_spec(k)
                overrides[k] = v
            unused = set(overrides) - set(names)
            if unused:
                raise DataPrepError(f"--source given for {sorted(unused)} but --sets does not include them")
            tok = load_tokenizer(args.tokenizer) if args.tokenizer else None
            for spec in specs:
                current = overrides.get(spec.name)
                out = os.path.join(args.out_dir, f"{spec.name}.parquet")
                stats = prepare_eval_set(spec, out_path=out, source=overrides.get(spec.name), tokenizer=tok,
                                         max_prompt_tokens=args.max_prompt_tokens, prompt_style=args.prompt_style,
                                         template_kwargs=args.chat_template_kwargs, seed=args.seed,
                                         ood_system_prompt=(OOD_SYSTEM_PROMPT if args.ood_system_prompt is None
                                                            else args.ood_system_prompt),
                                         synlogic_skip_unverified=args.synlogic_skip_unverified)
                _print_stats(stats, out)
                over = stats.get(f"prompts_over_{args.max_prompt_tokens}_tokens", 0)
                if over:
                    print(f"  warning: {over} {spec.name} prompts exceed {args.max_prompt_tokens} tokens; raise "
                          f"data.max_prompt_length to {stats['longest_prompt_tokens']} or they fail at validation",
                          file=sys.stderr)
    except DataPrepError as e:
        raise InputError(str(e)) from e
    except UnicodeDecodeError as e:  # a binary file given as .json/.jsonl
        raise InputError(f"--source {current or 'file'}: not a UTF-8 text file (byte {e.object[e.start]:#04x} at "
                         f"offset {e.start}); give a .json, .jsonl or .parquet file") from None
    except json.JSONDecodeError as e:  # a .json file that is not JSON (a .jsonl one gets DataPrepError)
        src = current or "the input file"
        raise InputError(f"{src}: not valid JSON (line {e.lineno}, column {e.colno}: {e.msg}); fix the file") from None
    except Exception as e:
        if type(e).__module__.startswith("pyarrow") and current:  # a damaged or mislabelled .parquet
            raise InputError(f"--source {current}: cannot read it as parquet ({e}); give a .json, .jsonl or "
                             f".parquet file") from None
        raise
    except OSError as e:  # a tokenizer or source that cannot be read
        where = getattr(e, "filename", None) or args.tokenizer or ""
        raise InputError(f"{where}: {e.strerror or e}".lstrip(": ")) from None
    return 0
