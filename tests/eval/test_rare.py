"""Rare-correct set and ΔNLL_rare with a tiny local model (CPU)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from verl_focal.cli import main as cli_main
from verl_focal.lab.eval.nll import _batches_by_length, load_model, response_nll
from verl_focal.lab.eval.rare import delta_nll_rare, select_rare

ALL_CORRECT = '''
def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):
    return {"score": 1.0, "acc": 1.0, "pred": ""}
'''


def _hf_reference_nll(model, tok, prompt: str, response: str) -> float:
    """Independent reference: transformers' own causal-LM loss with the prompt masked out (-100)."""
    import torch

    p = tok(prompt, add_special_tokens=False)["input_ids"]
    r = tok(response, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([p + r])
    labels = ids.clone()
    labels[0, : len(p)] = -100
    with torch.no_grad():
        return float(model(input_ids=ids, labels=labels).loss)


def test_batched_nll_matches_transformers_loss(tiny_model):
    model, tok = load_model(str(tiny_model))
    prompts = [
        "<|user|>What is 1 + 1?\n<|assistant|>",
        "<|user|>x\n<|assistant|>",
        "<|user|>Please reason\n<|assistant|>",
    ] * 2
    responses = [
        "The answer is 2.",
        "x + y = 7 so the answer is \\boxed{7}",
        "step",
        "",
        "boxed",
        "What is 1 + 1? The answer",
    ]
    got = response_nll(model, tok, prompts, responses, max_tokens_per_batch=60, max_batch=3)
    for p, r, g in zip(prompts, responses, got):
        if r == "":
            assert math.isnan(g)
        else:
            assert g == pytest.approx(_hf_reference_nll(model, tok, p, r), rel=1e-4)


def test_batches_respect_token_budget():
    lengths = [5, 30, 7, 12, 30, 1, 9]
    batches = _batches_by_length(lengths, max_tokens=40, max_batch=3)
    assert sorted(i for b in batches for i in b) == list(range(7))
    for b in batches:
        assert len(b) <= 3
        assert len(b) == 1 or max(lengths[i] for i in b) * len(b) <= 40
    assert batches[0][0] in (1, 4)  # longest first


def test_select_rare_keeps_highest_nll():
    recs = [{"id": i} for i in range(10)]
    nll = [0.5, 3.0, float("nan"), 1.0, 2.9, 0.1, 5.0, 0.2, 0.3, 0.4]
    rare = select_rare(recs, nll, top_frac=0.3)  # ceil(0.3 * 9 finite) = 3
    assert [r["id"] for r in rare] == [6, 1, 4]
    assert [r["base_nll"] for r in rare] == [5.0, 3.0, 2.9]
    assert len(select_rare(recs, nll, top_frac=0.01)) == 1
    with pytest.raises(ValueError, match="--top-frac"):
        select_rare(recs, nll, top_frac=0)


def test_delta_nll_rare_formula():
    res = delta_nll_rare([1.0, 2.0, float("nan")], [1.5, 1.0, 3.0])
    assert res["delta_nll_rare"] == pytest.approx(((1.5 - 1.0) + (1.0 - 2.0)) / 2)
    assert res["items"] == 2 and res["skipped"] == 1


def test_rare_set_and_rare_nll_cli(tiny_model, tiny_model_b, eval_parquet, tmp_path, monkeypatch, capsys):
    d = tmp_path / "mod"
    d.mkdir()
    (d / "all_correct_eval.py").write_text(ALL_CORRECT)
    monkeypatch.syspath_prepend(str(d))
    gen = tmp_path / "base.jsonl"
    assert cli_main(["eval", "generate", "--backend", "transformers", "--data", str(eval_parquet),
                     "--model", str(tiny_model), "--out", str(gen), "--n", "4", "--max-tokens", "6",
                     "--no-progress"]) == 0
    rare_path = tmp_path / "rare.jsonl"
    assert cli_main(["eval", "rare-set", "--generations", str(gen), "--model", str(tiny_model), "--out", str(rare_path),
                     "--top-frac", "0.25", "--scorer", "all_correct_eval:compute_score", "--workers", "0",
                     "--no-progress"]) == 0
    rare = [json.loads(l) for l in rare_path.read_text().splitlines()]
    gens = [json.loads(l) for l in gen.read_text().splitlines()]
    assert len(rare) == math.ceil(0.25 * 20)  # 5 problems x 4 samples, all correct
    # the kept items are the highest base NLLs among all samples (independent reference)
    model, tok = load_model(str(tiny_model))
    ref = sorted(
        (_hf_reference_nll(model, tok, g["prompt_text"], g["response"]) for g in gens if g["response"]), reverse=True
    )
    assert [r["base_nll"] for r in rare] == pytest.approx(ref[: len(rare)], rel=1e-4)

    capsys.readouterr()
    assert (
        cli_main(["eval", "rare-nll", "--rare-set", str(rare_path), "--model", str(tiny_model), "--no-progress"]) == 0
    )
    same = json.loads(capsys.readouterr().out)
    assert abs(same["delta_nll_rare"]) < 1e-5 and same["items"] == len(rare)

    out = tmp_path / "delta.json"
    assert cli_main(["eval", "rare-nll", "--rare-set", str(rare_path), "--model", str(tiny_model_b),
                     "--out", str(out), "--no-progress"]) == 0
    other = json.loads(out.read_text())
    model_b, _ = load_model(str(tiny_model_b))
    expect = np.mean([_hf_reference_nll(model_b, tok, r["prompt_text"], r["response"]) - r["base_nll"] for r in rare])
    assert other["delta_nll_rare"] == pytest.approx(expect, rel=1e-4)
    assert abs(other["delta_nll_rare"]) > 1e-3

    # a mixed rare set: the usable items are measured, the others counted with the first bad line
    mixed = tmp_path / "mixed_rare.jsonl"
    bad = {k: v for k, v in rare[0].items() if k != "base_nll"}
    mixed.write_text(rare_path.read_text() + json.dumps(bad) + "\nnot json\n")
    capsys.readouterr()
    assert cli_main(["eval", "rare-nll", "--rare-set", str(mixed), "--model", str(tiny_model_b),
                     "--no-progress"]) == 0
    got = capsys.readouterr()
    assert json.loads(got.out)["delta_nll_rare"] == pytest.approx(other["delta_nll_rare"], rel=1e-6)
    n = len(rare)
    assert (f"left out 2 of {n + 2} line(s) (1 not a JSON object, 1 without a needed field); "
            f"first: mixed_rare.jsonl line {n + 1}: lacks 'base_nll'") in got.err

    # mixed generations for rare-set: a line without prompt_text is left out and named
    mixed_gen = tmp_path / "mixed_gen.jsonl"
    lines = gen.read_text().splitlines()
    g0 = json.loads(lines[0])
    del g0["prompt_text"]
    mixed_gen.write_text("\n".join([json.dumps(g0), *lines[1:]]) + "\n")
    assert cli_main(["eval", "rare-set", "--generations", str(mixed_gen), "--model", str(tiny_model),
                     "--out", str(tmp_path / "rare2.jsonl"), "--top-frac", "0.25", "--scorer",
                     "all_correct_eval:compute_score", "--workers", "0", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "--generations: left out 1 of 20 line(s)" in err and "mixed_gen.jsonl line 1: lacks 'prompt_text'" in err
