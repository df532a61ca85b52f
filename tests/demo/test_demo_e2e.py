"""End to end through verl: HFRollout sampling agrees with the exact metric, and `verl-focal demo --quick` runs.

Imports verl (7-10 s).  The --quick run is what CI exercises: it asserts that
training runs, losses are finite and the report is complete (not any result).
"""

import json
import math
import re

import torch
import verl  # noqa: F401  a hard dependency: fail loudly if it is missing


def test_hf_rollout_samples_match_exact_sequence_probability():
    from verl_focal.lab.demo.model import (
        PROMPT_LEN,
        ModelSpec,
        build_model,
        build_tokenizer,
        encode_prompts,
        sequence_logprob,
    )
    from verl_focal.lab.demo.rl import decode_responses
    from verl_focal.lab.demo.rollout import make_rollout, prompt_batch
    from verl_focal.lab.demo.task import Problem

    tok = build_tokenizer()
    model = build_model(tok, ModelSpec(hidden=32, layers=1, heads=2, intermediate=64), seed=5)
    with torch.no_grad():  # sharpen the random policy so one response has sizeable probability
        model.lm_head.weight.mul_(25.0)
    n = 2000
    ids = encode_prompts(tok, [Problem(t=7, d=3)] * n)
    torch.manual_seed(0)
    out = make_rollout(model).generate_sequences(prompt_batch(ids, [f"u{i}" for i in range(n)], tok))
    resp = out.batch["responses"]
    assert resp.shape == (n, 4)
    texts = decode_responses(tok, resp)
    rows = [tuple(r) for r in resp.tolist()]
    top, count = max(((r, rows.count(r)) for r in set(rows)), key=lambda x: x[1])
    j = rows.index(top)
    full = out.batch["input_ids"][j : j + 1]
    mask = out.batch["attention_mask"][j : j + 1].clone()
    mask[:, :PROMPT_LEN] = 0  # score only the response (through <eos>; padding after it is masked)
    p = float(sequence_logprob(model, full, mask).exp())
    sd = math.sqrt(p * (1 - p) / n)
    assert abs(count / n - p) < 5 * sd + 1e-3, (count / n, p, texts[j])


def test_decode_rejects_special_tokens_and_missing_eos():
    from verl_focal.lab.demo.model import build_tokenizer
    from verl_focal.lab.demo.rl import decode_responses
    from verl_focal.lab.demo.task import Problem, verify

    tok = build_tokenizer()
    c = lambda s: tok.convert_tokens_to_ids(list(s))  # noqa: E731
    eos, bos, pad = tok.eos_token_id, tok.bos_token_id, tok.pad_token_id
    rows = torch.tensor([c("3*8") + [eos], c("3*") + [bos, eos], c("3*8") + c("1"), c("3*") + [eos, pad]])
    texts = decode_responses(tok, rows)
    p = Problem(t=8, d=3)  # 3*8 = 24 = 8 (mod 16)
    assert [verify(p, t) for t in texts] == [True, False, False, False]


def test_quick_demo_end_to_end(tmp_path, capsys):
    from verl_focal.cli import main
    from verl_focal.lab.demo.arms import DEFAULT_ARMS

    out = tmp_path / "demo"
    rc = main(["demo", "--quick", "--no-progress", "--out-dir", str(out)])
    assert rc == 0
    for name in ("results.json", "report.md", "pass_at_k.png", "train_acc.png", "strategy_mass.png"):
        assert (out / name).stat().st_size > 0, name
    res = json.loads((out / "results.json").read_text())
    ran = {r["arm"] for r in res["runs"]} | {s["arm"] for s in res["skipped_arms"]}
    assert ran == {a.name for a in DEFAULT_ARMS}  # every arm either ran or is reported as skipped
    assert {"GRPO N=8", "F-GRPO N=8 γ=1"} <= {r["arm"] for r in res["runs"]}
    for r in res["runs"]:
        assert len(r["history"]) == res["config"]["rl_steps"]
        assert all(math.isfinite(h["loss"]) and math.isfinite(h["grad_norm"]) for h in r["history"])
        pk = [r["eval"]["pass_at_k"][str(k)] for k in res["config"]["ks"]]
        assert all(0 <= a <= b <= 1 for a, b in zip(pk, pk[1:]))  # pass@k is non-decreasing in k
    # a smoke run says so, shows no spread over its single seed, and makes no verdict
    assert res["banner"] == "smoke run: checks the pipeline, not the methods"
    md = (out / "report.md").read_text()
    assert "smoke run: checks the pipeline, not the methods" in md
    assert "±" not in md and "| GRPO N=8 |" in md and "pass@256" in md
    assert res["claims"] and {c["verdict"] for c in res["claims"]} == {"not tested (1 seed)"}
    assert all(c["ci_low"] is None and c["n_seeds"] == 1 for c in res["claims"])
    # the seed's own SFT policy is the base, evaluated on the problems RL trains on (familiar + unfamiliar)
    assert set(res["base"]["per_seed"]) == {"0"} and res["problems"] == {"rl": 256, "familiar": 128, "unfamiliar": 128}
    assert {c["baseline"] for c in res["claims"]} >= {"base (SFT)", "GRPO N=8"}
    assert "smoke run" in capsys.readouterr().err
    # the smoke run exercises every estimator: its groups hold right and wrong rollouts, and every arm's advantages
    # differ from GRPO's on the same batch (measured per step against verl's GRPO; GRPO's own are nonzero)
    for r in res["runs"]:
        hist = r["history"]
        assert sum(h["train_acc"] for h in hist) > 0 and min(h["zero_adv_group_frac"] for h in hist) < 1, r["arm"]
        nonzero = [h["effect/rows_nonzero_frac"] for h in hist]
        changed = [h["effect/rows_changed_frac"] for h in hist]
        assert max(nonzero) > 0
        if r["estimator"] == "grpo":
            assert all(h["effect/adv_diff_vs_grpo"] == 0 for h in hist) and max(changed) == 0
        else:
            assert max(changed) > 0 and max(h["effect/adv_diff_vs_grpo"] for h in hist) > 0, r["arm"]
        # a changed row is a row whose advantage the estimator scaled or redistributed, so it had one
        assert all(c <= z + 1e-9 for c, z in zip(changed, nonzero))
    effect = md.split("\nEstimator effect (", 1)[1].split("\n\n", 2)[1].splitlines()
    assert len(effect) == len(res["runs"]) and not any("not exercised" in line for line in effect)
    assert effect[0].startswith("- GRPO N=8: reference (Â_GRPO itself); ")
    assert all(re.search(r"mean \|Â − Â_GRPO\| = [0-9.e-]+; [0-9.]+% of rows changed", line) for line in effect[1:])


def test_demo_cli_errors_exit_2(capsys):
    from verl_focal.cli import main

    assert main(["demo", "--seeds", "3-1"]) == 2
    assert "'3-1' is not a seed" in capsys.readouterr().err
    assert main(["demo", "--arms", "GRPO N=9"]) == 2
    assert "did you mean 'GRPO N=8'" in capsys.readouterr().err
    assert main(["demo", "--replicate", "/nonexistent/a", "/nonexistent/b"]) == 2
    assert "no results.json at '/nonexistent/a'" in capsys.readouterr().err


def test_demo_cli_out_dir_alias_jobs_and_default_seeds(capsys):
    import argparse

    from verl_focal.cli import main
    from verl_focal.lab.demo.cli import add_arguments
    from verl_focal.lab.demo.experiment import DEFAULT_SEEDS

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert parser.parse_args(["--out", "x"]).out_dir == "x" == parser.parse_args(["--out-dir", "x"]).out_dir
    helptext = parser.format_help()
    assert f"default {DEFAULT_SEEDS[0]}-{DEFAULT_SEEDS[-1]}" in " ".join(helptext.split())
    assert main(["demo", "--jobs", "0"]) == 2
    err = capsys.readouterr().err
    assert "--jobs=0 must be >= 1" in err and len(err.strip().splitlines()) == 1


def test_cpu_rollout_drops_only_torchs_autocast_warning():
    """verl's HFRollout opens a CUDA autocast on a machine without CUDA; torch warns once per process that it
    disables it, which a demo worker printed among the progress lines (and after a Ctrl-C).  The demo's rollout
    drops that warning on the CPU; verl's own method, called directly, still gives it."""
    import warnings

    from verl.workers.rollout.hf_rollout import HFRollout

    from verl_focal.lab.demo.model import ModelSpec, build_model, build_tokenizer, encode_prompts
    from verl_focal.lab.demo.rollout import CPU_AUTOCAST_WARNING, make_rollout, prompt_batch
    from verl_focal.lab.demo.task import Problem

    assert not torch.cuda.is_available()
    tok = build_tokenizer()
    rollout = make_rollout(build_model(tok, ModelSpec(hidden=32, layers=1, heads=2, intermediate=64), seed=5))
    batch = prompt_batch(encode_prompts(tok, [Problem(t=7, d=3)] * 4), [f"u{i}" for i in range(4)], tok)
    for call, expected in ((rollout.generate_sequences, 0), (lambda b: HFRollout.generate_sequences(rollout, b), 1)):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            call(batch)
        assert sum(CPU_AUTOCAST_WARNING in str(w.message) for w in seen) == expected, [str(w.message) for w in seen]
