"""`verl-focal eval generate` with the transformers backend and a tiny local model (CPU)."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import signal
import time
from collections import Counter
from pathlib import Path

from verl_focal.cli import main as cli_main


def _lines(path: Path) -> list[dict]:
    return [json.loads(l) for l in path.read_text().splitlines() if l.strip()]


def _gen_args(data, model, out, n, *extra):
    return ["eval", "generate", "--backend", "transformers", "--data", str(data), "--model", str(model),
            "--out", str(out), "--n", str(n), "--max-tokens", "6", "--batch-size", "4", "--no-progress", *extra]


def test_generate_writes_n_samples_per_problem(tiny_model, eval_parquet, tmp_path):
    out = tmp_path / "gen.jsonl"
    assert cli_main(_gen_args(eval_parquet, tiny_model, out, 3)) == 0
    recs = _lines(out)
    assert len(recs) == 5 * 3
    assert Counter(r["uid"] for r in recs) == {f"verl_focal/aime24#{i}": 3 for i in range(3)} | {
        "verl_focal/gpqa_diamond#3": 3, "verl_focal/gpqa_diamond#4": 3}
    r0 = recs[0]
    assert r0["data_source"] == "verl_focal/aime24" and r0["ground_truth"] == "0"
    assert r0["prompt_text"].endswith("<|assistant|>") and "<|user|>What is 0 + 0?" in r0["prompt_text"]
    assert r0["extra_info"] == {"index": 0, "split": "test"}
    assert sorted(r["sample"] for r in recs if r["uid"] == r0["uid"]) == [0, 1, 2]
    # same seed -> same samples (deterministic per request)
    out2 = tmp_path / "gen2.jsonl"
    cli_main(_gen_args(eval_parquet, tiny_model, out2, 3))
    assert [r["response"] for r in _lines(out2)] == [r["response"] for r in recs]
    # a second call finds nothing to do
    assert cli_main(_gen_args(eval_parquet, tiny_model, out, 3)) == 0
    assert len(_lines(out)) == 15


def test_resume_after_sigkill_has_no_duplicates(tiny_model, tmp_path, parquet_writer):
    data = parquet_writer(
        tmp_path / "many.parquet", [("verl_focal/math500", f"Compute {i} * 3.", str(3 * i)) for i in range(12)]
    )
    out = tmp_path / "gen.jsonl"
    args = _gen_args(data, tiny_model, out, 2)
    # a forked child (torch already imported here, so no import cost) is SIGKILLed mid-way
    child = multiprocessing.get_context("fork").Process(target=cli_main, args=(args,))
    child.start()
    deadline = time.time() + 120
    while time.time() < deadline and child.is_alive():
        if out.exists() and out.read_text().count("\n") >= 2:
            break
        time.sleep(0.005)
    assert child.is_alive(), "generation finished before it could be killed"
    os.kill(child.pid, signal.SIGKILL)
    child.join()
    assert child.exitcode == -signal.SIGKILL
    before = out.read_text().count("\n")
    assert 2 <= before < 24
    with open(out, "a") as fh:  # a writer killed mid-line leaves a cut line behind
        fh.write('{"uid": "verl_focal/math500#11", "sample": 0, "resp')
    assert cli_main(args) == 0
    recs = _lines(out)  # every line parses: the cut line was removed
    keys = [(r["uid"], r["sample"]) for r in recs]
    assert len(keys) == len(set(keys)) == 12 * 2
    assert Counter(r["uid"] for r in recs) == {f"verl_focal/math500#{i}": 2 for i in range(12)}


def test_resume_with_other_settings_is_refused(tiny_model, eval_parquet, tmp_path, capsys):
    out = tmp_path / "gen.jsonl"
    cli_main(_gen_args(eval_parquet, tiny_model, out, 2, "--limit", "1"))
    capsys.readouterr()
    assert cli_main(_gen_args(eval_parquet, tiny_model, out, 3, "--limit", "1")) == 2
    err = capsys.readouterr().err
    assert re.search(r"other settings.*'n': \(2, 3\).*--overwrite", err) and "Traceback" not in err
    assert cli_main(_gen_args(eval_parquet, tiny_model, out, 3, "--limit", "1", "--overwrite")) == 0
    assert len(_lines(out)) == 3


def test_bad_parquet_names_the_column(tiny_model, tmp_path, capsys):
    import pandas as pd

    bad = tmp_path / "bad.parquet"
    pd.DataFrame({"data_source": ["x"], "question": ["hi"]}).to_parquet(bad)
    assert cli_main(_gen_args(bad, tiny_model, tmp_path / "o.jsonl", 1)) == 2
    err = capsys.readouterr().err
    assert f"--data {bad}: missing column(s) ['prompt', 'reward_model']" in err and "prep-data eval" in err
    assert not (tmp_path / "o.jsonl").exists()


def test_rows_without_a_prompt_are_left_out_and_counted(tiny_model, eval_parquet, tmp_path, capsys):
    """A parquet with some unusable rows: the others are sampled; the count and the first bad row are printed."""
    import pandas as pd

    df = pd.read_parquet(eval_parquet).head(3)
    df["prompt"] = df["prompt"].astype(object)
    df.at[1, "prompt"] = []
    mixed = tmp_path / "mixed.parquet"
    df.to_parquet(mixed)
    out = tmp_path / "o.jsonl"
    assert cli_main(_gen_args(mixed, tiny_model, out, 1)) == 0
    err = capsys.readouterr().err
    assert f"--data {mixed}: left out 1 of 3 row(s); first: row 1: 'prompt' is not a chat list" in err
    assert sorted({r["uid"].split("#")[1] for r in _lines(out)}) == ["0", "2"]
