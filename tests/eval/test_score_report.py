"""`verl-focal eval score` / `report`: one command from a folder of runs to table, CSV, plot, marks."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from verl_focal.cli import main as cli_main
from verl_focal.lab.eval import pass_at_k

TOY_SCORER = '''
import time

def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):
    if "SLEEP" in solution_str:
        time.sleep(30)
    if "BOOM" in solution_str:
        raise RuntimeError("boom")
    ok = solution_str.strip().endswith("answer: " + str(ground_truth))
    return {"score": float(ok), "acc": float(ok), "pred": solution_str[-3:]}
'''

N = 16
AIME_A = [2, 3, 1, 4, 0, 2]          # correct counts per problem, baseline
AIME_B = [10, 12, 9, 14, 8, 11]      # planted improvement
GPQA = [5, 0, 16, 7]                 # identical in both runs


@pytest.fixture()
def toy_scorer(tmp_path, monkeypatch):
    d = tmp_path / "scorer_mod"
    d.mkdir()
    (d / "toy_scorer_eval.py").write_text(TOY_SCORER)
    monkeypatch.syspath_prepend(str(d))
    return "toy_scorer_eval:compute_score"


def _records(src: str, counts: list[int], answers: list[str]) -> list[dict]:
    recs = []
    for i, (c, a) in enumerate(zip(counts, answers)):
        for s in range(N):
            resp = f"reasoning ... answer: {a if s < c else 'wrong'}"
            recs.append({"uid": f"{src}#{i}", "sample": s, "data_source": src, "response": resp,
                         "ground_truth": a, "extra_info": {"index": i}})
    return recs


def _write(path: Path, recs: list[dict], junk: list[str] = ()) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r) for r in recs] + list(junk)
    path.write_text("\n".join(lines) + "\n")


def _make_runs(root: Path) -> Path:
    runs = root / "runs"
    aime_ans = [str(10 * i + 1) for i in range(6)]
    gpqa_ans = list("ABCD")
    # run "grpo": one file, with two malformed lines
    _write(runs / "grpo.jsonl",
           _records("verl_focal/aime24", AIME_A, aime_ans) + _records("verl_focal/gpqa_diamond", GPQA, gpqa_ans),
           junk=['{"uid": "cut', "not json at all"])
    # run "f_grpo": a folder with one file per benchmark, one record without a response
    _write(runs / "f_grpo" / "aime24.jsonl", _records("verl_focal/aime24", AIME_B, aime_ans),
           junk=[json.dumps({"uid": "x", "sample": 0})])
    _write(runs / "f_grpo" / "gpqa.jsonl", _records("verl_focal/gpqa_diamond", GPQA, gpqa_ans))
    return runs


def _read_csv(path: Path) -> list[dict]:
    with open(path) as fh:
        return list(csv.DictReader(fh))


def test_score_folder_of_two_runs_writes_table_csv_plot_marks(tmp_path, toy_scorer, capsys):
    runs = _make_runs(tmp_path)
    out = tmp_path / "report"
    rc = cli_main(["eval", "score", "--runs", str(runs), "--out-dir", str(out), "--scorer", toy_scorer,
                   "--workers", "2", "--baseline", "grpo", "--iterations", "3000", "--no-progress"])
    assert rc == 0
    err = capsys.readouterr()
    # a mixed file is scored; the lines left out are counted and the first one is named
    assert ("run grpo: left out 2 of 162 line(s) (2 not a JSON object, 0 without a needed field); "
            "first: grpo.jsonl line 161: not a JSON object") in err.err
    assert ("run f_grpo: left out 1 of 161 line(s) (0 not a JSON object, 1 without a needed field); "
            "first: aime24.jsonl line 97: lacks 'response' (it has sample, uid)") in err.err
    assert "scored 160 answers {'ok': 160}" in err.out

    for name in ("table.md", "results.csv", "significance.csv", "passk.png", "summary.json"):
        assert (out / name).stat().st_size > 0, name
    assert (out / "passk.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # CSV: one row per (run, benchmark) + domain averages, values from the exact formula
    rows = {(r["run"], r["benchmark"]): r for r in _read_csv(out / "results.csv")}
    assert set(rows) == {
        (r, b) for r in ("grpo", "f_grpo") for b in ("aime24", "gpqa_diamond", "avg-in-domain", "avg-ood")
    }
    for run, counts in (("grpo", AIME_A), ("f_grpo", AIME_B)):
        row = rows[(run, "aime24")]
        assert row["domain"] == "in-domain" and row["problems"] == "6" and row["samples_min"] == "16"
        for k in (1, 2, 4, 8, 16):
            expect = 100 * np.mean([1 - _comb(N - c, k) / _comb(N, k) for c in counts])
            assert float(row[f"pass@{k}"]) == pytest.approx(expect, abs=1e-3)
        assert row["auc@64"] == ""  # n = 16 < 64
    assert rows[("grpo", "gpqa_diamond")]["domain"] == "ood"
    assert float(rows[("grpo", "avg-ood")]["pass@1"]) == pytest.approx(100 * np.mean(GPQA) / N, abs=1e-3)

    # significance: the planted aime24 gain is flagged at k = 1; identical gpqa never
    sig = _read_csv(out / "significance.csv")
    aime1 = next(r for r in sig if r["benchmark"] == "aime24" and r["k"] == "1")
    assert aime1["significant"] == "1" and aime1["m"] == "4" and float(aime1["delta_pts"]) > 40
    assert all(r["significant"] == "0" for r in sig if r["benchmark"] == "gpqa_diamond")
    assert {r["run"] for r in sig} == {"f_grpo"} and {r["baseline"] for r in sig} == {"grpo"}

    # Table-1 layout: header per benchmark, averages, a mark on the improved pass@1
    table = (out / "table.md").read_text()
    lines = table.splitlines()
    assert lines[0].startswith("| run | aime24 pass@1 / pass@16 | gpqa_diamond pass@1 / pass@16 | avg in-domain")
    f_row = next(l for l in lines if l.startswith("| f_grpo"))
    assert f"{100 * np.mean(AIME_B) / N:.1f}†" in f_row
    g_row = next(l for l in lines if l.startswith("| grpo (baseline)"))
    assert "†" not in g_row
    assert "† p < 0.05 vs grpo" in table

    # scored copies are kept, and `report` redoes the same from them without scoring
    out2 = tmp_path / "report2"
    assert cli_main(["eval", "report", "--runs", str(out / "scored"), "--out", str(out2), "--baseline", "grpo",
                     "--iterations", "3000"]) == 0
    assert (out2 / "table.md").read_text() == table


def _comb(n: int, k: int) -> int:
    import math

    return math.comb(n, k)


def test_score_counts_timeouts_and_errors(tmp_path, toy_scorer, capsys):
    recs = _records("verl_focal/math500", [2, 1], ["7", "8"])
    recs[0]["response"] = "SLEEP answer: 7"
    recs[1]["response"] = "BOOM"
    _write(tmp_path / "runs" / "only.jsonl", recs)
    rc = cli_main(["eval", "score", "--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "o"),
                   "--scorer", toy_scorer, "--workers", "0", "--timeout-s", "0.3", "--no-progress"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "'error': 1" in out and "'timeout': 1" in out and "'ok': 30" in out
    scored = [json.loads(l) for l in (tmp_path / "o" / "scored" / "only.jsonl").read_text().splitlines()]
    assert scored[0]["status"] == "timeout" and scored[0]["acc"] == 0.0
    assert scored[1]["status"].startswith("error: RuntimeError") and scored[1]["acc"] == 0.0
    row = next(r for r in _read_csv(tmp_path / "o" / "results.csv") if r["benchmark"] == "math500")
    # problem 0 had 2 correct answers (samples 0 and 1): one timed out, one crashed the scorer -> 0/16;
    # problem 1 keeps 1/16
    assert float(row["pass@1"]) == pytest.approx(100 * (0 + 1 / 16) / 2, abs=1e-3)


def test_report_reads_verl_validation_dumps(tmp_path):
    # two verl `trainer.validation_data_dir`s, lines as written by _write_generations (v1 trainer)
    def dump(dirpath: Path, step: int, counts: list[int]) -> None:
        lines = []
        for i, c in enumerate(counts):
            for s in range(N):
                ok = s < c
                lines.append({"input": f"system\nQ{i}\nassistant\n", "output": "..." + ("right" if ok else "wrong"),
                              "gts": str(i), "score": 1.0 if ok else 0.0, "step": step, "reward": 1.0 if ok else 0.0,
                              "acc": float(ok), "pred": "x", "data_source": "verl_focal/amc23",
                              "uid": f"{'ab' * 8}-{step}-{i}_{s}_0"})
        dirpath.mkdir(parents=True, exist_ok=True)
        (dirpath / f"{step}.jsonl").write_text("\n".join(json.dumps(l) for l in lines) + "\n")

    runs = tmp_path / "runs"
    dump(runs / "grpo_val", 10, [0, 0, 0])       # an older step: must be ignored
    dump(runs / "grpo_val", 20, [1, 4, 8])
    dump(runs / "cue_val", 20, [2, 6, 12])
    out = tmp_path / "rep"
    assert cli_main(["eval", "report", "--runs", str(runs), "--out", str(out), "--baseline", "grpo_val",
                     "--iterations", "500"]) == 0
    rows = {(r["run"], r["benchmark"]): r for r in _read_csv(out / "results.csv")}
    assert rows[("grpo_val", "amc23")]["problems"] == "3"
    assert float(rows[("grpo_val", "amc23")]["pass@1"]) == pytest.approx(100 * 13 / 48, abs=1e-3)
    assert float(rows[("cue_val", "amc23")]["pass@4"]) == pytest.approx(
        100 * float(np.mean(pass_at_k(N, np.array([2, 6, 12]), 4))), abs=1e-3)
    sig = _read_csv(out / "significance.csv")
    assert {r["paired_problems"] for r in sig} == {"3"}  # paired by prompt text across runs
    # --step picks an older dump
    out2 = tmp_path / "rep2"
    assert cli_main(["eval", "report", "--run", f"old={runs / 'grpo_val'}", "--step", "10", "--out", str(out2)]) == 0
    assert float(_read_csv(out2 / "results.csv")[0]["pass@1"]) == 0.0


def test_report_refuses_unscored_records(tmp_path, capsys):
    _write(tmp_path / "runs" / "a.jsonl", [{"uid": "u", "sample": 0, "data_source": "d", "response": "r"}])
    assert cli_main(["eval", "report", "--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "a.jsonl: no line has the fields" in err and "line 1 lacks 'acc'/'score'" in err
    assert "score the run first with `verl-focal eval score`" in err


def test_score_failures_lists_rejections_that_are_not_obviously_wrong(tmp_path, capsys):
    """--failures with the package scorer: numeric near misses, MC letters and empty answers are
    obviously wrong and left out; symbolic and unit mismatches are listed for audit."""
    rows = [  # (data_source, response, ground truth, listed?)
        ("verl_focal/math", r"so \boxed{13}", "13", False),                       # correct
        ("verl_focal/math", r"so \boxed{12}", "13", False),                       # integer near miss
        ("verl_focal/math", r"so \boxed{1.3\times10^{-8}}", "1.24e-8", False),  # numbers differ
        ("verl_focal/math", r"so \boxed{\frac{a}{b}}", r"\frac{b}{a}", True),    # symbolic
        ("verl_focal/math", r"so \boxed{5 \text{ cm}}", r"5 \text{ m}", True),  # units differ
        ("verl_focal/math", "I could not finish", "7", False),                    # nothing extracted
        ("verl_focal/gpqa_diamond", r"\boxed{B}", "C", False),                   # wrong letter
    ]
    recs = [{"uid": f"p{i}", "sample": 0, "data_source": ds, "response": r, "ground_truth": gt}
            for i, (ds, r, gt, _) in enumerate(rows)]
    _write(tmp_path / "runs" / "one.jsonl", recs)
    fail = tmp_path / "audit" / "failures.jsonl"
    rc = cli_main(["eval", "score", "--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "o"),
                   "--workers", "0", "--no-progress", "--failures", str(fail)])
    assert rc == 0
    got = [json.loads(line) for line in fail.read_text().splitlines()]
    assert [g["uid"] for g in got] == [f"p{i}" for i, row in enumerate(rows) if row[3]]
    assert got[0] == {"run": "one", "uid": "p3", "sample": 0, "data_source": "verl_focal/math",
                      "pred": r"\frac{a}{b}", "ground_truth": r"\frac{b}{a}"}
    assert "wrote 2 rejected answer(s) that are not obviously wrong" in capsys.readouterr().out


def test_score_and_report_refuse_repeated_problem_sample_lines_by_line_number(tmp_path, toy_scorer, capsys):
    """A file whose every line appears twice would count every sample twice (pass@k from doubled n and c);
    it is refused before anything is scored, naming the repeated lines.  Repeats across a run's files count too."""
    recs = _records("verl_focal/aime24", [2, 3], ["11", "21"])  # 2 problems x 16 samples
    _write(tmp_path / "runs" / "grpo.jsonl", recs + recs)
    out = tmp_path / "o"
    rc = cli_main(["eval", "score", "--runs", str(tmp_path / "runs"), "--out", str(out), "--scorer", toy_scorer,
                   "--workers", "0", "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    first = err.splitlines()[0]
    assert first.startswith("verl-focal eval score: error: run grpo: 32 line(s) repeat a (problem, sample) pair")
    assert "grpo.jsonl line 33 repeats line 1 (problem 'verl_focal/aime24#0', sample 0)" in first
    assert "grpo.jsonl line 34 repeats line 2 (problem 'verl_focal/aime24#0', sample 1)" in first
    assert "and 29 more" in first and not (out / "scored").exists()  # refused before scoring
    # one benchmark per file: the same (problem, sample) in two files of one run
    scored = [dict(r, acc=1.0) for r in recs]
    _write(tmp_path / "runs2" / "f" / "a.jsonl", scored[:3])
    _write(tmp_path / "runs2" / "f" / "b.jsonl", scored[2:4])
    assert cli_main(["eval", "report", "--runs", str(tmp_path / "runs2"), "--out", str(out)]) == 2
    assert "b.jsonl line 1 repeats a.jsonl line 3 (problem 'verl_focal/aime24#0', sample 2)" in capsys.readouterr().err
    # the same sample number under two problems is no repeat
    _write(tmp_path / "runs3" / "g.jsonl", scored)
    assert cli_main(["eval", "report", "--runs", str(tmp_path / "runs3"), "--out", str(out)]) == 0


def test_a_response_given_as_a_list_is_refused_naming_the_users_field(tmp_path, capsys):
    """`response` as a list (several samples in one line) is refused before scoring, naming `response` and the line,
    not the scorer's `solution_str`; a verl dump's answer field is `output`."""
    runs = tmp_path / "runs"
    runs.mkdir()
    lines = [{"uid": "p0", "sample": 0, "data_source": "d", "response": "\\boxed{1}", "ground_truth": "1"},
             {"uid": "p1", "sample": 0, "data_source": "d", "response": ["\\boxed{1}", "\\boxed{2}"],
              "ground_truth": "1"}]
    (runs / "a.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    rc = cli_main(["eval", "score", "--runs", str(runs), "--out-dir", str(tmp_path / "o"), "--workers", "0",
                   "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and "solution_str" not in err
    assert "a.jsonl line 2: 'response' is a list of 2 items, not a string; give one line per sampled response" in err
    (runs / "a.jsonl").write_text(json.dumps({"input": "q", "output": {"text": "x"}, "gts": "1", "score": 0.0}) + "\n")
    assert cli_main(["eval", "score", "--runs", str(runs), "--out-dir", str(tmp_path / "o"), "--workers", "0",
                     "--no-progress"]) == 2
    assert "a.jsonl line 1: 'output' is a dict of 1 items, not a string" in capsys.readouterr().err
