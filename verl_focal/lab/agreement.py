"""``verl-focal agreement``: how far judge partitions agree with another partitioner's.

For every group of correct solutions in a JSONL file, partition it with the
judge and with a second partitioner (``strategy_cue`` by default) and report
the adjusted Rand index (Hubert & Arabie 1985; :func:`adjusted_rand_index`) between the two
labelings:

    ARI = (RI − E[RI]) / (max RI − E[RI])

1 means the same partition, about 0 what chance gives, negative worse than
chance.  Groups where the judge failed (and would have fallen back) are left
out of the statistics and counted by reason, since comparing a fallback with
itself says nothing about the judge.

Input: one JSON object per line, ``{"problem": "...", "solutions": ["...", ...]}``
(``responses`` is accepted for ``solutions``; ``problem`` may be omitted).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

__all__ = ["add_arguments", "run", "load_groups", "agreement", "adjusted_rand_index"]


def adjusted_rand_index(a: list, b: list) -> float:
    """The adjusted Rand index of two labelings ``a`` and ``b`` of the same n >= 2 items (Hubert & Arabie 1985).

    With n_ij the contingency table of the two labelings, r_i and c_j its row and column sums and C(x, 2) the pairs
    among x items::

        index = Σ_ij C(n_ij, 2),   R = Σ_i C(r_i, 2),   K = Σ_j C(c_j, 2),   E = R K / C(n, 2)
        ARI   = (index − E) / ((R + K) / 2 − E)

    1 for the same partition (whatever the label names), about 0 for independent ones, negative below chance. When
    the denominator is 0 both labelings are one cluster, or both all singletons (the only solutions of
    (R + K) / 2 = R K / C(n, 2)): the same partition, 1.  Shapes: two length-n sequences of hashable labels.

    Written with scipy rather than taken from scikit-learn: with scikit-learn installed, transformers imports it in
    every process that imports verl (about 1.7 s of CPU each), and this is all the lab needed of it.
    """
    from scipy.special import comb
    from scipy.stats.contingency import crosstab

    if len(a) != len(b) or len(a) < 2:
        raise ValueError(f"adjusted_rand_index needs two labelings of the same n >= 2 items, got {len(a)} and {len(b)}")
    table = crosstab(list(a), list(b)).count
    index = float(comb(table, 2).sum())
    rows, cols = float(comb(table.sum(axis=1), 2).sum()), float(comb(table.sum(axis=0), 2).sum())
    expected = rows * cols / float(comb(len(a), 2))
    top = (rows + cols) / 2
    return 1.0 if top == expected else (index - expected) / (top - expected)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="JSONL file: one group per line, {'problem': str, 'solutions': [str, ...]}")
    parser.add_argument("--config", help="YAML with the judge settings: a trainer config (algorithm.cue.judge), "
                        "a cue section (judge) or the judge section itself")
    parser.add_argument("--base-url", help="override algorithm.cue.judge.base_url (API root ending in /v1)")
    parser.add_argument("--model", help="override algorithm.cue.judge.model")
    parser.add_argument("--api-key-env", help="override algorithm.cue.judge.api_key_env (a variable NAME)")
    parser.add_argument("--timeout-s", type=float, help="override algorithm.cue.judge.timeout_s")
    parser.add_argument("--max-concurrency", type=int, help="override algorithm.cue.judge.max_concurrency")
    parser.add_argument("--cache-dir", help="override algorithm.cue.judge.cache_dir")
    parser.add_argument("--against", default="strategy_cue",
                        help="partitioner to compare with (registered name or pkg.module:Class); default strategy_cue")
    parser.add_argument("--against-kwargs", default="{}", help="JSON keyword arguments for --against")
    parser.add_argument("--out", help="write one JSON line per group (both labelings, judge labels, ARI) here")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def load_groups(path: str | Path) -> list[tuple[str | None, list[str]]]:
    """Read ``(problem, solutions)`` pairs from a JSONL file; errors name the line and the fix."""
    groups = []
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not a UTF-8 text file (byte {e.object[e.start]:#04x} at offset {e.start}); "
                         "give a JSONL file, one group per line") from None
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise ValueError(f"{path}:{lineno}: not JSON ({e})") from None
        sols = obj.get("solutions", obj.get("responses")) if isinstance(obj, dict) else None
        if not isinstance(sols, list) or not all(isinstance(s, str) for s in sols):
            raise ValueError(f"{path}:{lineno}: needs a 'solutions' list of strings "
                             "(the correct solutions of one problem)")
        problem = obj.get("problem")
        groups.append((str(problem) if problem is not None else None, sols))
    return groups


def _judge_section(path: str | None) -> dict[str, Any]:
    if not path:
        return {}
    import yaml

    data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    for keys in (("algorithm", "cue", "judge"), ("cue", "judge"), ("judge",)):
        node: Any = data
        for k in keys:
            node = node.get(k) if isinstance(node, dict) else None
        if isinstance(node, dict):
            return dict(node)
    return dict(data)


def agreement(judge, other, groups: list[tuple[str | None, list[str]]]) -> dict[str, Any]:
    """Per-group ARI between ``judge`` (a JudgePartitioner) and ``other`` (any partitioner).

    Returns ``{"rows": [...], "summary": {...}}``; groups of fewer than 2 solutions are skipped
    (every partition of them is the same).
    """
    handle = judge.submit_groups(groups)  # the judge works while the other partitioner runs
    other_labels = other.partition_groups(groups)
    handle.result()
    rows, aris, reasons = [], [], {}
    m_judge, m_other = [], []
    for i, ((_problem, sols), out, lab) in enumerate(zip(groups, handle.outcomes(), other_labels)):
        row: dict[str, Any] = {"group": i, "n": len(sols), "source": out.source, "other": list(lab)}
        if len(sols) < 2:
            row["skipped"] = "fewer than 2 solutions"
        elif out.source == "fallback":
            row["skipped"] = f"judge failed: {out.reason}"
            reasons[out.reason] = reasons.get(out.reason, 0) + 1
        else:
            ari = adjusted_rand_index(out.labels, lab)
            row.update(judge=list(out.labels), names=out.names, ari=ari)
            aris.append(ari)
            m_judge.append(len(set(out.labels)))
            m_other.append(len(set(lab)))
        rows.append(row)
    summary: dict[str, Any] = {
        "groups": len(groups),
        "compared": len(aris),
        "judge_failed": reasons,
        "ari_mean": statistics.fmean(aris) if aris else None,
        "ari_median": statistics.median(aris) if aris else None,
        "ari_std": statistics.pstdev(aris) if aris else None,
        "identical_frac": sum(a == 1.0 for a in aris) / len(aris) if aris else None,
        "clusters_judge_mean": statistics.fmean(m_judge) if m_judge else None,
        "clusters_other_mean": statistics.fmean(m_other) if m_other else None,
    }
    return {"rows": rows, "summary": summary}


def run(args: argparse.Namespace) -> int:
    from verl_focal.config.errors import InputError, UserError
    from verl_focal.partition.base import get_partitioner
    from verl_focal.partition.judge import JudgePartitioner, check_judge

    if args.out and Path(args.out).is_dir():  # before any request, not after the last one
        raise InputError(f"--out {args.out}: is a folder; give a file name for the JSONL rows")
    try:
        groups = load_groups(args.path)
        section = _judge_section(args.config)
        for flag, key in (("base_url", "base_url"), ("model", "model"), ("api_key_env", "api_key_env"),
                          ("timeout_s", "timeout_s"), ("max_concurrency", "max_concurrency"),
                          ("cache_dir", "cache_dir")):
            if getattr(args, flag) is not None:
                section[key] = getattr(args, flag)
        section["fallback"] = "single"  # failed groups are excluded, so the fallback never matters here
        try:
            against_kwargs = json.loads(args.against_kwargs)
        except ValueError as e:
            raise InputError(f"--against-kwargs {args.against_kwargs!r} is not JSON ({e})") from None
        other = get_partitioner(args.against, **against_kwargs)
        # a dead server, a wrong key or an unknown model: say so once, naming the URL, before any request
        problems = check_judge(section)
        if problems:
            raise InputError("; ".join(problems))
        judge = JudgePartitioner(section)
    except UserError:
        raise
    except (OSError, ValueError) as e:
        raise InputError(str(e)) from None
    try:
        result = agreement(judge, other, groups)
    finally:
        judge.close()
    s = result["summary"]
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            for row in result["rows"]:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    if args.json:
        print(json.dumps(s, indent=2))
    else:
        print(f"groups: {s['groups']}  compared: {s['compared']}  judge failed: {s['judge_failed'] or 0}")
        if s["compared"]:
            print(f"adjusted Rand index, judge vs {args.against}: mean {s['ari_mean']:.3f}  "
                  f"median {s['ari_median']:.3f}  std {s['ari_std']:.3f}  identical {s['identical_frac']:.1%}")
            print(f"clusters per group: judge {s['clusters_judge_mean']:.2f}  "
                  f"{args.against} {s['clusters_other_mean']:.2f}")
    return 0 if s["compared"] else 1
