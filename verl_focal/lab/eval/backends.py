"""Sampling backends for ``verl-focal eval generate``: vLLM, SGLang, transformers.

Each backend turns chat-templated prompt texts into ``count`` sampled responses per
prompt.  vLLM and SGLang are imported only when chosen (GPU machines); the
transformers backend runs anywhere (CPU, small models) and is the one the tests use.

Sampling follows the papers' evaluation settings by default (F-GRPO Sec. 4:
temperature 1.0, top-p 1.0, no top-k, response length as trained).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class SamplingConfig:
    """Sampling settings shared by every backend."""

    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 8192
    seed: int = 0

    def validate(self) -> None:
        from verl_focal.config.errors import InputError

        if not self.temperature > 0:
            raise InputError(f"--temperature must be > 0 (pass@k needs sampling), got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise InputError(f"--top-p must lie in (0, 1], got {self.top_p}")
        if self.max_tokens < 1:
            raise InputError(f"--max-tokens must be >= 1, got {self.max_tokens}")


def request_seed(base: int, row: int, first_sample: int) -> int:
    """Deterministic per-request seed from the run seed, the problem row and the first
    sample index (no Python ``hash``), kept inside 31 bits."""
    return (int(base) * 1_000_003 + int(row) * 65_537 + int(first_sample)) % (2**31 - 1)


class Backend(Protocol):
    def generate(self, prompts: Sequence[str], counts: Sequence[int], seeds: Sequence[int]) -> list[list[str]]:
        """``counts[i]`` responses for ``prompts[i]``, sampled with request seed ``seeds[i]``."""


class TransformersBackend:
    """``model.generate`` with sampling; one call per prompt and chunk of ``batch_size`` samples.

    Seeds ``torch.manual_seed(seed)`` before every call, so a request is reproducible.
    """

    def __init__(self, model_path: str, sampling: SamplingConfig, batch_size: int = 16,
                 device: str = "cpu", dtype: str = "auto", tokenizer=None):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.sampling = sampling
        self.batch_size = int(batch_size)
        self.device = device
        self.tokenizer = tokenizer if tokenizer is not None else AutoTokenizer.from_pretrained(model_path)
        torch_dtype = "auto" if dtype == "auto" else getattr(torch, dtype)
        self.model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch_dtype).to(device).eval()
        pad = self.tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else self.tokenizer.eos_token_id

    def generate(self, prompts, counts, seeds):
        torch = self.torch
        out: list[list[str]] = []
        for text, count, seed in zip(prompts, counts, seeds):
            ids = self.tokenizer(text, return_tensors="pt", add_special_tokens=False)["input_ids"].to(self.device)
            texts: list[str] = []
            done = 0
            while done < count:
                b = min(self.batch_size, count - done)
                torch.manual_seed(int(seed) + done)
                with torch.no_grad():
                    gen = self.model.generate(
                        input_ids=ids,
                        attention_mask=torch.ones_like(ids),
                        do_sample=True,
                        temperature=self.sampling.temperature,
                        top_p=self.sampling.top_p,
                        top_k=0,
                        max_new_tokens=self.sampling.max_tokens,
                        num_return_sequences=b,
                        pad_token_id=self.pad_id,
                    )
                texts += self.tokenizer.batch_decode(gen[:, ids.shape[1]:], skip_special_tokens=True)
                done += b
            out.append(texts)
        return out


class VLLMBackend:  # pragma: no cover - needs a GPU and vllm
    """vLLM offline inference: ``LLM.generate`` with one ``SamplingParams(n=count, seed=...)`` per prompt."""

    def __init__(self, model_path: str, sampling: SamplingConfig, tensor_parallel_size: int = 1,
                 gpu_memory_utilization: float = 0.9, max_model_len: int | None = None, dtype: str = "auto"):
        try:
            from vllm import LLM, SamplingParams
        except ImportError as e:
            raise ImportError("--backend vllm needs vllm: pip install 'verl-focal[vllm]' (GPU machine)") from e
        self.SamplingParams = SamplingParams
        self.sampling = sampling
        kw = dict(model=model_path, tensor_parallel_size=tensor_parallel_size, seed=sampling.seed,
                  gpu_memory_utilization=gpu_memory_utilization, dtype=dtype)
        if max_model_len:
            kw["max_model_len"] = max_model_len
        self.llm = LLM(**kw)

    def generate(self, prompts, counts, seeds):
        s = self.sampling
        params = [self.SamplingParams(n=int(c), temperature=s.temperature, top_p=s.top_p, top_k=-1,
                                      max_tokens=s.max_tokens, seed=int(seed)) for c, seed in zip(counts, seeds)]
        outs = self.llm.generate(list(prompts), params, use_tqdm=False)
        return [[o.text for o in out.outputs] for out in outs]


class SGLangBackend:  # pragma: no cover - needs a GPU and sglang
    """SGLang offline ``Engine.generate``; each prompt is repeated ``count`` times."""

    def __init__(self, model_path: str, sampling: SamplingConfig, tensor_parallel_size: int = 1,
                 gpu_memory_utilization: float = 0.9, max_model_len: int | None = None, dtype: str = "auto"):
        try:
            import sglang as sgl
        except ImportError as e:
            raise ImportError("--backend sglang needs sglang: pip install 'verl-focal[sglang]' (GPU machine)") from e
        kw = dict(model_path=model_path, tp_size=tensor_parallel_size, random_seed=sampling.seed,
                  mem_fraction_static=gpu_memory_utilization, dtype=dtype)
        if max_model_len:
            kw["context_length"] = max_model_len
        self.engine = sgl.Engine(**kw)
        self.sampling = sampling

    def generate(self, prompts, counts, seeds):
        s = self.sampling
        flat = [p for p, c in zip(prompts, counts) for _ in range(int(c))]
        params = {"temperature": s.temperature, "top_p": s.top_p, "top_k": -1, "max_new_tokens": s.max_tokens}
        outs = self.engine.generate(prompt=flat, sampling_params=params)
        texts = [o["text"] for o in outs]
        res, i = [], 0
        for c in counts:
            res.append(texts[i : i + int(c)])
            i += int(c)
        return res


BACKENDS = {"transformers": TransformersBackend, "vllm": VLLMBackend, "sglang": SGLangBackend}
