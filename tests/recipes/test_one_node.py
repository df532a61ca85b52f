"""The recipes on one 8-GPU node as the READMEs write them, and the checkpoint disk line of ``--dry-run``
(gpu-readiness finding 6, T9).

The launch lines are taken from the README and the recipes README as written, with ``--dry-run`` added and the
model folder pointed at a stand-in: Qwen2.5-7B's ``config.json`` (no weights) and a tokenizer file. The dry run
resolves the config, runs the start-up checks, and prints the checkpoint line, whose numbers are checked against a
parameter count computed here by hand from the architecture and against verl's own keep rule.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from verl_focal.integration.startup.run_size import saves_and_peak

ROOT = Path(__file__).resolve().parents[2]
DS = ROOT / "recipes" / "deepscaler"
ROWS = 39_202  # F-GRPO's DeepScaleR after both filters (the recipe's steps per epoch: rows // 256 = 153)

#: Qwen2.5-7B's architecture (its config.json on the hub, trimmed to what the model class reads)
QWEN25_7B = {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
    "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064,
    "max_position_embeddings": 131072, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}


def qwen25_7b_parameters() -> int:
    """By hand: embeddings and LM head (untied), and per layer q/k/v (with biases), o, the gated MLP and two norms."""
    h, i, v, layers, kv = 3584, 18944, 152064, 28, 4 * 128  # 4 KV heads of 128
    attn = (h * h + h) + 2 * (h * kv + kv) + h * h
    return 2 * v * h + layers * (attn + 3 * h * i + 2 * h) + h


def _readme_line(path: Path, marker: str) -> str:
    lines = [ln.split("#", 1)[0].strip() for ln in path.read_text(encoding="utf-8").splitlines() if marker in ln]
    lines = [ln for ln in lines if ln.startswith("MODEL=/models/Qwen2.5-7B")]
    assert len(lines) == 1, (path, marker, lines)
    return lines[0]


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    """A stand-in model folder at <tmp>/models/Qwen2.5-7B and the training file the recipe derives from its name."""
    root = tmp_path_factory.mktemp("node")
    model = root / "models" / "Qwen2.5-7B"
    model.mkdir(parents=True)
    (model / "config.json").write_text(json.dumps(QWEN25_7B))
    (model / "tokenizer.json").write_text("{}")  # the dry run checks that the folder has a tokenizer, not its vocab
    import pyarrow as pa
    import pyarrow.parquet as pq

    (root / "data" / "deepscaler").mkdir(parents=True)
    (root / "data" / "eval").mkdir()
    pq.write_table(pa.table({"prompt": ["p"] * ROWS, "data_source": ["d"] * ROWS,
                             "reward_model": [{"ground_truth": "1"}] * ROWS}),
                   root / "data" / "deepscaler" / "qwen2.5-7b.parquet")
    for name in ("aime24", "aime25", "amc23", "math500", "minerva_math", "olympiadbench"):
        pq.write_table(pa.table({"prompt": ["p"], "data_source": ["d"], "reward_model": [{"ground_truth": "1"}]}),
                       root / "data" / "eval" / f"{name}.parquet")
    return root


def _dry_run(line: str, node: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("NNODES", "ENGINE", "MAX_CKPT_TO_KEEP", "MODEL")}
    env.update(HOME=str(node / "home"), PYTHON=sys.executable, PYTHONPATH=str(ROOT), DATA_DIR=str(node / "data"),
               HF_HUB_OFFLINE="1")
    cmd = line.replace("/models/", f"{node}/models/") + " --dry-run"
    return subprocess.run(["bash", "-c", cmd], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_the_one_node_line_resolves_to_one_node_as_written(node):
    line = _readme_line(DS / "README.md", "one 8-GPU node")
    assert _readme_line(ROOT / "README.md", "one 8-GPU node") == line  # the front page gives the same line
    r = _dry_run(line, node)
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout
    assert re.search(r"^  nnodes: 1$", out, re.M) and re.search(r"^  n_gpus_per_node: 8$", out, re.M)
    assert re.search(r"^    name: vllm$", out, re.M)  # the rollout engine CI runs (make test-vllm)
    assert re.search(r"^  max_actor_ckpt_to_keep: 2$", out, re.M)
    assert re.search(r"^  logger:\n  - console$", out, re.M)
    # the checkpoint line: 10 epochs of 153 steps, saved every 153, 2 kept; 12 bytes per parameter
    params = qwen25_7b_parameters()
    assert params == 7_615_616_512
    (disk,) = [ln for ln in r.stderr.splitlines() if "checkpoints:" in ln]
    assert "10 saves (every 153 of 1530 steps), at most 2 on disk at once" in disk, disk
    assert "model+optimizer+extra = 12 bytes per parameter x 7.62 B parameters" in disk, disk
    assert f"= {params * 12 / 1e9:.1f} GB each, {2 * params * 12 / 1e9:.0f} GB at most" in disk, disk
    assert f"under {node}/home/checkpoints/verl_focal/" in disk, disk
    # the validation before step 1: 6 eval sets of one row here, 4 samples each (val_kwargs.n), every epoch again
    (val,) = [ln for ln in r.stderr.splitlines() if "validation:" in ln]
    assert ("validation: before step 1, again every 153 steps, 6 prompts x 4 = 24 responses of up to 8192 tokens "
            "(trainer.val_before_train=false skips the one before step 1)") in val, val


def test_the_two_node_line_keeps_the_papers_setting(node):
    r = _dry_run(_readme_line(DS / "README.md", "NNODES=2"), node)
    assert r.returncode == 0, r.stderr[-3000:]
    assert re.search(r"^  nnodes: 2$", r.stdout, re.M) and re.search(r"^    name: sglang$", r.stdout, re.M)


def test_the_line_without_a_keep_limit_hf_weights_lora_and_no_saves(node):
    from omegaconf import OmegaConf

    from verl_focal.integration.startup.run_size import checkpoint_disk_line

    params = qwen25_7b_parameters()
    cfg = OmegaConf.create({
        "trainer": {"save_freq": 10, "total_training_steps": 95, "max_actor_ckpt_to_keep": None,
                    "default_local_dir": "/ck"},
        "data": {"train_files": "hdfs://x", "train_batch_size": 8},
        "actor_rollout_ref": {"model": {"path": str(node / "models" / "Qwen2.5-7B"), "lora_rank": 0},
                              "actor": {"checkpoint": {"save_contents": ["model", "hf_model"]},
                                        "fsdp_config": {"model_dtype": "bf16"}}}})
    line = checkpoint_disk_line(cfg)
    assert "10 saves (every 10 of 95 steps), all 10 kept (trainer.max_actor_ckpt_to_keep=null: set a limit)" in line
    assert f"model+hf_model = 4 bytes per parameter x 7.62 B parameters = {params * 4 / 1e9:.1f} GB each" in line
    assert f"{10 * params * 4 / 1e9:.0f} GB at most" in line and "LoRA" not in line
    cfg.actor_rollout_ref.model.lora_rank = 16
    lora = "(LoRA: the optimizer holds the adapters only, so this is an upper bound)"
    assert checkpoint_disk_line(cfg).endswith(lora)
    cfg.actor_rollout_ref.model.path = "Qwen/Qwen2.5-7B"
    assert "the model's size is unknown here: not a local folder" in checkpoint_disk_line(cfg)
    cfg.trainer.total_training_steps = None  # steps from remote data: unknown
    assert "the number of steps is unknown here (remote data files)" in checkpoint_disk_line(cfg)
    cfg.trainer.save_freq = -1
    assert checkpoint_disk_line(cfg) is None


def _verl_peak(total: int, save_freq: int, keep) -> tuple[int, int]:
    """verl 0.9.1's own save loop and keep rule, run on paths: the trainer's save condition and
    ``BaseCheckpointManager.ensure_checkpoint_capacity`` / ``register_checkpoint`` (removal stubbed)."""
    from verl.utils.checkpoint.checkpoint_manager import BaseCheckpointManager as M

    mgr = types.SimpleNamespace(previous_saved_paths=[])
    mgr.remove_previous_save_local_path = lambda paths: None
    saves = peak = 0
    for step in range(1, total + 1):
        if save_freq > 0 and (step == total or step % save_freq == 0):
            M.ensure_checkpoint_capacity(mgr, keep)
            saves += 1
            peak = max(peak, len(mgr.previous_saved_paths) + 1)  # the new one, written beside those kept
            M.register_checkpoint(mgr, f"global_step_{step}", keep)
    return saves, peak


@pytest.mark.parametrize("keep", [None, 0, 1, 2, 3, 20])
@pytest.mark.parametrize(("total", "save_freq"), [(1530, 153), (100, 30), (5, 10), (7, 1), (10, -1)])
def test_saves_and_peak_follow_verls_keep_rule(total, save_freq, keep):
    assert saves_and_peak(total, save_freq, keep) == _verl_peak(total, save_freq, keep)
