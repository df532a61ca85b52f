"""The size of a run from its resolved config, in the lines ``--dry-run`` prints: the actor checkpoints' disk, and
the responses the validation passes generate.

verl 0.9.1 saves when ``trainer.save_freq > 0`` at every ``save_freq``-th step and at the last one
(``trainer_base.py``: ``is_last_step or global_steps % save_freq == 0``), and keeps the last
``trainer.max_actor_ckpt_to_keep`` of them (null or 0: all; while a new one is written with a limit of 1, the old one
stays until the new one is complete).  The steps are ``trainer.total_training_steps``, or
``rows // data.train_batch_size`` per epoch times ``trainer.total_epochs`` (the loader drops the last partial batch).

One checkpoint holds, per parameter: the FSDP model state in ``actor.fsdp_config.model_dtype`` (4 bytes in fp32),
Adam's two fp32 moments (8 bytes) for ``optimizer``, bf16 weights (2 bytes) for ``hf_model``; ``extra`` (RNG and
scheduler state) is negligible.  The parameter count comes from the model folder: the tensor shapes in its
safetensors headers, or else its ``config.json`` instantiated on torch's ``meta`` device (no memory, no download).
This is arithmetic on the config, not a measurement; the shards are spread over the nodes' ranks.

Validation (``trainer_base.py``) runs before step 1 when ``trainer.val_before_train``, every ``trainer.test_freq``
steps when that is > 0, and after the last step; each pass samples ``rollout.val_kwargs.n`` responses per row of
``data.val_files``, each up to ``data.max_response_length`` tokens.
"""

from __future__ import annotations

import glob
import math
import os
from typing import Any

from verl_focal.config.key_names import config_get

__all__ = ["BYTES_PER_PARAM", "checkpoint_disk_line", "count_parameters", "run_size_lines", "saves_and_peak",
           "validation_line"]

_DTYPE_BYTES = {"fp32": 4, "float32": 4, "bf16": 2, "bfloat16": 2, "fp16": 2, "float16": 2}
#: bytes per parameter of each ``checkpoint.save_contents`` entry (``model``: see ``_DTYPE_BYTES``)
BYTES_PER_PARAM = {"optimizer": 8, "hf_model": 2, "extra": 0}


def count_parameters(model_path: str) -> int | None:
    """The model's parameter count from a local folder: safetensors headers, else ``config.json`` on ``meta``;
    None for a hub name or a folder with neither."""
    path = os.path.expanduser(model_path)
    if not os.path.isdir(path):
        return None
    shards = sorted(glob.glob(os.path.join(path, "*.safetensors")))
    if shards:
        from safetensors import safe_open

        total = 0
        try:
            for shard in shards:
                with safe_open(shard, framework="pt") as f:
                    total += sum(math.prod(f.get_slice(k).get_shape()) for k in f.keys())
        except (OSError, ValueError, RuntimeError):  # a truncated or foreign file: no estimate, no refusal
            return None
        return total
    if not os.path.isfile(os.path.join(path, "config.json")):
        return None
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    try:
        cfg = AutoConfig.from_pretrained(path, local_files_only=True)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(cfg)
    except (ValueError, KeyError, OSError):  # an architecture transformers does not know
        return None
    return sum(p.numel() for p in model.parameters())


def _rows(config: Any, key: str) -> int | None:
    files = config_get(config, key, None)
    files = [files] if isinstance(files, str) else list(files or [])
    if not files or any(not os.path.isfile(os.path.expanduser(str(f))) for f in files):
        return None
    import pyarrow.parquet as pq

    try:
        return sum(pq.ParquetFile(os.path.expanduser(str(f))).metadata.num_rows for f in files)
    except (OSError, ValueError):  # not a parquet file (pyarrow's ArrowInvalid is a ValueError): no estimate
        return None


def saves_and_peak(total_steps: int, save_freq: int, keep: int | None) -> tuple[int, int]:
    """(checkpoints written, most on disk at once) for verl's save and keep rules (module docstring)."""
    if save_freq <= 0 or total_steps <= 0:
        return 0, 0
    saves = total_steps // save_freq + (1 if total_steps % save_freq else 0)
    if not keep or keep <= 0:
        return saves, saves
    return saves, min(saves, max(keep, 2) if keep == 1 else keep)


def checkpoint_disk_line(config: Any) -> str | None:
    """One line on the actor checkpoints' disk, or None when the run saves none."""
    save_freq = int(config_get(config, "trainer.save_freq", -1) or -1)
    if save_freq <= 0:
        return None
    steps = config_get(config, "trainer.total_training_steps", None)
    if steps is None:
        rows = _rows(config, "data.train_files")
        batch = int(config_get(config, "data.train_batch_size", 0) or 0)
        if rows is None or batch <= 0:
            return (f"checkpoints: every {save_freq} steps under {config_get(config, 'trainer.default_local_dir', '?')}"
                    "; the number of steps is unknown here (remote data files)")
        steps = rows // batch * int(config_get(config, "trainer.total_epochs", 1) or 1)
    keep = config_get(config, "trainer.max_actor_ckpt_to_keep", None)
    saves, peak = saves_and_peak(int(steps), save_freq, None if keep is None else int(keep))
    contents = [str(c) for c in config_get(config, "actor_rollout_ref.actor.checkpoint.save_contents", ["model"])]
    dtype = str(config_get(config, "actor_rollout_ref.actor.fsdp_config.model_dtype", "fp32"))
    per_param = sum(_DTYPE_BYTES.get(dtype, 4) if c == "model" else BYTES_PER_PARAM.get(c, 0) for c in contents)
    where = config_get(config, "trainer.default_local_dir", "?")
    kept = f"at most {peak} on disk at once (trainer.max_actor_ckpt_to_keep={keep})" if keep else (
        f"all {saves} kept (trainer.max_actor_ckpt_to_keep=null: set a limit)")
    head = (f"checkpoints: {saves} saves (every {save_freq} of {steps} steps), {kept}, under {where}; "
            f"{'+'.join(contents)} = {per_param} bytes per parameter")
    params = count_parameters(str(config_get(config, "actor_rollout_ref.model.path", "")))
    if params is None:
        return f"{head} (the model's size is unknown here: not a local folder)"
    lora = int(config_get(config, "actor_rollout_ref.model.lora_rank", 0) or 0) > 0
    one = params * per_param / 1e9
    return (f"{head} x {params / 1e9:.2f} B parameters = {one:.1f} GB each, {peak * one:.0f} GB at most"
            + (" (LoRA: the optimizer holds the adapters only, so this is an upper bound)" if lora else ""))


def validation_line(config: Any) -> str | None:
    """One line on the validation before step 1 (responses, their length cap, the key that skips it), or None
    when there is none or the validation files are not local."""
    if not config_get(config, "trainer.val_before_train", True):
        return None
    rows = _rows(config, "data.val_files")
    if rows is None:
        return None
    n = int(config_get(config, "actor_rollout_ref.rollout.val_kwargs.n", 1) or 1)
    length = config_get(config, "data.max_response_length", "?")
    freq = int(config_get(config, "trainer.test_freq", -1) or -1)
    again = f", again every {freq} steps" if freq > 0 else ""
    return (f"validation: before step 1{again}, {rows} prompts x {n} = {rows * n} responses of up to {length} tokens "
            "(trainer.val_before_train=false skips the one before step 1)")


def run_size_lines(config: Any) -> list[str]:
    """The run's size in the lines a dry run prints: :func:`validation_line` and :func:`checkpoint_disk_line`."""
    return [line for line in (validation_line(config), checkpoint_disk_line(config)) if line]
