"""``verl-focal cues FILE...``: show each trace's cue sequence, signature and cluster.

Every FILE is one solution trace (plain text), a ``.jsonl`` file with one trace per line,
or a JSON array of traces (a ``.json`` file, or any file whose text is a JSON array); a trace
in JSON is a string or an object whose ``--field`` holds the text.  All traces given are
treated as ONE group of correct rollouts and clustered as ``strategy_cue`` would
(ρ-suppression, cosine graph at ε), so you can see why two solutions share a cluster.  One
trace alone is clustered too, with a warning: every cue it has is then in all of the group's
traces, so ρ suppresses them all and its vector is empty.
"""

from __future__ import annotations

import argparse
import json
import sys

from verl_focal.config.errors import InputError

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="trace files (text), .jsonl files (one trace per line) or JSON arrays of traces "
                             "(.json); '-' reads stdin; all of them form one group")
    parser.add_argument("--cue-set", default="math_v1", help="catalogue name or .yaml/.json path (default math_v1)")
    parser.add_argument("--backend", default="auto", choices=["auto", "regex", "hyperscan"],
                        help="cue-matching engine (default auto: Hyperscan when installed, else regex)")
    parser.add_argument("--epsilon", type=float, default=0.5, help="cosine threshold ε (default 0.5)")
    parser.add_argument("--rho", type=float, default=0.75, help="suppression share ρ (default 0.75)")
    parser.add_argument("--field", default="response", help="JSON field holding the text in .jsonl files")
    parser.add_argument("--steps", action="store_true", help="also print every labelled step")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def _read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not a UTF-8 text file (byte {e.object[e.start]:#04x} at offset {e.start}); "
                         f"give a plain-text trace or a .jsonl file of traces") from None
    if "\x00" in text:
        raise InputError(f"{path}: a binary file (it holds NUL bytes, first at offset {text.index(chr(0))}); "
                         f"give a plain-text trace or a .jsonl file of traces")
    return text


def _json_trace(obj: object, where: str, field: str) -> str:
    """The text of one JSON trace: a string, or an object whose ``field`` holds it."""
    if isinstance(obj, dict):
        if field not in obj:
            raise InputError(f"{where}: no field {field!r} (it has {', '.join(sorted(map(str, obj))) or 'no keys'}); "
                             f"choose it with --field")
        obj = obj[field]
    if not isinstance(obj, str):
        raise InputError(f"{where}: a trace must be a string or an object whose --field {field!r} holds the text, "
                         f"got {type(obj).__name__}")
    return obj


def _jsonl(path: str, text: str, field: str) -> list[tuple[str, str]]:
    out = []
    for k, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{k + 1}: not JSON ({e.msg}); one trace per line: a JSON string, "
                             f"or an object whose --field {field!r} holds the text") from None
        out.append((f"{path}:{k + 1}", _json_trace(obj, f"{path}:{k + 1}", field)))
    return out


def _read_file(path: str, field: str) -> tuple[list[tuple[str, str]], str]:
    """The traces of one FILE, and how it was read (for the one-trace warning).

    ``.jsonl``: one trace per line.  ``.json``: a JSON array of traces, one object or one string (JSON
    lines are accepted too).  Any other file is one plain-text trace, unless its whole text is a JSON array.
    """
    text = _read_text(path)
    if path.endswith(".jsonl"):
        return _jsonl(path, text, field), "a .jsonl file with one trace"
    head = text.lstrip()[:1]
    if path.endswith(".json") or head == "[":
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            if not path.endswith(".json"):
                return [(path, text)], f"{path} as one plain-text trace"
            try:  # JSON lines in a .json file
                return _jsonl(path, text, field), f"{path} as JSON lines, one trace"
            except InputError:
                raise InputError(f"{path}: not JSON (line {e.lineno}, column {e.colno}: {e.msg}); give a JSON array "
                                 f"of traces, a .jsonl file with one trace per line, or a plain-text trace") from None
        if isinstance(obj, list):
            return [(f"{path}[{i}]", _json_trace(t, f"{path}[{i}]", field)) for i, t in enumerate(obj)], \
                f"{path} as a JSON array of {len(obj)} trace(s)"
        if isinstance(obj, (dict, str)):
            return [(path, _json_trace(obj, path, field))], f"{path} as one JSON trace"
        raise InputError(f"{path}: a JSON {type(obj).__name__}, not a trace; give a JSON array of traces (strings "
                         f"or objects whose --field {field!r} holds the text)")
    return [(path, text)], f"{path} as one plain-text trace"


def _read(files: list[str], field: str) -> list[tuple[str, str]]:
    """Every trace of ``files`` as (name, text); warns on stderr when there is only one."""
    out, how = [], ""
    for path in files:
        traces, how = _read_file(path, field)
        out += traces
    if not out:
        raise InputError(f"{' '.join(files)}: no trace (an empty JSON array or .jsonl file); give two or more traces")
    if len(out) == 1:
        print(f"verl-focal cues: warning: one trace (read {how}): its cues are in all of the group's traces, so "
              f"ρ suppresses every one and its vector is empty; give two or more traces (files, .jsonl lines "
              f"or a JSON array) to compare them", file=sys.stderr)
    return out


def run(args: argparse.Namespace) -> int:
    from verl_focal.partition.cues import get_extractor, parse_signature, signature
    from verl_focal.partition.cues.engine import normalise
    from verl_focal.partition.graph import bag_of_cues, suppress_common
    from verl_focal.partition.strategy_cue import StrategyCuePartitioner

    try:
        traces = _read(args.files, args.field)
        part = StrategyCuePartitioner(cue_set=args.cue_set, epsilon=args.epsilon, rho=args.rho, backend=args.backend)
    except OSError as e:
        raise InputError(f"{e.filename or args.files}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:  # the traces are read above, so this is the catalogue file
        raise InputError(f"--cue-set {args.cue_set}: not a UTF-8 text file (byte {e.object[e.start]:#04x} at "
                         f"offset {e.start}); give a catalogue name (math_v1) or a .yaml/.json file") from None
    except ValueError as e:
        raise InputError(str(e)) from None
    ex = get_extractor(args.cue_set, args.backend)
    sigs = [signature(t, args.cue_set, args.backend) for _, t in traces]
    labels = part.partition_signatures(sigs)
    seqs = [parse_signature(s)[1] for s in sigs]
    counts, vocab = bag_of_cues(seqs)
    kept = suppress_common(counts, args.rho)
    suppressed = [c for j, c in enumerate(vocab) if counts[:, j].any() and not kept[:, j].any()]
    names = {c.code: c.name for c in ex.catalogue.cues}
    result = {
        "cue_set": ex.catalogue.version,
        "backend": ex.backend,
        "epsilon": args.epsilon,
        "rho": args.rho,
        "suppressed": suppressed,
        "traces": [],
    }
    for (name, text), sig, lab, row in zip(traces, sigs, labels, kept):
        item = {"name": name, "cluster": lab, "signature": sig,
                "vector": {c: int(v) for c, v in zip(vocab, row) if v}}
        if args.steps:
            steps = normalise(text).decode("utf-8", "replace").split("\n")
            item["steps"] = [[ex.step_labels(s)[0], s[:100]] for s in steps if ex.step_labels(s)]
        result["traces"].append(item)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"catalogue {result['cue_set']} ({result['backend']} backend), ε={args.epsilon}, ρ={args.rho}")
    if suppressed:
        print(f"suppressed in this group (in > ρ of the traces): {', '.join(suppressed)}")
    for item in result["traces"]:
        vec = " ".join(f"{c}×{v}" for c, v in item["vector"].items()) or "(empty: residual cluster)"
        print(f"[cluster {item['cluster']}] {item['name']}\n    signature {item['signature']}\n    vector    {vec}")
        for code, snippet in item.get("steps", []):
            print(f"      {code:>5} ({names.get(code, '?')}): {snippet}")
    print(f"{len(set(labels))} cluster(s) among {len(labels)} trace(s)")
    return 0
