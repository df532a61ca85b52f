"""Fast checks of the e2e fixtures themselves (no verl, no Ray): the reward, the tiny task, the launcher's sweep.

The end-to-end assertions only mean something if the reward scores as documented and
an untrained model gets a mixed share of answers right (else every group is all-wrong,
every advantage is 0 and DAPO filtering never finishes a batch).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from reward_fn import compute_score, cue_signature  # noqa: E402


def test_reward_acc_is_answer_digit_present():
    hit = compute_score("e2e_tiny_arith", "The answer is 7.", "7")
    miss = compute_score("e2e_tiny_arith", "The answer is 8.", "7")
    assert hit == {"score": 1.0, "acc": 1.0, "pred": "7", "cue_sig": "digits+words+symbols"}
    assert miss["acc"] == 0.0 and miss["score"] == 0.0 and miss["pred"] == "8"
    empty = compute_score("e2e_tiny_arith", "", "3")
    assert empty == {"score": 0.0, "acc": 0.0, "pred": "", "cue_sig": "none"}


def test_reward_returns_the_same_keys_for_every_response():
    # verl's reward loop stacks extras per key: a missing key in one response breaks the batch.
    keys = {frozenset(compute_score("s", text, "5")) for text in ["5", "abc", "", "+?", "55 five"]}
    assert keys == {frozenset({"score", "acc", "pred", "cue_sig"})}


@pytest.mark.parametrize(
    "text,label",
    [("12", "digits"), ("mod", "words"), ("?", "symbols"), ("a1", "digits+words"), (" \n", "none")],
)
def test_cue_signature_classes(text, label):
    assert cue_signature(text) == label


def test_untrained_tiny_model_mixes_right_and_wrong(tmp_path):
    """Sampling the random tiny model on a prompt gives acc strictly between 0.1 and 0.9."""
    torch = pytest.importorskip("torch")
    from tiny_assets import build_all
    from transformers import AutoModelForCausalLM, AutoTokenizer

    paths = build_all(tmp_path, seed=0)
    tok = AutoTokenizer.from_pretrained(paths["model"])
    model = AutoModelForCausalLM.from_pretrained(paths["model"])
    # The chat template renders the message verbatim and opens an assistant turn.
    text = tok.apply_chat_template(
        [{"role": "user", "content": "What is 3 + 4 mod 10?"}], add_generation_prompt=True, tokenize=False
    )
    assert text == "<|user|>What is 3 + 4 mod 10?<|end|><|assistant|>"
    ids = tok(text, return_tensors="pt").input_ids
    torch.manual_seed(0)
    out = model.generate(ids.repeat(64, 1), do_sample=True, max_new_tokens=12, pad_token_id=tok.pad_token_id)
    responses = tok.batch_decode(out[:, ids.shape[1] :], skip_special_tokens=True)
    acc = sum(compute_score("s", r, "7")["acc"] for r in responses) / len(responses)
    assert 0.1 < acc < 0.9, acc


def _sleeper(env: dict[str, str], ignore_term: bool = False, **kw) -> subprocess.Popen:
    """A Python process that sleeps a minute (``ignore_term``: and ignores SIGTERM), started with ``env``; it has
    printed ``ready`` when this returns."""
    code = ("import signal, time\n" + ("signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if ignore_term else "")
            + "print('ready', flush=True)\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True, **kw)
    assert proc.stdout.readline().strip() == "ready"
    return proc


def test_stop_leftovers_stops_the_runs_processes_only(tmp_path):
    """The launcher's sweep after a run: every process started with the run's marker is stopped (SIGTERM, then
    SIGKILL for one that ignores it), wherever it hangs in the process tree; another run's process is left alone."""
    from launch import RUN_MARKER, processes_marked, stop_leftovers

    marker = str(tmp_path / "run")
    mine = {**os.environ, RUN_MARKER: marker}
    polite = _sleeper(mine, start_new_session=True)
    stubborn = _sleeper(mine, ignore_term=True)
    other = _sleeper({**os.environ, RUN_MARKER: marker + "2"})
    # an orphan, as a Ray actor is once its raylet is gone: its parent exited, init adopted it
    parent = subprocess.run(
        [sys.executable, "-c", "import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', "
         "'import time; time.sleep(60)'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)"],
        env=mine, capture_output=True, text=True, check=True)
    orphan = int(parent.stdout)
    try:
        assert sorted(processes_marked(marker)) == sorted([polite.pid, stubborn.pid, orphan])
        left = stop_leftovers(marker, grace_s=1.0)
        assert len(left) == 3 and all("time.sleep(60)" in c for c in left), left
        assert polite.wait(timeout=10) == -signal.SIGTERM
        assert stubborn.wait(timeout=10) == -signal.SIGKILL
        deadline = time.monotonic() + 10
        while processes_marked(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert processes_marked(marker) == []  # the orphan too
        assert other.poll() is None
        assert stop_leftovers(marker) == []
    finally:
        for p in (polite, stubborn, other):
            p.kill()
            p.wait()


def test_no_partition_odds_is_the_binomial_product():
    from partition_odds import no_partition_odds

    # P(Bin(2, 1/2) <= 1) = 3/4; P(Bin(3, 0.1) <= 1) = 0.9^3 + 3 * 0.1 * 0.9^2 = 0.972
    assert no_partition_odds([0.5], 2) == pytest.approx(0.75)
    assert no_partition_odds([0.5, 0.1], 2) == pytest.approx(0.75 * (0.9**2 + 2 * 0.1 * 0.9))
    assert no_partition_odds([0.1], 3) == pytest.approx(0.972)
    assert no_partition_odds([], 8) == 1.0


def test_cue_run_with_the_package_scorer_partitions_in_practically_every_run(tmp_path):
    """``test_cue_grpo_main_ppo`` asserts that some group was partitioned; with the package's scorer the tiny model
    is right 6-8 % of the time, so its rollout count (``e2e_checks.CUE_SCORER_N``) must make a run without any
    group of >= 2 correct answers rare.  Sampled here from the initial weights, 256 responses a prompt."""
    pytest.importorskip("torch")
    from e2e_checks import CUE_SCORER_N
    from partition_odds import no_partition_odds, success_rates
    from tiny_assets import build_all

    rates = success_rates(build_all(tmp_path, seed=0), prompts=8, samples=256)
    assert all(0.02 < p < 0.2 for p in rates), rates
    steps = [no_partition_odds(rates[:4], CUE_SCORER_N), no_partition_odds(rates[4:], CUE_SCORER_N)]
    assert steps[0] < 0.01 and steps[0] * steps[1] < 1e-4, (rates, steps)


def test_a_run_in_a_reused_folder_does_not_read_the_earlier_runs_records(tmp_path):
    """An earlier run's records are gone before the next run starts: the server appends to its records, and a clean
    clone's CI on a machine that had run the rehearsal read 6 weight updates for a 2-step run (l2 0, 3, 4.76, 0, 3,
    4.69) and failed the trained-and-synced check.  What is not the run's own (checkpoints, assets) stays."""
    from launch import RUN_OUTPUTS, run_trainer

    (tmp_path / "rollout_stats").mkdir()
    (tmp_path / "rollout_stats" / "server_0.jsonl").write_text('{"l2_from_initial": 0.0}\n')
    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "data": {}}\n')
    (tmp_path / "leftovers.txt").write_text("python -m stale\n")
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "keep.json").write_text("{}")
    # a module that writes none of the run's outputs: a crashed trainer, as far as the readers can tell
    rc, _ = run_trainer("platform", [], tmp_path, timeout=60)
    assert rc == 0
    assert list((tmp_path / "rollout_stats").iterdir()) == []
    assert not (tmp_path / "metrics.jsonl").exists()
    assert (tmp_path / "leftovers.txt").read_text() == ""
    assert (tmp_path / "train.log").read_text().splitlines()[0].endswith("-m platform")
    assert (tmp_path / "ckpt" / "keep.json").exists()
    assert set(RUN_OUTPUTS) == {"train.log", "metrics.jsonl", "rollout_stats", "leftovers.txt"}
