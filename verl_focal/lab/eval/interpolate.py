"""``verl-focal eval interpolate``: weight interpolation of an RL checkpoint with the model it started from (WiSE-FT;
Dang et al., arXiv 2504.10478, "Weight Ensembling Improves Reasoning in Language Models"), for a list of λ:

    θ_λ = λ · θ_RL + (1 − λ) · θ_base            (every floating-point tensor, element by element)

λ = 1 is the RL policy, λ = 0 the base model.  Each θ_λ is a control point made without training: one evaluation per
λ (and per training seed), so it fits a study as the ``trained: false`` control family of ``eval frontier``
(docs/eval.md, "GPU workflow").

Both folders are Hugging Face model folders with safetensors weights (``model.safetensors``, or shards listed by
``model.safetensors.index.json``); a verl FSDP checkpoint is merged first (``python -m verl.model_merger merge``).
Before anything is written, the two folders are compared and refused, in one line naming the first difference, when
their architectures (config.json ``architectures``, ``model_type``), tokenizers (the vocabulary files), tensor names,
shapes or dtypes differ.  Then the tensors are streamed: per tensor, the pair is read (``safe_open``), interpolated
in float32 (float64 for float64 tensors) and rounded once to the tensor's dtype, and its bytes are appended to each
λ's output shard, whose safetensors header was written first from the shapes and dtypes.  So at most one tensor pair
and one result are in memory, whatever the model's size.  Integer and boolean tensors (buffers) must be equal in both
folders and are copied.  The RL folder's other files (config.json, generation_config.json, tokenizer files, chat
template) are copied to every output folder.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

from verl_focal.config.errors import InputError

__all__ = ["INDEX", "TOKENIZER_FILES", "parse_lambdas", "output_name", "weight_map", "check_compatible",
           "interpolate_folders", "add_interpolate_parser", "run_interpolate"]

INDEX = "model.safetensors.index.json"
#: the files that define a tokenizer's vocabulary: they must be the same bytes in both folders
TOKENIZER_FILES = ("tokenizer.json", "vocab.json", "merges.txt", "tokenizer.model", "added_tokens.json",
                   "special_tokens_map.json")
#: weight files never copied as "other files"
_WEIGHTS = re.compile(r".*\.(safetensors|bin|pt|pth|msgpack|h5)$|.*\.index\.json$")
#: safetensors dtype names -> bytes per element
_SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1,
          "U16": 2, "U32": 4, "U64": 8, "F8_E4M3": 1, "F8_E5M2": 1}
_FLOATS = ("F64", "F32", "F16", "BF16")


def parse_lambdas(text: str) -> list[float]:
    """``0.25,0.5,0.75`` -> [0.25, 0.5, 0.75]; each in [0, 1], none twice; InputError naming the value otherwise."""
    out = []
    for part in text.split(","):
        try:
            lam = float(part)
        except ValueError:
            raise InputError(f"--lambdas {text!r}: {part!r} is not a number; give a comma list like 0.25,0.5,0.75") \
                from None
        if not 0.0 <= lam <= 1.0:
            raise InputError(f"--lambdas {text!r}: {part} is outside [0, 1] (1 = the RL policy, 0 = the base model)")
        if lam in out:
            raise InputError(f"--lambdas {text!r}: {part} is given twice")
        out.append(lam)
    return out


def output_name(rl_folder: str | Path, lam: float) -> str:
    """The output folder's name: a recipe-named GRPO run ``grpo_<tag>_n<N>_s<SEED>`` gives ``grpo_wise<λ>_<tag>_n<N>
    _s<SEED>`` (the name ``eval families`` reads as the weight-interpolation family), any other ``<name>_wise<λ>``."""
    from verl_focal.lab.eval.families_from_runs import parse_run_name

    name = Path(rl_folder).resolve().name
    p = parse_run_name(name)
    if p is not None and p["recipe"] == "grpo" and p["value"] is None:
        return f"grpo_wise{lam:g}_{p['tag']}_n{p['n']}_s{p['seed']}"
    return f"{name}_wise{lam:g}"


def _config(folder: Path, flag: str) -> dict:
    if not folder.is_dir():
        raise InputError(f"{flag} {folder}: {'is a file' if folder.exists() else 'no such folder'}; give a Hugging "
                         "Face model folder")
    f = folder / "config.json"
    if not f.is_file():
        raise InputError(f"{flag} {folder}: no config.json; give a Hugging Face model folder (merge a verl checkpoint "
                         "first: python -m verl.model_merger merge --backend fsdp ...)")
    try:
        return json.loads(f.read_text(encoding="utf-8"))
    except ValueError as e:
        raise InputError(f"{flag} {f}: not JSON ({e})") from None


def weight_map(folder: Path, flag: str) -> dict[str, str]:
    """Tensor name -> the safetensors file holding it: from ``model.safetensors.index.json`` when there, else from
    the folder's one ``*.safetensors`` file; InputError when the folder holds no safetensors weights."""
    idx = folder / INDEX
    if idx.is_file():
        try:
            wm = json.loads(idx.read_text(encoding="utf-8"))["weight_map"]
        except (ValueError, KeyError) as e:
            raise InputError(f"{flag} {idx}: not a safetensors index ({e})") from None
        missing = sorted({f for f in wm.values() if not (folder / f).is_file()})
        if missing:
            raise InputError(f"{flag} {folder}: {INDEX} names {missing[0]}, which is not there")
        return dict(wm)
    files = sorted(folder.glob("*.safetensors"))
    if len(files) != 1:
        what = "no *.safetensors file" if not files else f"{len(files)} *.safetensors files and no {INDEX}"
        raise InputError(f"{flag} {folder}: {what}; save the model with safetensors (save_pretrained("
                         "safe_serialization=True)) or give the folder with its index")
    from safetensors import safe_open

    with safe_open(str(files[0]), framework="pt") as fh:
        return {k: files[0].name for k in fh.keys()}


def _header(path: Path) -> dict[str, dict]:
    """A safetensors file's header: tensor name -> {dtype, shape, data_offsets} (the 8-byte length, then JSON)."""
    with open(path, "rb") as fh:
        (n,) = struct.unpack("<Q", fh.read(8))
        head = json.loads(fh.read(n))
    head.pop("__metadata__", None)
    return head


def _specs(folder: Path, wm: dict[str, str]) -> dict[str, tuple[str, list[int]]]:
    out = {}
    for file in sorted(set(wm.values())):
        for name, h in _header(folder / file).items():
            if name in wm:
                out[name] = (h["dtype"], list(h["shape"]))
    return out


def check_compatible(rl: Path, base: Path) -> tuple[dict[str, str], dict[str, tuple[str, list[int]]], dict[str, str]]:
    """Refuse (one InputError line naming the first difference) two folders that are not the same architecture with
    the same tokenizer, tensor names, shapes and dtypes.  Returns the RL folder's weight map and tensor specs, and the
    base folder's weight map."""
    c_rl, c_base = _config(rl, "--rl"), _config(base, "--base")
    for key in ("architectures", "model_type"):
        if c_rl.get(key) != c_base.get(key):
            raise InputError(f"--rl {rl} and --base {base}: config.json {key} differs ({c_rl.get(key)!r} vs "
                             f"{c_base.get(key)!r}); interpolate a checkpoint with the model it was trained from")
    for name in TOKENIZER_FILES:
        a, b = rl / name, base / name
        if a.is_file() != b.is_file():
            where = "--rl" if a.is_file() else "--base"
            raise InputError(f"--rl {rl} and --base {base}: tokenizer file {name} is only in {where}; the two models "
                             "must share a tokenizer")
        if a.is_file() and a.read_bytes() != b.read_bytes():
            raise InputError(f"--rl {rl} and --base {base}: tokenizer file {name} differs; the two models must share "
                             "a tokenizer")
    wm_rl, wm_base = weight_map(rl, "--rl"), weight_map(base, "--base")
    only_rl, only_base = sorted(set(wm_rl) - set(wm_base)), sorted(set(wm_base) - set(wm_rl))
    if only_rl or only_base:
        name, where = (only_rl[0], "--rl") if only_rl and (not only_base or only_rl[0] < only_base[0]) else \
            (only_base[0], "--base")
        raise InputError(f"--rl {rl} and --base {base}: tensor {name!r} is only in {where} "
                         f"({len(only_rl)} only in --rl, {len(only_base)} only in --base); the tensor names must be "
                         "the same")
    s_rl, s_base = _specs(rl, wm_rl), _specs(base, wm_base)
    for name in sorted(s_rl):
        (d1, sh1), (d2, sh2) = s_rl[name], s_base[name]
        if sh1 != sh2:
            raise InputError(f"--rl {rl} and --base {base}: tensor {name!r} has shape {sh1} in --rl and {sh2} in "
                             "--base; the shapes must be the same")
        if d1 != d2:
            raise InputError(f"--rl {rl} and --base {base}: tensor {name!r} is {d1} in --rl and {d2} in --base; "
                             "the dtypes must be the same (save both in one dtype)")
    return wm_rl, s_rl, wm_base


def _layout(names: list[str], specs: dict[str, tuple[str, list[int]]]) -> tuple[bytes, dict[str, tuple[int, int]]]:
    """A safetensors header for ``names`` in that order (offsets from the shapes and dtypes) and each tensor's
    (begin, end) in the data part.  The header is padded with spaces to a multiple of 8 bytes, as the format asks."""
    head: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offsets, pos = {}, 0
    for n in names:
        dtype, shape = specs[n]
        size = _SIZES[dtype]
        for d in shape:
            size *= d
        offsets[n] = (pos, pos + size)
        head[n] = {"dtype": dtype, "shape": shape, "data_offsets": [pos, pos + size]}
        pos += size
    text = json.dumps(head, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text, offsets


def _mix(a, b, lam: float, dtype: str):
    """λ·a + (1 − λ)·b in float32 (float64 for F64 tensors), rounded once to the tensors' dtype; non-float tensors
    must be equal and are returned as they are."""
    import torch

    if dtype not in _FLOATS:
        return a
    work = torch.float64 if dtype == "F64" else torch.float32
    return (a.to(work) * lam + b.to(work) * (1.0 - lam)).to(a.dtype)


def interpolate_folders(rl: str | Path, base: str | Path, lambdas: list[float], out: str | Path,
                        on_tensor: Callable[[str], None] | None = None) -> dict[float, Path]:
    """Write θ_λ = λ·θ_RL + (1 − λ)·θ_base for every λ of ``lambdas`` under ``out`` (one folder each,
    :func:`output_name`), tensor by tensor (module docstring); returns λ -> folder.  ``on_tensor(name)`` is called
    after each tensor's results are written, while the pair is still held (the memory bench samples there)."""
    import torch
    from safetensors import safe_open

    rl, base, out = Path(rl), Path(base), Path(out)
    wm_rl, specs, wm_base = check_compatible(rl, base)
    targets = {lam: out / output_name(rl, lam) for lam in lambdas}
    for t in targets.values():
        if t.exists():
            raise InputError(f"--out-dir {out}: {t.name} is already there; remove it or give another --out")
    out.mkdir(parents=True, exist_ok=True)
    partial = {lam: out / f".{t.name}.partial" for lam, t in targets.items()}
    for p in partial.values():
        shutil.rmtree(p, ignore_errors=True)
        p.mkdir()
    shards: dict[str, list[str]] = {}
    for name in sorted(wm_rl):
        shards.setdefault(wm_rl[name], []).append(name)
    handles: dict[str, Any] = {}
    try:
        for file, names in sorted(shards.items()):
            header, _ = _layout(names, specs)
            outs = {lam: open(partial[lam] / file, "wb") for lam in lambdas}
            try:
                for fh in outs.values():
                    fh.write(header)
                with safe_open(str(rl / file), framework="pt") as f_rl:
                    for name in names:
                        bfile = wm_base[name]
                        if bfile not in handles:
                            handles[bfile] = safe_open(str(base / bfile), framework="pt").__enter__()
                        a, b = f_rl.get_tensor(name), handles[bfile].get_tensor(name)
                        dtype = specs[name][0]
                        if dtype not in _FLOATS and not bool((a == b).all()):
                            raise InputError(f"--rl {rl} and --base {base}: {dtype} tensor {name!r} differs between "
                                             "the two; only floating-point tensors are interpolated")
                        for lam, fh in outs.items():
                            r = _mix(a, b, lam, dtype).contiguous()
                            fh.write(r.view(-1).view(torch.uint8).numpy().tobytes())
                            del r
                        if on_tensor is not None:
                            on_tensor(name)
                        del a, b
            finally:
                for fh in outs.values():
                    fh.close()
    finally:
        for h in handles.values():
            h.__exit__(None, None, None)
    if (rl / INDEX).is_file():
        index = json.loads((rl / INDEX).read_text(encoding="utf-8"))
        for p in partial.values():
            (p / INDEX).write_text(json.dumps(index, indent=2), encoding="utf-8")
    for f in sorted(rl.iterdir()):
        if f.is_file() and not _WEIGHTS.fullmatch(f.name):
            for p in partial.values():
                shutil.copy2(f, p / f.name)
    for lam, p in partial.items():
        os.replace(p, targets[lam])
    return targets


def add_interpolate_parser(sub) -> None:
    """Add the ``interpolate`` sub-command to ``eval``'s sub-parsers."""
    p = sub.add_parser("interpolate", help="weight interpolation θ_λ = λ·θ_RL + (1 − λ)·θ_base of two Hugging Face "
                                           "model folders for a list of λ, tensor by tensor (safetensors)")
    p.add_argument("--rl", required=True, metavar="DIR", help="the RL checkpoint, merged to Hugging Face format")
    p.add_argument("--base", required=True, metavar="DIR", help="the model it was trained from")
    p.add_argument("--lambdas", required=True, metavar="L1,L2,...",
                   help="comma list of λ in [0, 1] (1 = the RL policy, 0 = the base model), e.g. 0.25,0.5,0.75")
    p.add_argument("--out-dir", "--out", dest="out_dir", required=True, metavar="DIR",
                   help="folder to write one model folder per λ into (--out is an alias)")


def run_interpolate(args: argparse.Namespace) -> int:
    lambdas = parse_lambdas(args.lambdas)
    done = interpolate_folders(args.rl, args.base, lambdas, args.out_dir)
    for lam, folder in done.items():
        print(f"λ = {lam:g}: {folder}")
    print("each is one evaluation, no training: `eval generate --model FOLDER`, then the points of a `trained: false` "
          "control family in the families file (docs/eval.md)")
    return 0
