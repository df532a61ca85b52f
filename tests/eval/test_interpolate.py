"""`verl-focal eval interpolate`: θ_λ = λ·θ_RL + (1 − λ)·θ_base on tiny model folders made here, single file and
sharded; the exact values against the formula computed here, every refusal in one line (exit 2), and memory: the
process's anonymous memory while streaming stays at about one tensor pair, far below one model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save_file

from verl_focal.cli import main as cli_main
from verl_focal.lab.eval.interpolate import interpolate_folders, output_name, parse_lambdas

ARCH = {"architectures": ["TinyForCausalLM"], "model_type": "tiny", "torch_dtype": "float32"}


def _model(folder: Path, seed: int, shards: int = 1, config=None, tokenizer=b'{"model": {"vocab": {"a": 0}}}',
           tensors=None) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    ts = tensors if tensors is not None else {
        "embed.weight": torch.randn(6, 4, generator=g),
        "layer.0.w": torch.randn(4, 4, generator=g).to(torch.float16),
        "layer.1.w": torch.randn(4, 4, generator=g).to(torch.bfloat16),
        "norm.weight": torch.randn(4, generator=g),
        "buffer.ids": torch.arange(5, dtype=torch.int64),
    }
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config or ARCH))
    (folder / "tokenizer.json").write_bytes(tokenizer)
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": f"seed {seed}"}))
    names = sorted(ts)
    if shards == 1:
        save_file({k: ts[k] for k in names}, str(folder / "model.safetensors"))
    else:
        wm = {}
        for i in range(shards):
            file = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
            part = names[i::shards]
            save_file({k: ts[k] for k in part}, str(folder / file))
            wm.update({k: file for k in part})
        (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": wm}))
    return ts


def _expected(a: torch.Tensor, b: torch.Tensor, lam: float) -> torch.Tensor:
    """The formula, in numpy float32 (float16 and bfloat16 go through float32, then one rounding)."""
    if not a.is_floating_point():
        return a
    x = a.to(torch.float32).numpy() * np.float32(lam) + b.to(torch.float32).numpy() * np.float32(1.0 - lam)
    return torch.from_numpy(x).to(a.dtype)


def _read(folder: Path) -> dict[str, torch.Tensor]:
    out = {}
    for f in folder.glob("*.safetensors"):
        with safe_open(str(f), framework="pt") as fh:
            out.update({k: fh.get_tensor(k) for k in fh.keys()})
    return out


@pytest.mark.parametrize("shards", [1, 2])
def test_the_interpolated_values_are_the_formula_exactly(tmp_path, shards):
    rl = _model(tmp_path / "grpo_tiny_n8_s3", 1, shards)
    base = _model(tmp_path / "base", 2, shards)
    done = interpolate_folders(tmp_path / "grpo_tiny_n8_s3", tmp_path / "base", [0.25, 0.5, 1.0, 0.0], tmp_path / "o")
    assert {lam: p.name for lam, p in done.items()} == {
        0.25: "grpo_wise0.25_tiny_n8_s3", 0.5: "grpo_wise0.5_tiny_n8_s3", 1.0: "grpo_wise1_tiny_n8_s3",
        0.0: "grpo_wise0_tiny_n8_s3"}
    for lam, folder in done.items():
        got = _read(folder)
        assert sorted(got) == sorted(rl)
        for k in rl:
            assert got[k].dtype == rl[k].dtype and got[k].shape == rl[k].shape
            assert torch.equal(got[k], _expected(rl[k], base[k], lam)), (lam, k)
        # the RL folder's other files travel with every λ: config and tokenizer
        assert (folder / "config.json").read_text() == json.dumps(ARCH)
        assert json.loads((folder / "tokenizer_config.json").read_text()) == {"chat_template": "seed 1"}
        assert ((folder / "model.safetensors.index.json").is_file()) == (shards > 1)
    # λ = 1 is the RL policy and λ = 0 the base model, bit for bit
    assert all(torch.equal(_read(done[1.0])[k], rl[k]) for k in rl)
    assert all(torch.equal(_read(done[0.0])[k], base[k]) for k in rl if k != "buffer.ids")
    # a value by hand: 0.25·a + 0.75·b for one float32 element
    a, b = rl["embed.weight"][0, 0].item(), base["embed.weight"][0, 0].item()
    assert _read(done[0.25])["embed.weight"][0, 0].item() == pytest.approx(0.25 * a + 0.75 * b, rel=1e-6)
    assert not list(Path(tmp_path / "o").glob(".*partial"))


def test_cli_writes_and_names_each_folder(tmp_path, capsys):
    _model(tmp_path / "rl", 1)
    _model(tmp_path / "base", 2)
    assert cli_main(["eval", "interpolate", "--rl", str(tmp_path / "rl"), "--base", str(tmp_path / "base"),
                     "--lambdas", "0.75,0.5", "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert f"λ = 0.75: {tmp_path / 'o' / 'rl_wise0.75'}" in out and "one evaluation, no training" in out
    assert output_name(tmp_path / "rl", 0.5) == "rl_wise0.5"


def _refused(tmp_path, capsys, needle, rl_kw=None, base_kw=None, lambdas="0.5"):
    _model(tmp_path / "rl", 1, **(rl_kw or {}))
    _model(tmp_path / "base", 2, **(base_kw or {}))
    rc = cli_main(["eval", "interpolate", "--rl", str(tmp_path / "rl"), "--base", str(tmp_path / "base"),
                   "--lambdas", lambdas, "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2, err
    first = err.splitlines()[0]
    assert needle in first, first
    assert not (tmp_path / "o" / "rl_wise0.5").exists()


def _other(**changes):
    g = torch.Generator().manual_seed(5)
    ts = {"embed.weight": torch.randn(6, 4, generator=g), "layer.0.w": torch.randn(4, 4, generator=g).half(),
          "layer.1.w": torch.randn(4, 4, generator=g).bfloat16(), "norm.weight": torch.randn(4, generator=g),
          "buffer.ids": torch.arange(5)}
    for k, v in changes.items():
        if v is None:
            ts.pop(k)
        else:
            ts[k] = v
    return ts


@pytest.mark.parametrize("base_kw, needle", [
    ({"config": {**ARCH, "architectures": ["OtherForCausalLM"]}},
     "config.json architectures differs (['TinyForCausalLM'] vs ['OtherForCausalLM'])"),
    ({"config": {**ARCH, "model_type": "other"}}, "config.json model_type differs ('tiny' vs 'other')"),
    ({"tokenizer": b'{"model": {"vocab": {"b": 0}}}'}, "tokenizer file tokenizer.json differs"),
    ({"tensors": _other(**{"norm.weight": None})}, "tensor 'norm.weight' is only in --rl (1 only in --rl, 0 only in"),
    ({"tensors": _other(**{"extra.w": torch.zeros(2)})}, "tensor 'extra.w' is only in --base"),
    ({"tensors": _other(**{"norm.weight": torch.zeros(5)})},
     "tensor 'norm.weight' has shape [4] in --rl and [5] in --base"),
    ({"tensors": _other(**{"layer.0.w": torch.zeros(4, 4)})}, "tensor 'layer.0.w' is F16 in --rl and F32 in --base"),
    ({"tensors": _other(**{"buffer.ids": torch.arange(1, 6)})}, "I64 tensor 'buffer.ids' differs between the two"),
])
def test_each_difference_is_refused_in_one_line(tmp_path, capsys, base_kw, needle):
    _refused(tmp_path, capsys, needle, base_kw=base_kw)


def test_other_refusals(tmp_path, capsys):
    _model(tmp_path / "rl", 1)
    _model(tmp_path / "base", 2)
    (tmp_path / "base" / "tokenizer.json").unlink()
    argv = ["eval", "interpolate", "--rl", str(tmp_path / "rl"), "--base", str(tmp_path / "base"), "--lambdas"]
    assert cli_main(argv + ["0.5", "--out", str(tmp_path / "o")]) == 2
    assert "tokenizer file tokenizer.json is only in --rl" in capsys.readouterr().err
    (tmp_path / "base" / "model.safetensors").rename(tmp_path / "base" / "model.bin")
    (tmp_path / "base" / "tokenizer.json").write_bytes((tmp_path / "rl" / "tokenizer.json").read_bytes())
    assert cli_main(argv + ["0.5", "--out", str(tmp_path / "o")]) == 2
    assert "--base" in (err := capsys.readouterr().err) and "no *.safetensors file; save the model with safetensors" \
        in err
    assert cli_main(["eval", "interpolate", "--rl", str(tmp_path / "nope"), "--base", str(tmp_path / "base"),
                     "--lambdas", "0.5", "--out", str(tmp_path / "o")]) == 2
    assert "--rl " in (err := capsys.readouterr().err) and "no such folder" in err
    for text, needle in (("0.5,1.5", "1.5 is outside [0, 1]"), ("0.5,x", "'x' is not a number"),
                         ("0.5,0.5", "0.5 is given twice")):
        with pytest.raises(Exception, match=needle.replace("[", r"\[").replace("]", r"\]")):
            parse_lambdas(text)


def test_an_existing_output_is_not_overwritten(tmp_path, capsys):
    _model(tmp_path / "rl", 1)
    _model(tmp_path / "base", 2)
    (tmp_path / "o" / "rl_wise0.5").mkdir(parents=True)
    assert cli_main(["eval", "interpolate", "--rl", str(tmp_path / "rl"), "--base", str(tmp_path / "base"),
                     "--lambdas", "0.5", "--out", str(tmp_path / "o")]) == 2
    assert "rl_wise0.5 is already there" in capsys.readouterr().err


def _anon_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1])
    pytest.skip("no RssAnon in /proc/self/status")


def test_memory_stays_at_about_one_tensor_pair(tmp_path):
    """48 float32 tensors of 2 MiB per model (96 MiB each): while streaming, the process's anonymous memory (not the
    files' page cache, which safe_open maps) grows by a few tensors at most, not by a model.  Sampled after each
    tensor, when the pair and the result are still held.  Putting the whole model in memory (reading every tensor
    first) makes this fail: the growth is then about 96 MiB or more."""
    n, numel = 48, 512 * 1024
    tensors = {f"t{i:02d}": torch.full((numel,), float(i)) for i in range(n)}
    _model(tmp_path / "rl", 0, tensors=tensors)
    _model(tmp_path / "base", 0, tensors={k: v + 1 for k, v in tensors.items()})
    del tensors
    before = _anon_kib()
    peak = [before]
    interpolate_folders(tmp_path / "rl", tmp_path / "base", [0.5], tmp_path / "o",
                        on_tensor=lambda name: peak.append(_anon_kib()))
    grown_mib = (max(peak) - before) / 1024
    pair_mib = 2 * numel * 4 / 2**20
    assert len(peak) == n + 1
    assert grown_mib < 4 * pair_mib, f"grew {grown_mib:.1f} MiB; one pair is {pair_mib:.0f} MiB, a model 96 MiB"
    got = _read(tmp_path / "o" / "rl_wise0.5")
    assert float(got["t07"][0]) == 7.5 and float(got["t47"][-1]) == 47.5
