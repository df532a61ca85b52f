"""The GPU smoke: every code path of ours that a GPU changes, run on one device and checked against the CPU.

    python gpu/smoke.py --device cuda            # on a GPU machine (gpu/run.sh sets up the carried wheels)
    python gpu/smoke.py --device cpu --small     # the same checks on the CPU (tests/gpu/test_smoke_cpu.py)

Parts (``--parts 0,1,2,3,4``; each prints ``PASS``/``FAIL <part>.<check>: <detail>`` lines):

0. the environment: torch sees the device; ``import verl`` alone registers ``f_grpo`` through verl's entry point.
1. every estimator of ours through verl's own ``compute_advantage`` (hooked by the plugin) on a DataProto with uneven
   groups and padding rows, fp32 and bf16 rewards, int64 and bool masks: on the device and on the CPU, the
   advantages stay on the device in verl's dtype, agree within 1e-5 (fp32) or 2e-2 (bf16), and the step metrics
   agree; then each estimator's time at full size (2,048 x 8,192) on the device and on the CPU.
2. ``verl-focal demo``'s quick preset, family arms, with the models on the device.
3. a padded vocabulary (64 ids beyond the tokenizer): responses sampled on the device by a random tiny Llama decode
   the same through our ``BatchDecoder`` as through ``tokenizer.batch_decode``, and the fast path stays on; the
   old log-prob reduction takes the device's tensors; ``unlikely_grpo``'s within-group ranks from bf16 log-probs
   against fp32 ones (recorded).
4. the TaskRunner's CPU work at the recipes' size, one torch thread: ``batch_decode`` against ``BatchDecoder`` on
   2,048 x 8,192 (``--small``: 64 x 512), texts equal, both times recorded.

``--out FILE`` writes every check and number as JSON.  Exit status 0 when every check passed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

RESULTS: list[dict[str, Any]] = []


def check(part: str, name: str, ok: bool, detail: str = "", **numbers: Any) -> bool:
    RESULTS.append({"part": part, "check": name, "ok": bool(ok), "detail": detail, **numbers})
    print(f"{'PASS' if ok else 'FAIL'} {part}.{name}: {detail}", flush=True)
    return bool(ok)


# ----------------------------------------------------------------------------------------------------- part 0
def part0(device: str) -> None:
    import torch

    if device == "cuda":
        smi = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
        check("0", "nvidia-smi", smi.returncode == 0, smi.stdout.strip().splitlines()[0] if smi.stdout else smi.stderr)
        check("0", "torch.cuda", torch.cuda.is_available(), f"torch {torch.__version__}, cuda {torch.version.cuda}")
    code = ("import sys, verl; from verl.trainer.ppo import core_algos; "
            "print('f_grpo' in core_algos.ADV_ESTIMATOR_REGISTRY, 'verl_focal.plugin' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    check("0", "entry-point", r.returncode == 0 and r.stdout.split() == ["True", "True"],
          r.stdout.strip() or r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.stdout.strip())


# ----------------------------------------------------------------------------------------------------- part 1
def _algo(name: str):
    from omegaconf import OmegaConf

    return OmegaConf.create({"adv_estimator": name, "norm_adv_by_std_in_grpo": True, "focal": {"gamma": 1.0},
                             "passk": {"k": 2}, "cue": {"alpha": 0.8}, "unlikely": {"beta": 0.5}})


def _batch(groups: int, n: int, length: int, padding: int, seed: int = 0):
    """verl's legacy DataProto for one step: ``groups`` groups of ``n`` (every third group one short), padding rows
    with an empty mask, a 0/1 outcome reward on each row's last token, ``acc``, cue signatures and old log-probs."""
    import numpy as np
    import torch

    rng = np.random.default_rng(seed)
    sizes = [n - (g % 3 == 2) for g in range(groups)]
    uid = np.array([f"g{g}" for g, s in enumerate(sizes) for _ in range(s)] + ["g0"] * padding, dtype=object)
    rows = len(uid)
    lengths = rng.integers(1, length + 1, size=rows)
    lengths[-padding:] = 0 if padding else lengths[-padding:]
    mask = torch.as_tensor(np.arange(length)[None, :] < lengths[:, None], dtype=torch.int64)
    acc = (rng.random(rows) < 0.4).astype(np.float64)
    rewards = torch.zeros(rows, length)
    last = np.maximum(lengths - 1, 0)
    rewards[np.arange(rows), last] = torch.as_tensor(acc, dtype=torch.float32) * torch.as_tensor(lengths > 0)
    old_lp = torch.as_tensor(rng.uniform(-3.0, -0.01, size=(rows, length)), dtype=torch.float32) * mask
    sigs = np.array([f"math_v1:{'abc'[i % 3]}" if a else "math_v1:!wrong" for i, a in enumerate(acc)], dtype=object)
    tensors = {"token_level_rewards": rewards, "token_level_scores": rewards.clone(), "response_mask": mask,
               "old_log_probs": old_lp, "responses": torch.ones(rows, length, dtype=torch.long),
               "prompts": torch.ones(rows, 4, dtype=torch.long), "attention_mask": torch.ones(rows, 4 + length)}
    return tensors, {"uid": uid, "acc": acc, "cue_sig": sigs}


def _as(batch, device: str, rewards_dtype, mask_dtype):
    """A fresh DataProto of ``batch`` (from :func:`_batch`) on ``device``, rewards and mask in the given dtypes."""
    from verl import DataProto

    tensors, non_tensors = batch
    tensors = {k: v.to(device) for k, v in tensors.items()}
    tensors["token_level_rewards"] = tensors["token_level_rewards"].to(rewards_dtype)
    tensors["response_mask"] = tensors["response_mask"].to(mask_dtype)
    return DataProto.from_dict(tensors=tensors, non_tensors={k: v.copy() for k, v in non_tensors.items()})


def _advantage(data, name: str):
    from verl.trainer.ppo import ray_trainer

    out = ray_trainer.compute_advantage(data, adv_estimator=name, config=_algo(name))
    return out.batch["advantages"], dict(out.meta_info.get("verl_focal_metrics", {}))


def _sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def part1(device: str, small: bool) -> None:
    import torch
    import verl  # noqa: F401  (the plugin wraps compute_advantage on import)

    from verl_focal.estimators import all_specs
    from verl_focal.integration.hooks.dataproto_hook import ON_DEVICE, install_legacy_hook

    tok = _tokenizer()
    install_legacy_hook(lambda: tok)  # what our legacy TaskRunner does: the context from the DataProto, texts decoded

    names = [s.name for s in all_specs()]
    base = _batch(groups=8, n=8, length=16, padding=3)
    for name in names:
        for rdt in (torch.float32, torch.bfloat16):
            for mdt in (torch.int64, torch.bool):
                tag = f"{name}[{str(rdt)[6:]},{str(mdt)[6:]}]"
                try:
                    adv_d, met_d = _advantage(_as(base, device, rdt, mdt), name)
                    adv_c, met_c = _advantage(_as(base, "cpu", rdt, mdt), name)
                except Exception as e:  # the smoke records the first error site of each case and goes on
                    check("1", tag, False, f"{type(e).__name__}: {e}"[:300])
                    continue
                tol = 1e-5 if rdt == torch.float32 else 2e-2
                diff = (adv_d.float().cpu() - adv_c.float()).abs().max().item()
                same_metrics = met_d.keys() == met_c.keys() and all(  # wall times (``..._s``) aside
                    abs(float(met_d[k]) - float(met_c[k])) <= 1e-4 * max(1.0, abs(float(met_c[k])))
                    for k in met_c if not k.endswith("_s") and k != ON_DEVICE)
                # where the batch lay: the hook's own record of it (1 off the host)
                same_metrics &= (met_d.get(ON_DEVICE), met_c.get(ON_DEVICE)) == (float(device != "cpu"), 0.0)
                ok = (adv_d.device.type == device and adv_d.dtype == adv_c.dtype and diff <= tol and same_metrics
                      and bool(adv_c.abs().sum() > 0))
                check("1", tag, ok, f"device {adv_d.device}, dtype {adv_d.dtype}, max|dev-cpu| {diff:.2e}, "
                      f"{len(met_c)} metrics {'equal' if same_metrics else 'DIFFER'}", max_abs_diff=diff)
    groups, length = (8, 64) if small else (256, 8192)
    big = _batch(groups=groups, n=8, length=length, padding=0)
    for name in names:
        times = {}
        for dev in (device, "cpu") if device != "cpu" else ("cpu",):
            data = _as(big, dev, torch.float32, torch.int64)
            _advantage(data, name)  # warm-up
            _sync(dev)
            t = time.perf_counter()
            _advantage(data, name)
            _sync(dev)
            times[dev] = time.perf_counter() - t
        check("1", f"time.{name}", True, ", ".join(f"{d} {s * 1e3:.0f} ms" for d, s in times.items()),
              rows=groups * 8 - groups // 3, length=length, **{f"seconds_{d}": s for d, s in times.items()})


# ----------------------------------------------------------------------------------------------------- part 2
def part2(device: str, small: bool) -> None:
    from verl_focal.lab.demo.arms import arms_by_name
    from verl_focal.lab.demo.experiment import preset, run_experiment

    cfg = preset("quick")
    cfg.device, cfg.arms, cfg.jobs = device, arms_by_name(["family"]), 1
    if small:
        cfg.rl_steps = 2
    t = time.perf_counter()
    try:
        results = run_experiment(cfg, log=lambda line: None)
    except Exception as e:
        check("2", "demo.quick", False, f"{type(e).__name__}: {e}"[:300])
        return
    seconds = time.perf_counter() - t
    done, skipped = results["seeds_completed"], results["skipped_arms"]
    check("2", "demo.quick", done == list(cfg.seeds) and not skipped and not results["interrupted"],
          f"seeds {done} of {list(cfg.seeds)}, {len(cfg.arms)} arms ({len(skipped)} skipped), models on {device}, "
          f"{cfg.rl_steps} RL steps, {seconds:.0f} s", seconds=seconds)


# ----------------------------------------------------------------------------------------------------- part 3
def _tokenizer():
    """A byte-level BPE (the family verl's models use) trained on arithmetic text, with pad and eos ids."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    text = [f"Let x = {a}. Then x + {b} = {a + b}, so the answer is \\boxed{{{a + b}}}." for a in range(60)
            for b in range(0, 60, 7)]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(text, trainers.BpeTrainer(vocab_size=400, special_tokens=["<pad>", "<eos>"],
                                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                                      show_progress=False))
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>")


def part3(device: str, small: bool) -> None:
    import numpy as np
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from verl_focal.estimators.old_log_probs import OLD_LOG_PROB_SUM, sequence_log_prob_columns
    from verl_focal.step.decode import BatchDecoder

    tok = _tokenizer()
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok) + 64, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512)
    model = LlamaForCausalLM(cfg).to(device=device, dtype=torch.bfloat16 if device == "cuda" else torch.float32)
    rows, new = (64, 32) if small else (2048, 256)
    prompt = torch.full((rows, 4), 5, dtype=torch.long, device=device)
    with torch.no_grad():
        out = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=new, do_sample=True,
                             top_k=0, pad_token_id=tok.pad_token_id, eos_token_id=None)
    resp = out[:, prompt.shape[1]:]
    oov = int((resp >= len(tok)).sum())
    dec = BatchDecoder(tok)
    ours = dec(list(resp.cpu().numpy()))
    ref = tok.batch_decode(resp.cpu().tolist(), skip_special_tokens=True)
    check("3", "decoder.oov", dec.fast and ours == ref and oov > 0,
          f"{oov} ids beyond the tokenizer's {len(tok)}; fast path {'on' if dec.fast else 'OFF'}, "
          f"{'equal' if ours == ref else 'DIFFERENT'} texts", out_of_vocab=oov)
    mask = torch.ones_like(resp, dtype=torch.int64)
    with torch.no_grad():
        logits = model(out).logits[:, prompt.shape[1] - 1:-1].float()
    lp32 = torch.log_softmax(logits, -1).gather(-1, resp[..., None])[..., 0]
    lp16 = torch.log_softmax(logits.to(torch.bfloat16), -1).gather(-1, resp[..., None])[..., 0]
    t = time.perf_counter()
    c32 = sequence_log_prob_columns(lp32, mask)[OLD_LOG_PROB_SUM]
    seconds = time.perf_counter() - t
    c16 = sequence_log_prob_columns(lp16, mask)[OLD_LOG_PROB_SUM]
    groups = c32.reshape(-1, 8)
    agree = float(np.mean(np.argsort(np.argsort(groups, 1), 1) == np.argsort(np.argsort(c16.reshape(-1, 8), 1), 1)))
    check("3", "log-prob columns", np.isfinite(c32).all() and c32.shape == (rows,),
          f"reduced {rows} x {new} {lp32.device} log-probs in {seconds * 1e3:.1f} ms; unlikely_grpo's "
          f"within-group ranks bf16 vs fp32 agree on {agree:.3f} of rows (recorded)", rank_agreement=agree,
          seconds=seconds)


# ----------------------------------------------------------------------------------------------------- part 4
def part4(small: bool) -> None:
    import numpy as np
    import torch

    from verl_focal.step.decode import BatchDecoder

    torch.set_num_threads(1)
    tok = _tokenizer()
    rows, length = (64, 512) if small else (2048, 8192)
    ids = np.random.default_rng(0).integers(2, len(tok), size=(rows, length))
    t = time.perf_counter()
    ref = tok.batch_decode(ids.tolist(), skip_special_tokens=True)
    slow = time.perf_counter() - t
    dec = BatchDecoder(tok, check_rows=0, first_check=0)
    t = time.perf_counter()
    ours = dec(list(ids))
    fast = time.perf_counter() - t
    check("4", "decode.cpu", ours == ref, f"{rows} x {length}: batch_decode {slow:.2f} s, BatchDecoder {fast:.2f} s",
          seconds_batch_decode=slow, seconds_batch_decoder=fast)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--device", choices=("cpu", "cuda"), required=True)
    ap.add_argument("--parts", default="0,1,2,3,4", help="comma-separated part numbers (default: all)")
    ap.add_argument("--small", action="store_true", help="the suite's sizes (full sizes take minutes on a CPU)")
    ap.add_argument("--out", help="write the checks and numbers as JSON here")
    args = ap.parse_args(argv)
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    unknown = parts - set("01234")
    if unknown:
        ap.error(f"--parts: no part {sorted(unknown)}; the parts are 0, 1, 2, 3, 4")
    runs = {"0": lambda: part0(args.device), "1": lambda: part1(args.device, args.small),
            "2": lambda: part2(args.device, args.small), "3": lambda: part3(args.device, args.small),
            "4": lambda: part4(args.small)}
    for p in sorted(parts):
        t = time.perf_counter()
        try:
            runs[p]()
        except Exception as e:  # one part's crash is that part's failure; the others still run
            check(p, "crashed", False, f"{type(e).__name__}: {e}"[:300])
        print(f"part {p}: {time.perf_counter() - t:.1f} s", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": args.device, "small": args.small, "pid": os.getpid(), "checks": RESULTS}, f, indent=1)
    failed = [r for r in RESULTS if not r["ok"]]
    print(f"{len(RESULTS) - len(failed)} of {len(RESULTS)} checks passed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
