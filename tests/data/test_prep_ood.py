"""`prep-data eval --sets ifeval,synlogic` from local files: rows, prompts, aliases, clear errors."""

from __future__ import annotations

import json

import pandas as pd

from verl_focal.cli import main as cli_main
from verl_focal.reward import compute_score

IFEVAL_ROWS = [
    # google/IFEval's parquet stores every kwarg name on every row, null where unused
    {"key": 1000, "prompt": "Write a short poem without commas.",
     "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{"num_words": None, "relation": None}]},
    {"key": 1001, "prompt": "Answer in at least 3 words, all lowercase.",
     "instruction_id_list": ["length_constraints:number_words", "change_case:english_lowercase"],
     "kwargs": [{"num_words": 3, "relation": "at least"}, {}]},
    {"key": 1002, "prompt": "  ", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]},  # no prompt
    {"key": 1003, "prompt": "Two ids, one kwargs.", "instruction_id_list": ["punctuation:no_comma",
                                                                              "change_case:english_lowercase"],
     "kwargs": [{}]},
]

SUDOKU = [[(r * 3 + r // 3 + c) % 9 + 1 for c in range(9)] for r in range(9)]


def _synlogic_rows():
    game = {"question": "Solve this sudoku ...", "answer": "", "metadata": {"original_sudoku": SUDOKU}}
    return [
        # the HF layout: task in data_source, SynLogic's Data record as JSON in extra_info.game_data_str
        {"data_source": "sudoku", "prompt": [{"role": "user", "content": "Solve this sudoku ..."}],
         "extra_info": {"game_data_str": json.dumps(game), "index": 0}},
        # flat layout with aliases
        {"task": "object_counting", "question": "How many fruits?", "answer": "7", "metadata": "{}"},
        {"task": "object_counting", "question": "", "answer": "3", "metadata": {}},          # question_missing
        {"task": "game_of_24", "question": "Make 24", "answer": "", "metadata": {"numbers": [1]}},  # gold incomplete
    ]


def _jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return str(path)


def test_ifeval_and_synlogic_from_local_files(tmp_path, capsys):
    ife = _jsonl(tmp_path / "ifeval.jsonl", IFEVAL_ROWS)
    syn = tmp_path / "synlogic.parquet"
    # one parquet column needs one type: nested objects go in as JSON strings (also accepted)
    flat = [{k: json.dumps(v) if k in ("extra_info", "metadata") and isinstance(v, dict) else v
             for k, v in r.items()} for r in _synlogic_rows()]
    pd.DataFrame(flat).to_parquet(syn)
    out = tmp_path / "eval"
    rc = cli_main(["prep-data", "eval", "--sets", "ifeval,synlogic", "--source", f"ifeval={ife}",
                   "--source", f"synlogic={syn}", "--out-dir", str(out)])
    assert rc == 0, capsys.readouterr().err
    a = pd.read_parquet(out / "ifeval.parquet")
    assert set(a["data_source"]) == {"verl_focal/ifeval"} and len(a) == 2
    assert [p[0]["content"] for p in a["prompt"]] == ["You are a helpful assistant."] * 2  # Table 9
    assert a["prompt"][1][1]["content"] == IFEVAL_ROWS[1]["prompt"]
    gt0 = json.loads(a["reward_model"][0]["ground_truth"])
    assert gt0["kwargs"] == [{}]  # nulls dropped
    stats = json.loads((out / "ifeval.parquet.stats.json").read_text())
    assert stats["malformed_dropped"] == {"instructions_malformed": 1, "prompt_missing": 1}
    # the rows score through verl's entry point
    assert (
        compute_score(a["data_source"][1], "three lowercase words", a["reward_model"][1]["ground_truth"])["acc"] == 1.0
    )
    assert compute_score(a["data_source"][1], "Three Words Here", a["reward_model"][1]["ground_truth"])["acc"] == 0.0

    s = pd.read_parquet(out / "synlogic.parquet")
    assert set(s["data_source"]) == {"verl_focal/synlogic"} and len(s) == 2
    assert list(s["ability"]) == ["logic", "logic"]
    assert s["prompt"][0][1]["content"] == "Solve this sudoku ..."
    sstats = json.loads((out / "synlogic.parquet.stats.json").read_text())
    assert sstats["tasks"] == {"object_counting": 1, "sudoku": 1}
    assert sstats["malformed_dropped"] == {"gold_incomplete:game_of_24": 1, "question_missing": 1}
    # same extra_info keys as the math sets (verl concatenates validation files)
    assert set(s["extra_info"][0]) == {"split", "index", "source_index", "problem", "answer", "answer_type"}
    gt = s["reward_model"][0]["ground_truth"]
    assert compute_score("verl_focal/synlogic", f"```python\n{SUDOKU}\n```", gt)["acc"] == 1.0
    assert compute_score("verl_focal/synlogic", "\\boxed{7}", s["reward_model"][1]["ground_truth"])["acc"] == 1.0


def test_no_system_turn_option(tmp_path):
    ife = _jsonl(tmp_path / "i.jsonl", IFEVAL_ROWS[:2])
    assert cli_main(["prep-data", "eval", "--sets", "ifeval", "--source", f"ifeval={ife}", "--out-dir",
                     str(tmp_path), "--ood-system-prompt", ""]) == 0
    a = pd.read_parquet(tmp_path / "ifeval.parquet")
    assert [len(p) for p in a["prompt"]] == [1, 1] and a["prompt"][0][0]["role"] == "user"


def test_unverified_synlogic_tasks_stop_unless_skipped(tmp_path, capsys, monkeypatch):
    from verl_focal.ood import synlogic

    # every SynLogic task has a verifier today; a task known without one must stop the run
    monkeypatch.setattr(synlogic, "TASKS_WITHOUT_VERIFIER", ("arrow_maze",))
    monkeypatch.setattr(synlogic, "TASK_MODULES", {k: v for k, v in synlogic.TASK_MODULES.items() if k != "arrow_maze"})
    rows = [{"task": "arrow_maze", "question": "q", "answer": "a", "metadata": {}},
            {"task": "object_counting", "question": "q", "answer": "1", "metadata": {}}]
    src = _jsonl(tmp_path / "s.jsonl", rows)
    args = ["prep-data", "eval", "--sets", "synlogic", "--source", f"synlogic={src}", "--out-dir", str(tmp_path)]
    assert cli_main(args) == 2
    err = capsys.readouterr().err
    assert "without a verifier {'arrow_maze': 1}" in err and "--synlogic-skip-unverified" in err
    assert cli_main(args + ["--synlogic-skip-unverified"]) == 0
    stats = json.loads((tmp_path / "synlogic.parquet.stats.json").read_text())
    assert stats["malformed_dropped"] == {"unverified_task:arrow_maze": 1} and stats["written"] == 1


def test_clear_errors_for_bad_files(tmp_path, capsys):
    bad_task = _jsonl(tmp_path / "t.jsonl", [{"task": "sudokuu", "question": "q", "metadata": {}}])
    assert cli_main(["prep-data", "eval", "--sets", "synlogic", "--source", f"synlogic={bad_task}",
                     "--out-dir", str(tmp_path)]) == 2
    assert "unknown SynLogic task(s) {'sudokuu': 1}" in capsys.readouterr().err
    no_task = _jsonl(tmp_path / "n.jsonl", [{"question": "q", "answer": "1"}])
    assert cli_main(["prep-data", "eval", "--sets", "synlogic", "--source", f"synlogic={no_task}",
                     "--out-dir", str(tmp_path)]) == 2
    assert "no task column; looked for ['data_source', 'task'" in capsys.readouterr().err
    bad_id = _jsonl(tmp_path / "i.jsonl", [{"prompt": "p", "instruction_id_list": ["punctuation:no_comas"],
                                           "kwargs": [{}]}])
    assert cli_main(["prep-data", "eval", "--sets", "ifeval", "--source", f"ifeval={bad_id}",
                     "--out-dir", str(tmp_path)]) == 2
    assert "unknown IFEval instruction id(s) ['punctuation:no_comas']" in capsys.readouterr().err
    no_ids = _jsonl(tmp_path / "x.jsonl", [{"prompt": "p"}])
    assert cli_main(["prep-data", "eval", "--sets", "ifeval", "--source", f"ifeval={no_ids}",
                     "--out-dir", str(tmp_path)]) == 2
    assert "no instruction_id_list column" in capsys.readouterr().err
    empty = _jsonl(tmp_path / "e.jsonl", [{"prompt": " ", "instruction_id_list": ["punctuation:no_comma"],
                                          "kwargs": [{}]}])
    assert cli_main(["prep-data", "eval", "--sets", "ifeval", "--source", f"ifeval={empty}",
                     "--out-dir", str(tmp_path)]) == 2
    assert "no rows left after stage 'well_formed'" in capsys.readouterr().err


def test_synlogic_hf_layout_in_jsonl(tmp_path):
    # extra_info as a JSON object (as `datasets` exports it), prompt as a chat list
    src = _jsonl(tmp_path / "s.jsonl", _synlogic_rows()[:2])
    assert cli_main(["prep-data", "eval", "--sets", "synlogic", "--source", f"synlogic={src}",
                     "--out-dir", str(tmp_path)]) == 0
    s = pd.read_parquet(tmp_path / "synlogic.parquet")
    gold = json.loads(s["reward_model"][0]["ground_truth"])
    assert gold["task"] == "sudoku" and gold["metadata"] == {"original_sudoku": SUDOKU}
    assert s["extra_info"][0]["problem"] == "Solve this sudoku ..."
