"""`eval score` with the package scorer on GPQA, IFEval and SynLogic records: the OOD average of
F-GRPO Table 1 is the unweighted mean of the three, and table.md says what each average covers."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from verl_focal.cli import main as cli_main

N = 4
IFE_GT = json.dumps({"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}], "prompt": "p"})
SYN_GT = json.dumps({"task": "object_counting", "answer": "7", "metadata": {}})


def _recs(src, gt, good, bad, n_correct):
    """Problem-wise records: n_correct[i] of N responses are ``good``."""
    out = []
    for i, c in enumerate(n_correct):
        for s in range(N):
            out.append({"uid": f"{src}#{i}", "sample": s, "data_source": src,
                        "response": good if s < c else bad, "ground_truth": gt, "extra_info": {"index": i}})
    return out


def _rows(path: Path) -> dict:
    with open(path) as fh:
        return {(r["run"], r["benchmark"]): r for r in csv.DictReader(fh)}


@pytest.fixture()
def run_dir(tmp_path):
    recs = (_recs("verl_focal/gpqa_diamond", "B", "so \\boxed{B}", "so \\boxed{C}", [4, 0])
            + _recs("verl_focal/ifeval", IFE_GT, "no commas here", "a, b", [2, 1])
            + _recs("verl_focal/synlogic", SYN_GT, "\\boxed{7}", "\\boxed{6}", [1, 3]))
    d = tmp_path / "runs"
    d.mkdir()
    (d / "grpo.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    return d


def test_ood_average_has_gpqa_ifeval_synlogic(tmp_path, run_dir, capsys):
    out = tmp_path / "rep"
    # a 3 s limit per answer: the seconds of nltk/if-verifiable imports are paid by the scorer's
    # warm_up before the first answer, not inside its limit (all 24 answers score "ok")
    assert cli_main(["eval", "score", "--runs", str(run_dir), "--out", str(out), "--no-progress",
                     "--iterations", "200", "--timeout-s", "3"]) == 0
    assert "{'ok': 24}" in capsys.readouterr().out
    rows = _rows(out / "results.csv")
    p1 = {"gpqa_diamond": (4 + 0) / 8, "ifeval": (2 + 1) / 8, "synlogic": (1 + 3) / 8}
    for b, v in p1.items():
        assert rows[("grpo", b)]["domain"] == "ood"
        assert float(rows[("grpo", b)]["pass@1"]) == pytest.approx(100 * v, abs=1e-3)
    assert float(rows[("grpo", "avg-ood")]["pass@1"]) == pytest.approx(100 * np.mean(list(p1.values())), abs=1e-3)
    # pass@4 with n = 4: a problem counts when any response is correct
    assert float(rows[("grpo", "avg-ood")]["pass@4"]) == pytest.approx(100 * np.mean([0.5, 1.0, 1.0]), abs=1e-3)
    table = (out / "table.md").read_text()
    assert "gpqa_diamond pass@1 / pass@4 | ifeval pass@1 / pass@4 | synlogic pass@1 / pass@4" in table
    assert "avg ood: unweighted mean over gpqa_diamond, ifeval, synlogic." in table
    assert "lacks" not in table


def test_table_warns_when_an_ood_benchmark_is_missing(tmp_path, run_dir):
    lines = [l for l in (run_dir / "grpo.jsonl").read_text().splitlines() if "synlogic" not in l]
    (run_dir / "grpo.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "rep"
    assert cli_main(["eval", "score", "--runs", str(run_dir), "--out", str(out), "--no-progress",
                     "--iterations", "200"]) == 0
    assert "avg ood lacks synlogic" in (out / "table.md").read_text()
