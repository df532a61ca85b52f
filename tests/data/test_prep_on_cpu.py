"""verl-focal prep-data end to end on small fixtures, with a tokenizer built in the test."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from verl_focal.cli import main as cli_main
from verl_focal.data.filters import Item, answer_key, drop_conflicting_duplicates
from verl_focal.data.schema import MATH_SYSTEM_PROMPT

LONG = "Compute the sum of all integers. " * 400

# index: why it is there
DEEPSCALER_ROWS = [
    {"problem": "What is 1 + 1?", "answer": "2", "solution": "1+1=2"},  # 0 ok
    {"problem": "Find x if 2x = 1.", "answer": "\\frac{1}{2}"},  # 1 ok
    {"problem": "Find  x if 2x = 1. ", "answer": "1/2"},  # 2 same problem (spacing), agreeing answer
    {"problem": "Compute 3 + 4.", "answer": "7"},  # 3 conflict with 4: both go
    {"problem": "Compute 3 + 4.", "answer": "8"},  # 4
    {"problem": "What is 2 + 2?", "answer": "4"},  # 5 exact duplicate of 6
    {"problem": "What is 2 + 2?", "answer": "4"},  # 6
    {"problem": LONG, "answer": "0"},  # 7 over the length limit
    {"problem": "", "answer": "1"},  # 8 malformed: empty problem
    {"problem": "Q?", "answer": None},  # 9 malformed: no answer
    {"problem": 12345, "answer": "1"},  # 10 malformed: problem not text
    {"answer": "3"},  # 11 malformed: no problem
    {"problem": "List answer?", "answer": ["5"]},  # 12 ok, answer "5"
    {"problem": "Numeric answer?", "answer": 17},  # 13 ok, answer "17"
    {"problem": "Dollar answer?", "answer": "$9$"},  # 14 ok, answer "9"
]


def _write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    return str(path)


def _expected_len(raw_tokenizer, render, problem: str) -> int:
    msgs = [{"role": "system", "content": MATH_SYSTEM_PROMPT}, {"role": "user", "content": problem}]
    return len(raw_tokenizer.encode(render(msgs), add_special_tokens=False).ids)


def test_deepscaler_end_to_end(tmp_path, tiny_tokenizer_dir, raw_tokenizer, render_chat, capsys):
    src = _write_jsonl(tmp_path / "ds.jsonl", DEEPSCALER_ROWS)
    out = tmp_path / "out" / "train.parquet"
    rc = cli_main(["prep-data", "deepscaler", "--source", src, "--tokenizer", tiny_tokenizer_dir, "--out", str(out)])
    assert rc == 0
    stats = json.loads(open(str(out) + ".stats.json").read())
    assert stats["loaded"] == 15
    assert stats["malformed_dropped"] == {"answer_missing": 1, "problem_missing": 2, "problem_not_text": 1}
    assert stats["well_formed"] == 11
    assert stats["duplicates"] == dict(duplicate_groups=3, conflicting_groups=1, conflicting_rows_dropped=2,
                                       consistent_duplicate_rows=2, collapsed_rows_dropped=0)
    assert stats["no_conflicting_duplicates"] == 9
    # the long problem is over 1024 tokens and every other one is under, counted independently
    assert _expected_len(raw_tokenizer, render_chat, LONG) > 1024
    assert max(_expected_len(raw_tokenizer, render_chat, r['problem']) for r in DEEPSCALER_ROWS[:7]) <= 1024
    assert stats["prompt_tokens_le_1024"] == 8 == stats["written"]
    printed = capsys.readouterr().out
    assert "prompt_tokens_le_1024" in printed and "39202" in printed

    df = pd.read_parquet(out)
    assert list(df.columns) == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    assert set(df["data_source"]) == {"verl_focal/deepscaler"}
    assert set(df["ability"]) == {"math"}
    assert [r["source_index"] for r in df["extra_info"]] == [0, 1, 2, 5, 6, 12, 13, 14]
    assert [r["ground_truth"] for r in df["reward_model"]] == ["2", "\\frac{1}{2}", "1/2", "4", "4", "5", "17", "9"]
    assert all(r["style"] == "rule" for r in df["reward_model"])
    p0 = list(df["prompt"][0])
    assert [m["role"] for m in p0] == ["system", "user"]
    assert p0[0]["content"] == "Please reason step by step, and put your final answer within \\boxed{}."
    assert p0[1]["content"] == "What is 1 + 1?"
    assert df["extra_info"][0]["problem"] == "What is 1 + 1?"
    assert [r["index"] for r in df["extra_info"]] == list(range(8))


def test_collapse_duplicates_keeps_first_copy(tmp_path):
    src = _write_jsonl(tmp_path / "ds.jsonl", DEEPSCALER_ROWS)
    out = tmp_path / "t.parquet"
    rc = cli_main(["prep-data", "deepscaler", "--source", src, "--max-prompt-tokens", "0", "--collapse-duplicates",
                   "--out", str(out)])
    assert rc == 0
    stats = json.loads(open(str(out) + ".stats.json").read())
    assert stats["duplicates"]["collapsed_rows_dropped"] == 2
    # no length filter: the long problem stays
    assert stats["length_filter_off"] == stats["written"] == 7
    df = pd.read_parquet(out)
    assert [r["source_index"] for r in df["extra_info"]] == [0, 1, 5, 7, 12, 13, 14]


def test_length_boundary_is_inclusive(tmp_path, tiny_tokenizer_dir, raw_tokenizer, render_chat):
    rows = [{"problem": "What is 1 + 1?", "answer": "2"}, {"problem": "What is 1 + 1? Compute the sum.", "answer": "2"}]
    n0, n1 = (_expected_len(raw_tokenizer, render_chat, r["problem"]) for r in rows)
    assert n0 < n1
    src = _write_jsonl(tmp_path / "b.jsonl", rows)
    for limit, kept in [(n0, 1), (n1 - 1, 1), (n1, 2)]:
        out = tmp_path / f"b{limit}.parquet"
        assert cli_main(["prep-data", "deepscaler", "--source", src, "--tokenizer", tiny_tokenizer_dir,
                         "--max-prompt-tokens", str(limit), "--out", str(out)]) == 0
        assert len(pd.read_parquet(out)) == kept, limit


def test_counting_matches_verl_dataset_filter(tmp_path, tiny_tokenizer_dir):
    """verl's RLHFDataset(filter_overlong_prompts=True) keeps exactly the rows we keep."""
    from omegaconf import OmegaConf
    from transformers import AutoTokenizer
    from verl.utils.dataset.rl_dataset import RLHFDataset

    rows = [{"problem": "What is 1 + 1?" + " Compute the sum." * k, "answer": "2"} for k in range(12)]
    src = _write_jsonl(tmp_path / "v.jsonl", rows)
    full = tmp_path / "full.parquet"
    assert cli_main(["prep-data", "deepscaler", "--source", src, "--max-prompt-tokens", "0", "--out", str(full)]) == 0
    tok = AutoTokenizer.from_pretrained(tiny_tokenizer_dir)
    limit = 60
    cfg = OmegaConf.create({"max_prompt_length": limit, "filter_overlong_prompts": True, "prompt_key": "prompt",
                            "cache_dir": str(tmp_path / "cache"), "return_raw_chat": True})
    verl_kept = len(RLHFDataset(str(full), tok, cfg))
    ours = tmp_path / "ours.parquet"
    assert cli_main(["prep-data", "deepscaler", "--source", src, "--tokenizer", tiny_tokenizer_dir,
                     "--max-prompt-tokens", str(limit), "--out", str(ours)]) == 0
    n_ours = len(pd.read_parquet(ours))
    assert 0 < n_ours < len(rows)  # the limit really cuts
    assert n_ours == verl_kept
    item = RLHFDataset(str(ours), tok, cfg)[0]
    assert item["data_source"] == "verl_focal/deepscaler"
    assert item["reward_model"]["ground_truth"] == "2"


def test_parquet_and_json_array_sources(tmp_path):
    rows = [{"problem": "a?", "answer": "1"}, {"problem": "b?", "answer": "2"}]
    pq = tmp_path / "s.parquet"
    pd.DataFrame(rows).to_parquet(pq)
    js = tmp_path / "s.json"
    js.write_text(json.dumps(rows))
    for src in (pq, js):
        out = tmp_path / f"o_{src.suffix[1:]}.parquet"
        assert (
            cli_main(["prep-data", "deepscaler", "--source", str(src), "--max-prompt-tokens", "0", "--out", str(out)])
            == 0
        )
        assert list(pd.read_parquet(out)["reward_model"].map(lambda r: r["ground_truth"])) == ["1", "2"]


def test_clear_errors(tmp_path, capsys):
    src = _write_jsonl(tmp_path / "x.jsonl", [{"question": "a?", "answer": "1"}])
    out = str(tmp_path / "o.parquet")
    assert cli_main(["prep-data", "deepscaler", "--source", src, "--max-prompt-tokens", "0", "--out", out]) == 2
    err = capsys.readouterr().err
    assert "no problem column" in err and "question" in err and "--problem-field" in err
    # the same file with the right field name works
    assert cli_main(["prep-data", "deepscaler", "--source", src, "--max-prompt-tokens", "0", "--out", out,
                     "--problem-field", "question"]) == 0

    bad = _write_jsonl(tmp_path / "bad.jsonl", [{"problem": "", "answer": "1"}, {"problem": "q", "answer": None}])
    assert cli_main(["prep-data", "deepscaler", "--source", bad, "--max-prompt-tokens", "0", "--out", out]) == 2
    assert "no rows left after stage 'well_formed'" in capsys.readouterr().err

    ok = _write_jsonl(tmp_path / "ok.jsonl", [{"problem": "q", "answer": "1"}])
    assert cli_main(["prep-data", "deepscaler", "--source", ok, "--out", out]) == 2
    assert "--tokenizer" in capsys.readouterr().err
    assert cli_main(["prep-data", "deepscaler", "--source", ok, "--tokenizer", str(tmp_path / "no_such_model"),
                     "--out", out]) == 2
    err = capsys.readouterr().err
    assert "cannot load the tokenizer" in err and "local model directory" in err

    assert cli_main(["prep-data", "deepscaler", "--source", str(tmp_path / "missing.jsonl"), "--max-prompt-tokens",
                     "0", "--out", out]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_tokenizer_without_chat_template_is_rejected(tmp_path, tiny_tokenizer_dir, capsys):
    import shutil

    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_tokenizer_dir)
    tok.chat_template = None
    d = tmp_path / "notemplate"
    tok.save_pretrained(str(d))
    for f in d.glob("chat_template.*"):
        f.unlink()
    ok = _write_jsonl(tmp_path / "ok.jsonl", [{"problem": "q", "answer": "1"}])
    assert cli_main(["prep-data", "deepscaler", "--source", ok, "--tokenizer", str(d), "--out",
                     str(tmp_path / "o.parquet")]) == 2
    assert "no chat template" in capsys.readouterr().err
    shutil.rmtree(d)


def test_math_subset_levels_sample_and_answer_from_solution(tmp_path, tiny_tokenizer_dir):
    rows = []
    for i in range(30):
        level = f"Level {1 + i % 5}"
        rows.append({"problem": f"Problem number {i}?", "level": level, "type": "Algebra",
                     "solution": f"We get $\\boxed{{{i}}}$ by {{\\it inspection}}."})
    rows.append({"problem": "Odd level?", "level": "Level ?", "solution": "\\boxed{1}"})
    src = _write_jsonl(tmp_path / "math.jsonl", rows)
    out = tmp_path / "m.parquet"
    rc = cli_main(["prep-data", "math-subset", "--source", src, "--tokenizer", tiny_tokenizer_dir,
                   "--sample", "10", "--seed", "3", "--out", str(out)])
    assert rc == 0
    stats = json.loads(open(str(out) + ".stats.json").read())
    eligible = [i for i in range(30) if 1 + i % 5 >= 3]
    assert stats["level_filter"] == len(eligible) == 18
    df = pd.read_parquet(out)
    assert len(df) == 10 and set(df["data_source"]) == {"verl_focal/math_l3to5"}
    picked = [r["source_index"] for r in df["extra_info"]]
    assert set(picked) <= set(eligible) and picked == sorted(picked)
    assert all(r["ground_truth"] == str(i) for r, i in zip(df["reward_model"], picked))
    # the same seed gives the same subset; another seed another one
    out2 = tmp_path / "m2.parquet"
    cli_main(["prep-data", "math-subset", "--source", src, "--tokenizer", tiny_tokenizer_dir, "--sample", "10",
              "--seed", "3", "--out", str(out2)])
    assert [r["source_index"] for r in pd.read_parquet(out2)["extra_info"]] == picked
    cli_main(["prep-data", "math-subset", "--source", src, "--tokenizer", tiny_tokenizer_dir, "--sample", "10",
              "--seed", "4", "--out", str(out2)])
    assert [r["source_index"] for r in pd.read_parquet(out2)["extra_info"]] != picked


def test_eval_sets_from_local_files(tmp_path, tiny_tokenizer_dir, capsys):
    aime = _write_jsonl(tmp_path / "aime.jsonl", [{"problem": "Find n.", "answer": "204"},
                                                   {"problem": "Find m.", "answer": 33}])
    oly = _write_jsonl(tmp_path / "oly.jsonl", [{"question": "Q1", "final_answer": ["$\\frac{1}{2}$"]},
                                                 {"question": "Q2", "final_answer": []}])
    gpqa_rows = [{"Question": f"Which is right {i}?", "Correct Answer": "right", "Incorrect Answer 1": "w1",
                  "Incorrect Answer 2": "w2", "Incorrect Answer 3": "w3"} for i in range(8)]
    gpqa = _write_jsonl(tmp_path / "gpqa.jsonl", gpqa_rows)
    out_dir = tmp_path / "eval"
    rc = cli_main(["prep-data", "eval", "--sets", "aime24,olympiadbench,gpqa_diamond", "--source", f"aime24={aime}",
                   "--source", f"olympiadbench={oly}", "--source", f"gpqa_diamond={gpqa}", "--out-dir", str(out_dir),
                   "--tokenizer", tiny_tokenizer_dir, "--max-prompt-tokens", "30"])
    assert rc == 0
    a = pd.read_parquet(out_dir / "aime24.parquet")
    assert list(a["reward_model"].map(lambda r: r["ground_truth"])) == ["204", "33"]
    assert set(a["data_source"]) == {"verl_focal/aime24"}
    o = pd.read_parquet(out_dir / "olympiadbench.parquet")
    assert list(o["reward_model"].map(lambda r: r["ground_truth"])) == ["\\frac{1}{2}"]
    g = pd.read_parquet(out_dir / "gpqa_diamond.parquet")
    assert set(g["data_source"]) == {"verl_focal/gpqa_diamond"} and set(g["ability"]) == {"science_mc"}
    letters = []
    for prompt, rm in zip(g["prompt"], g["reward_model"]):
        user = prompt[-1]["content"]
        gold = rm["ground_truth"]
        letters.append(gold)
        # the gold letter labels the correct option text
        assert f"{gold}) right" in user.splitlines()
        assert sorted(line[0] for line in user.splitlines()[2:]) == ["A", "B", "C", "D"]
        assert "\\boxed{A}" in prompt[0]["content"]
    assert len(set(letters)) > 1  # options are shuffled, not always first
    err = capsys.readouterr().err
    assert "exceed 30 tokens" in err  # reported, never dropped
    stats = json.loads(open(out_dir / "gpqa_diamond.parquet.stats.json").read())
    assert stats["written"] == 8 and stats["prompts_over_30_tokens"] == 8


def test_eval_source_errors(tmp_path, capsys, monkeypatch):
    import datasets
    import huggingface_hub

    # no hub is reachable here; offline mode makes datasets fail at once instead of retrying
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    assert cli_main(["prep-data", "eval", "--sets", "aime24", "--source", "aime26=x.jsonl"]) == 2
    assert "unknown evaluation set 'aime26'" in capsys.readouterr().err
    assert cli_main(["prep-data", "eval", "--sets", "aime24", "--source", "math500=x.jsonl"]) == 2
    assert "--sets does not include" in capsys.readouterr().err
    # a hub name cannot be reached here: the error says what to do instead
    assert cli_main(["prep-data", "eval", "--sets", "aime24", "--source", "aime24=nobody/no_such_dataset_xyz",
                     "--out-dir", str(tmp_path)]) == 2
    assert "pass the local" in capsys.readouterr().err


def test_answer_key_and_conflict_rule_units():
    assert answer_key("\\left( 1,2 \\right)") == answer_key("(1,2)")
    assert answer_key("\\dfrac{1}{2}.") == "\\frac{1}{2}"
    items = [Item(0, "p", "3"), Item(1, "p", "3.0"), Item(2, "q", "1"), Item(3, "q", "2")]
    calls = []

    def equal(a, b):
        calls.append((a, b))
        return float(a) == float(b)

    kept, stats = drop_conflicting_duplicates(items, equal=equal)
    assert [it.source_index for it in kept] == [0, 1]
    assert stats["conflicting_groups"] == 1 and stats["consistent_duplicate_rows"] == 1


def test_prep_data_example_writes_valid_small_sets_offline(tmp_path, capsys, monkeypatch):
    """`prep-data example`: every file the recipes' DATA_DIR layout names, in verl's RL schema, each row's own
    ground truth graded correct by our scorer; no tokenizer, no network; real data is never overwritten."""
    import re

    from verl_focal.data.evalsets import EVAL_SETS
    from verl_focal.data.example import RECIPE_MODELS, example_files
    from verl_focal.reward import compute_score

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    out = tmp_path / "data"
    assert cli_main(["prep-data", "example", "--out-dir", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"DATA_DIR={out} bash recipes/deepscaler/f_grpo.sh --dry-run" in printed
    # the model presets of recipes/lib/common.sh, and the tag rule it uses (basename, lower case)
    common = (Path(__file__).resolve().parents[2] / "recipes" / "lib" / "common.sh").read_text()
    presets = re.findall(r"^\s+([a-z0-9.\-]+)\)", common.split("_model_preset()", 1)[1].split("esac", 1)[0], re.M)
    assert sorted(presets) == sorted(m.split("/")[-1].lower() for m in RECIPE_MODELS)
    files = example_files(str(out))
    assert sorted(str(p) for p in out.rglob("*.parquet")) == sorted(files)
    assert {Path(f).name[:-8] for f in files if "/eval/" in f} == set(EVAL_SETS)
    for f in files:
        df = pd.read_parquet(f)
        assert list(df.columns) == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
        kind = Path(f).parent.name
        assert len(df) == (512 if kind != "eval" else 16) and df["data_source"].nunique() == 1
        src = df["data_source"][0]
        assert src == "verl_focal/" + (Path(f).name[:-8] if kind == "eval" else kind)
        assert [m["role"] for m in df["prompt"][0]][-1] == "user"
        for _, row in df.head(3).iterrows():
            gt = row["reward_model"]["ground_truth"]
            if src == "verl_focal/ifeval":
                answer = "A number is a count"  # no comma: follows the instruction
            elif src == "verl_focal/synlogic":
                answer = "\\boxed{" + json.loads(gt)["answer"] + "}"
            else:
                answer = "so the answer is \\boxed{" + gt + "}"
            assert compute_score(src, answer, gt, dict(row["extra_info"]))["acc"] == 1.0, (f, gt)
            assert compute_score(src, "\\boxed{wrong, 0}", gt, dict(row["extra_info"]))["acc"] == 0.0
        stats = json.loads(Path(f + ".stats.json").read_text())
        assert stats["source"] == "verl-focal prep-data example"
    # running it again refreshes its own files; a file it did not write is never overwritten
    assert cli_main(["prep-data", "example", "--out-dir", str(out), "--val-rows", "4"]) == 0
    assert len(pd.read_parquet(out / "eval" / "aime24.parquet")) == 4
    real = tmp_path / "real"
    (real / "eval").mkdir(parents=True)
    (real / "eval" / "math500.parquet").write_bytes(b"PAR1 real data")
    capsys.readouterr()
    assert cli_main(["prep-data", "example", "--out-dir", str(real)]) == 2
    err = capsys.readouterr().err
    assert f"{real}/eval/math500.parquet exists and was not written by `verl-focal prep-data example`" in err
    assert (real / "eval" / "math500.parquet").read_bytes() == b"PAR1 real data"
    assert not (real / "deepscaler").exists()  # refused before writing anything
