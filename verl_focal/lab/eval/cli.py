"""``verl-focal eval {generate,score,report,frontier,plan,families,interpolate,example,rare-set,rare-nll}``.

* ``generate``  -- sample n responses per problem of an eval parquet (vllm | sglang | transformers), resumable JSONL;
* ``score``     -- score one folder of runs (our JSONL or verl validation dumps) and write the report;
* ``report``    -- the report only, from already scored files;
* ``frontier``  -- methods against control families at equal pass@k (:mod:`verl_focal.lab.eval.frontier_cli`);
* ``plan``      -- a pilot's design, then a full design's power and cost from the pilot (:mod:`.plan`);
* ``families``  -- the families file from run folders named as the recipes name them (:mod:`.families_from_runs`);
* ``interpolate`` -- θ_λ = λ·θ_RL + (1 − λ)·θ_base checkpoints, tensor by tensor (:mod:`.interpolate`);
* ``example``   -- small scored example runs and a families file, offline (:mod:`verl_focal.lab.eval.example`);
* ``rare-set``  -- base-model correct samples -> top 1% by base NLL -> rare set (JSONL);
* ``rare-nll``  -- NLL of a checkpoint on the rare set -> ΔNLL_rare.

Heavy imports (torch, transformers, matplotlib, backends) happen inside the commands.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from verl_focal.config.errors import InputError, did_you_mean
from verl_focal.lab.eval.records import LeftOut, is_correct, latest_dump, read_records, write_jsonl_line


# ----------------------------------------------------------------------------------------------
# argument groups
# ----------------------------------------------------------------------------------------------
def _add_model_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", default="cpu", help="transformers device (cpu, cuda, cuda:1)")
    p.add_argument("--dtype", default="auto", help="model dtype: auto | float32 | bfloat16 | float16")


def _add_runs_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runs", help="folder with one entry per run: <run>.jsonl, or <run>/ holding *.jsonl files "
                                  "(one per benchmark) or a verl validation_data_dir (<step>.jsonl)")
    p.add_argument("--run", action="append", default=[], metavar="NAME=PATH",
                   help="a run given explicitly (file or folder as above); repeatable")
    p.add_argument("--step", type=int, help="for verl validation_data_dir runs: the step to read (default: latest)")
    p.add_argument("--data-source", default="unknown",
                   help="data_source for lines that carry none (verl dumps without a data_source reward extra)")
    p.add_argument("--out-dir", "--out", dest="out_dir", required=True, metavar="DIR",
                   help="output folder for table.md, results.csv, significance.csv, passk.png "
                        "(--out is accepted as an alias)")


def _add_report_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--baseline", help="run the others are tested against (default: the first run by name)")
    p.add_argument("--k-max", type=int, default=256, help="largest k of the curves and the table (default 256)")
    p.add_argument("--ood", default=",".join(("gpqa", "ifeval", "synlogic")),
                   help="comma list of substrings marking out-of-domain data sources (case-insensitive)")
    p.add_argument("--m", type=int, help="subsample size of the significance test (default min(256, n/4))")
    p.add_argument("--iterations", type=int, default=50_000, help="subsampling iterations (default 50,000)")
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided significance level (default 0.05)")
    p.add_argument("--seed", type=int, default=0, help="seed of the significance test")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from verl_focal.lab.eval.example import add_example_parser
    from verl_focal.lab.eval.families_from_runs import add_families_parser
    from verl_focal.lab.eval.frontier_cli import add_frontier_parser, add_plan_parser
    from verl_focal.lab.eval.interpolate import add_interpolate_parser

    sub = parser.add_subparsers(dest="eval_command", required=True,
                                metavar="{generate,score,report,frontier,plan,families,interpolate,example,rare-set,"
                                        "rare-nll}")

    g = sub.add_parser("generate", help="sample n responses per problem into a resumable JSONL")
    g.add_argument("--data", required=True, help="evaluation parquet (verl RL schema, from `verl-focal prep-data`)")
    g.add_argument("--model", required=True, help="model folder (Hugging Face format)")
    g.add_argument("--out", required=True, help="output JSONL (resumed if it exists)")
    g.add_argument("--n", type=int, default=1024, help="samples per problem (paper: 1024)")
    g.add_argument("--backend", choices=["vllm", "sglang", "transformers"], default="vllm",
                   help="generation engine (default vllm; transformers runs on CPU)")
    g.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (paper: 1.0)")
    g.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling top-p (paper: 1.0)")
    g.add_argument(
        "--max-tokens", type=int, default=8192, help="response length as trained (paper: 8192; 4096 for Qwen3-4B-Base)"
    )
    g.add_argument("--seed", type=int, default=0, help="sampling seed")
    g.add_argument(
        "--problems-per-call",
        type=int,
        help="problems per backend call between flushes (default: 64 vllm/sglang, 1 transformers)",
    )
    g.add_argument("--batch-size", type=int, default=16, help="transformers: sequences per generate() call")
    g.add_argument("--tp", type=int, default=1, help="vllm/sglang tensor parallel size")
    g.add_argument(
        "--gpu-memory-utilization", type=float, default=0.9, help="vllm/sglang share of GPU memory (default 0.9)"
    )
    g.add_argument("--max-model-len", type=int, help="vllm/sglang context length (default: the model's)")
    g.add_argument("--limit", type=int, help="only the first N problems")
    g.add_argument("--chat-template-kwargs", default="{}", help='JSON, e.g. \'{"enable_thinking": true}\'')
    g.add_argument("--overwrite", action="store_true", help="start again instead of resuming")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_model_opts(g)

    s = sub.add_parser("score", help="score a folder of runs and write table, CSV, plot and significance")
    _add_runs_opts(s)
    _add_report_opts(s)
    s.add_argument(
        "--scorer",
        default="verl_focal.reward:compute_score",
        help="module:function with verl's compute_score signature",
    )
    s.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="scoring processes (0 = in this process)")
    s.add_argument("--timeout-s", type=float, default=10.0, help="time limit per answer (seconds)")
    s.add_argument("--no-progress", action="store_true", help="no progress bar")
    s.add_argument("--failures", metavar="PATH",
                   help="write JSONL of rejected answers that are not obviously wrong (pred, ground_truth) "
                        "to audit the grading; see docs/eval.md")

    r = sub.add_parser("report", help="table, CSV, plot and significance from already scored files")
    _add_runs_opts(r)
    _add_report_opts(r)

    add_frontier_parser(sub)
    add_plan_parser(sub)
    add_families_parser(sub)
    add_interpolate_parser(sub)
    add_example_parser(sub)

    rs = sub.add_parser("rare-set", help="top fraction of correct base-model samples by base NLL")
    src = rs.add_mutually_exclusive_group(required=True)
    src.add_argument("--generations", nargs="+", help="JSONL from `eval generate` with the base model (scored or not)")
    src.add_argument("--data", help="training-prompt parquet: sample from the base model first (transformers/vllm)")
    rs.add_argument("--model", required=True, help="the base model folder")
    rs.add_argument("--out", required=True, help="rare-set JSONL to write")
    rs.add_argument("--top-frac", type=float, default=0.01, help="fraction kept, highest base NLL first (paper: 0.01)")
    rs.add_argument("--n", type=int, default=800, help="with --data: samples per prompt (paper: 800)")
    rs.add_argument("--limit", type=int, help="with --data: only the first N prompts (paper: 256)")
    rs.add_argument("--backend", choices=["vllm", "sglang", "transformers"], default="vllm",
                    help="with --data: generation engine (default vllm)")
    rs.add_argument("--max-tokens", type=int, default=8192, help="with --data: response length (default 8192)")
    rs.add_argument("--seed", type=int, default=0, help="with --data: sampling seed")
    rs.add_argument(
        "--batch-size", type=int, default=16, help="with --data and transformers: sequences per generate() call"
    )
    rs.add_argument("--scorer", default="verl_focal.reward:compute_score",
                    help="module:function with verl's compute_score signature, for unscored samples")
    rs.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="scoring processes (0 = in this process)")
    rs.add_argument("--timeout-s", type=float, default=10.0, help="scoring time limit per answer (seconds)")
    rs.add_argument("--max-tokens-per-batch", type=int, default=16384, help="NLL batching token budget")
    rs.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_model_opts(rs)

    rn = sub.add_parser("rare-nll", help="ΔNLL_rare of a checkpoint on a rare set")
    rn.add_argument("--rare-set", required=True, help="JSONL from `eval rare-set`")
    rn.add_argument("--model", required=True, help="checkpoint folder (Hugging Face format)")
    rn.add_argument("--out", help="write the result as JSON here too")
    rn.add_argument("--max-tokens-per-batch", type=int, default=16384, help="NLL batching token budget")
    rn.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_model_opts(rn)


# ----------------------------------------------------------------------------------------------
# run discovery
# ----------------------------------------------------------------------------------------------
def _run_files(path: Path, step: int | None) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise InputError(f"run path {path} does not exist; give a <run>.jsonl file or a <run>/ folder")
    stepped = [p for p in path.glob("*.jsonl") if p.stem.isdigit()]
    if stepped:  # a verl validation_data_dir
        if step is not None:
            f = path / f"{step}.jsonl"
            if not f.exists():
                raise InputError(f"--step {step}: {f} does not exist (steps: {sorted(int(p.stem) for p in stepped)})")
            return [f]
        return [latest_dump(path)]
    files = sorted(path.glob("*.jsonl"))
    if not files:
        raise InputError(f"run folder {path} holds no *.jsonl files")
    return files


def discover_runs(runs_dir: str | None, explicit: list[str], step: int | None,
                  exclude: str | None = None) -> dict[str, list[Path]]:
    """Run name -> its JSONL files, from ``--runs DIR`` entries and ``--run NAME=PATH`` options.

    ``exclude`` (the output folder) is never taken for a run, so ``--out-dir`` may sit inside ``--runs``.
    """
    out: dict[str, list[Path]] = {}
    skip = Path(exclude).resolve() if exclude else None
    if runs_dir:
        d = Path(runs_dir)
        if not d.is_dir():
            what = "not a folder" if d.exists() else "no such folder"
            raise InputError(f"--runs {d}: {what}; give the folder holding <run>.jsonl files or <run>/ folders")
        ignored = []
        for entry in sorted(d.iterdir()):
            if entry.name.startswith(".") or entry.name.endswith(".meta.json") or entry.resolve() == skip:
                continue
            if entry.is_file() and entry.suffix == ".jsonl":
                out[entry.stem] = [entry]
            elif entry.is_dir():
                out[entry.name] = _run_files(entry, step)
            else:
                ignored.append(entry.name)
        if ignored:  # said, not silently skipped: a run may have been saved in another format
            print(f"--runs {d}: not a run, left out: {', '.join(ignored[:5])}"
                  f"{f' and {len(ignored) - 5} more' if len(ignored) > 5 else ''} (a run is <run>.jsonl or <run>/)",
                  file=sys.stderr)
    for spec in explicit:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise InputError(f"--run {spec!r}: expected NAME=PATH")
        out[name] = _run_files(Path(path), step)
    if not out:
        where = f"--runs {runs_dir} holds no <run>.jsonl files or <run>/ folders" if runs_dir else "no runs given"
        raise InputError(f"{where}: give --runs DIR (with <run>.jsonl files or <run>/ folders) or --run NAME=PATH")
    return out


def load_run(files: list[Path], default_data_source: str, command: str = "score",
             name: str = "") -> tuple[list[dict], LeftOut]:
    """Records of one run (normalised) that have what ``command`` needs, and the lines left out.

    A file that is not JSONL, is empty or has no usable line is refused (one line, naming the file,
    the field and what to pass); see :func:`verl_focal.lab.eval.records.read_records`.  So are lines that
    repeat a ``(problem, sample)`` pair, in one file or across the run's files (named by line number).
    """
    from verl_focal.lab.eval.records import Duplicates

    records: list[dict] = []
    left = LeftOut()
    label = f"run {name}: " if name else ""
    duplicates = Duplicates()
    for f in files:
        recs, lo = read_records(f, command, default_data_source, label=label, duplicates=duplicates)
        records += recs
        left.add(lo)
    duplicates.refuse(label)  # a repeated (problem, sample) would count twice in pass@k
    return records, left


def _check_baseline(baseline: str | None, runs) -> None:
    if baseline is not None and baseline not in runs:
        raise InputError(f"--baseline {baseline!r} is not one of the runs {sorted(runs)}{did_you_mean(baseline, runs)}")


def _report_from_records(args, runs: dict[str, list[dict]], extra: dict) -> int:
    from verl_focal.lab.eval.records import count_correct
    from verl_focal.lab.eval.report import build_report, render_table, write_report

    counts = {}
    for name, recs in runs.items():
        try:
            counts[name] = count_correct(recs)
        except (KeyError, ValueError) as e:
            raise InputError(f"run {name}: {e.args[0]}") from None
    baseline = args.baseline
    _check_baseline(baseline, counts)
    if baseline is None and len(counts) > 1:
        baseline = sorted(counts)[0]
    report = build_report(counts, baseline=baseline, k_max=args.k_max,
                          ood=[s for s in args.ood.split(",") if s], m=args.m, iterations=args.iterations,
                          alpha=args.alpha, seed=args.seed)
    for line in report.coverage:  # a run on fewer problems: said before the table, on stderr
        print(f"verl-focal eval: warning: {line}", file=sys.stderr)
    paths = write_report(report, args.out_dir, extra=extra)
    print(render_table(report))
    for k, p in paths.items():
        print(f"{k:>12}: {p}")
    return 0


def _print_left_out(name: str, left: LeftOut) -> None:
    """One line on stderr when rows of a run were left out: how many, and the first bad line."""
    if left.count:
        print(f"{name}: {left.summary()}", file=sys.stderr)


# ----------------------------------------------------------------------------------------------
# commands
# ----------------------------------------------------------------------------------------------
def _looks_like_hub_id(name: str) -> bool:
    import re

    return bool(re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", name)) and not name.startswith((".", "~"))


def _require_model(flag: str, path: str) -> None:
    """A model must be a local folder (or, for the engines that download, a hub id ``org/name``)."""
    p = Path(path).expanduser()
    if p.is_dir():
        if not (p / "config.json").exists():
            raise InputError(
                f"{flag} {path}: the folder has no config.json; give a model folder in Hugging Face format"
            )
        return
    if p.exists():
        raise InputError(f"{flag} {path}: is a file; give a model folder in Hugging Face format")
    if not _looks_like_hub_id(path):
        raise InputError(f"{flag} {path}: no such folder; give a local model folder in Hugging Face format")


def _require_file(flag: str, path: str) -> None:
    p = Path(path).expanduser()
    if not p.is_file():
        raise InputError(f"{flag} {path}: {'is a folder' if p.is_dir() else 'no such file'}; give an existing file")


def _cmd_generate(args) -> int:
    from verl_focal.lab.eval.backends import SamplingConfig
    from verl_focal.lab.eval.generate import run_generate

    sampling = SamplingConfig(args.temperature, args.top_p, args.max_tokens, args.seed)
    if args.backend == "transformers":
        bkw = {"batch_size": args.batch_size, "device": args.device, "dtype": args.dtype}
        ppc = args.problems_per_call or 1
    else:
        bkw = {"tensor_parallel_size": args.tp, "gpu_memory_utilization": args.gpu_memory_utilization,
               "max_model_len": args.max_model_len, "dtype": args.dtype}
        ppc = args.problems_per_call or 64
    try:
        tk = json.loads(args.chat_template_kwargs)
    except json.JSONDecodeError as e:
        raise InputError(f"--chat-template-kwargs is not JSON ({e}): {args.chat_template_kwargs!r}") from None
    _require_file("--data", args.data)
    _require_model("--model", args.model)
    if args.n < 1:
        raise InputError(f"--n {args.n}: samples per problem must be >= 1")
    summary = run_generate(args.data, args.model, args.out, args.n, backend=args.backend, sampling=sampling,
                           problems_per_call=ppc, limit=args.limit, overwrite=args.overwrite,
                           progress=not args.no_progress, backend_kwargs=bkw, chat_template_kwargs=tk)
    if summary["cut_bytes"]:
        print(f"removed a partial last line ({summary['cut_bytes']} bytes) left by an interrupted run", file=sys.stderr)
    print(f"{summary['out']}: {summary['problems']} problems x {args.n}; kept {summary['kept']} samples, "
          f"wrote {summary['written']}")
    return 0


def _cmd_score(args) -> int:
    from verl_focal.lab.eval.scoring import load_scorer, score_records

    load_scorer(args.scorer)  # a wrong --scorer is refused before any file is read
    files = discover_runs(args.runs, args.run, args.step, exclude=args.out_dir)
    _check_baseline(args.baseline, files)  # before any scoring
    loaded = {name: load_run(fl, args.data_source, "score", name) for name, fl in files.items()}  # all, then score
    from verl_focal.lab.eval.records import empty_truth_problem

    for name, (recs, left) in loaded.items():  # an empty ground truth scores 0 on every answer: refused, not scored
        problem = empty_truth_problem(recs, left, f"run {name}: ")
        if problem:
            raise InputError(problem)
    scored_dir = Path(args.out_dir) / "scored"
    scored_dir.mkdir(parents=True, exist_ok=True)
    runs, extra = {}, {"scoring": {}}
    for name, fl in files.items():
        recs, left = loaded[name]
        _print_left_out(f"run {name}", left)
        statuses = score_records(recs, scorer=args.scorer, workers=args.workers, timeout_s=args.timeout_s,
                                 progress=not args.no_progress)
        info = {"files": [str(f) for f in fl], "answers": len(recs), "statuses": dict(statuses),
                "skipped_lines": left.count}
        extra["scoring"][name] = info
        print(f"run {name}: scored {len(recs)} answers {dict(sorted(statuses.items()))}; "
              f"left out {left.count} line(s)")
        _refuse_unscorable(name, recs, statuses)
        with open(scored_dir / f"{name}.jsonl", "w", encoding="utf-8") as fh:
            for rec in recs:
                write_jsonl_line(fh, {k: v for k, v in rec.items() if k != "prompt_text"})
        runs[name] = recs
    if args.failures:
        _write_failures(args.failures, runs)
    return _report_from_records(args, runs, extra)


def _refuse_unscorable(name: str, recs: list[dict], statuses) -> None:
    """No number without its cause: a data source whose every answer failed to score ends the command (exit 2)
    with the first cause; answers that failed among scored ones are counted with the first cause."""
    from verl_focal.lab.eval.scoring import unscorable_sources

    dead = unscorable_sources(recs)
    if dead:
        src, n, cause = dead[0]
        more = f" (and {len(dead) - 1} more data source(s))" if len(dead) > 1 else ""
        raise InputError(f"run {name}: none of the {n} answers of data source {src} could be scored{more}; first "
                         f"cause: {cause.removeprefix('error: ')}")
    if statuses.get("error"):
        first = next(r["status"] for r in recs if str(r.get("status", "")).startswith("error"))
        print(f"run {name}: {statuses['error']} answer(s) failed to score and count as wrong; first: "
              f"{first.removeprefix('error: ')}", file=sys.stderr)


def _write_failures(path: str, runs: dict) -> None:
    """``eval score --failures PATH``: rejected, not obviously wrong answers (see failure_pairs)."""
    from verl_focal.lab.eval.scoring import failure_pairs

    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(out, "w", encoding="utf-8") as fh:
        for name, recs in runs.items():
            for row in failure_pairs(recs, name):
                write_jsonl_line(fh, row)
                n += 1
    print(f"wrote {n} rejected answer(s) that are not obviously wrong to {out} (audit them for grading errors)")


def _cmd_report(args) -> int:
    files = discover_runs(args.runs, args.run, args.step, exclude=args.out_dir)
    _check_baseline(args.baseline, files)
    runs, extra = {}, {"skipped_lines": {}}
    for name, fl in files.items():
        recs, left = load_run(fl, args.data_source, "report", name)
        _print_left_out(f"run {name}", left)
        extra["skipped_lines"][name] = left.count
        runs[name] = recs
    return _report_from_records(args, runs, extra)


def _cmd_rare_set(args) -> int:
    from verl_focal.lab.eval.rare import select_rare
    from verl_focal.lab.eval.scoring import score_records

    _require_model("--model", args.model)
    for f in args.generations or []:
        _require_file("--generations", f)
    if args.data:
        _require_file("--data", args.data)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.data:
        from verl_focal.lab.eval.backends import SamplingConfig
        from verl_focal.lab.eval.generate import run_generate

        samples = out.with_name(out.stem + ".samples.jsonl")
        bkw = (
            {"batch_size": args.batch_size, "device": args.device, "dtype": args.dtype}
            if args.backend == "transformers"
            else {"dtype": args.dtype}
        )
        run_generate(args.data, args.model, str(samples), args.n, backend=args.backend,
                     sampling=SamplingConfig(1.0, 1.0, args.max_tokens, args.seed),
                     problems_per_call=1 if args.backend == "transformers" else 64, limit=args.limit,
                     progress=not args.no_progress, backend_kwargs=bkw)
        gen_files = [samples]
    else:
        gen_files = [Path(f) for f in args.generations]
    recs, left = load_run(gen_files, "unknown", "rare-set")
    _print_left_out("--generations", left)
    unscored = [r for r in recs if r.get("acc") is None and r.get("score") is None]
    if unscored:
        score_records(unscored, scorer=args.scorer, workers=args.workers, timeout_s=args.timeout_s,
                      progress=not args.no_progress)
    correct = [r for r in recs if is_correct(r)]
    if not correct:
        raise InputError(f"no correct samples among {len(recs)}: nothing to build a rare set from; "
                         f"give more samples (--n) or an easier --data set")
    nll = _response_nll(args, correct)
    rare = select_rare(correct, nll, args.top_frac)
    with open(out, "w", encoding="utf-8") as fh:
        for r in rare:
            write_jsonl_line(fh, {k: r.get(k) for k in ("uid", "sample", "data_source", "prompt_text", "response",
                                                         "ground_truth", "base_nll")})
    print(f"{len(recs)} samples, {len(correct)} correct, kept {len(rare)} rarest (top {args.top_frac:.2%}) -> {out}")
    return 0


def _response_nll(args, records: list[dict]) -> list[float]:
    """Per-token NLL of each record's ``response`` after its ``prompt_text`` under ``--model``."""
    from verl_focal.lab.eval.nll import load_model, response_nll

    model, tok = load_model(args.model, args.device, args.dtype)
    return response_nll(
        model,
        tok,
        [r["prompt_text"] for r in records],
        [r["response"] for r in records],
        max_tokens_per_batch=args.max_tokens_per_batch,
        device=args.device,
        progress=not args.no_progress,
    )


def _cmd_rare_nll(args) -> int:
    from verl_focal.lab.eval.rare import delta_nll_rare

    _require_file("--rare-set", args.rare_set)
    _require_model("--model", args.model)
    items, left = read_records(args.rare_set, "rare-nll", label="--rare-set ")
    _print_left_out(f"--rare-set {args.rare_set}", left)
    nll = _response_nll(args, items)
    res = delta_nll_rare([float(r["base_nll"]) for r in items], nll)
    res["model"] = args.model
    res["rare_set"] = args.rare_set
    print(json.dumps(res, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(res, indent=1))
    return 0


def _cmd_frontier(args) -> int:
    from verl_focal.lab.eval.frontier_cli import run_frontier

    return run_frontier(args)


def _cmd_plan(args) -> int:
    from verl_focal.lab.eval.frontier_cli import run_plan

    return run_plan(args)


def _cmd_families(args) -> int:
    from verl_focal.lab.eval.families_from_runs import run_families

    return run_families(args)


def _cmd_interpolate(args) -> int:
    from verl_focal.lab.eval.interpolate import run_interpolate

    return run_interpolate(args)


def _cmd_example(args) -> int:
    from verl_focal.lab.eval.example import run_example

    return run_example(args)


COMMANDS = {"generate": _cmd_generate, "score": _cmd_score, "report": _cmd_report, "frontier": _cmd_frontier,
            "plan": _cmd_plan, "families": _cmd_families, "interpolate": _cmd_interpolate, "example": _cmd_example,
            "rare-set": _cmd_rare_set, "rare-nll": _cmd_rare_nll}


#: numeric options checked before any work: dest -> (test, what it must be)
_LIMITS = {
    "n": (lambda v: v >= 1, ">= 1"),
    "limit": (lambda v: v >= 1, ">= 1"),
    "batch_size": (lambda v: v >= 1, ">= 1"),
    "problems_per_call": (lambda v: v >= 1, ">= 1"),
    "tp": (lambda v: v >= 1, ">= 1"),
    "gpu_memory_utilization": (lambda v: 0 < v <= 1, "in (0, 1]"),
    "k_max": (lambda v: v >= 1, ">= 1"),
    "m": (lambda v: v >= 1, ">= 1"),
    "iterations": (lambda v: v >= 1, ">= 1"),
    "alpha": (lambda v: 0 < v < 1, "in (0, 1)"),
    "workers": (lambda v: v >= 0, ">= 0 (0 = score in this process)"),
    "timeout_s": (lambda v: v > 0, "> 0 seconds"),
    "top_frac": (lambda v: 0 < v <= 1, "in (0, 1]"),
    "max_tokens_per_batch": (lambda v: v >= 1, ">= 1"),
}


def _check_limits(args: argparse.Namespace) -> None:
    for dest, (ok, what) in _LIMITS.items():
        v = getattr(args, dest, None)
        if v is not None and not ok(v):
            raise InputError(f"--{dest.replace('_', '-')} {v}: must be {what}")
    out_dir = getattr(args, "out_dir", None)
    if out_dir and Path(out_dir).exists() and not Path(out_dir).is_dir():
        raise InputError(f"--out-dir {out_dir}: is a file; give a folder (it is created if missing)")
    for flag in ("out", "failures"):
        path = getattr(args, flag, None)
        if path and Path(path).is_dir():
            raise InputError(f"--{flag} {path}: is a folder; give a file name")


def run(args: argparse.Namespace) -> int:
    _check_limits(args)
    return COMMANDS[args.eval_command](args)
