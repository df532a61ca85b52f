"""The rollout engine's own config check, run before any engine starts: vLLM's config classes decide.

verl hands its vLLM server the rollout section (``vllm_rollout/vllm_async_server.py``: ``tensor_parallel_size``,
``gpu_memory_utilization``, ``max_model_len``, ``dtype``, ``engine_kwargs.vllm``...) only after Ray, the actor and
the models are up, and vLLM refuses what it cannot run there.  :func:`check_engine` asks vLLM itself, without a GPU:
its ``EngineArgs`` build the model config from the model folder's ``config.json`` (``rollout.max_model_len`` against
the model's context), ``CacheConfig`` takes the memory fraction, and the model config is verified against
``ParallelConfig`` (attention heads divisible by the tensor parallelism).  Nothing here restates vLLM's rules.  A
context shorter than ``data.max_prompt_length + data.max_response_length`` is a warning: verl caps each response at
the context left after its prompt (``vllm_async_server.py``), so long prompts get shorter responses.

Where the engine is not installed (the submitting machine, CI) or the model is not a local folder, one line says so:
the same check runs again in our TaskRunner, on the node, before any model loads.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from verl_focal.config.errors import ConfigError
from verl_focal.config.key_names import config_get

__all__ = ["check_engine", "vllm_args"]

_R = "actor_rollout_ref.rollout"


def vllm_args(config: Any) -> dict[str, Any]:
    """The engine arguments verl passes vLLM that its config classes validate (vllm_async_server.py), from
    ``config`` (``max_model_len`` None: verl takes the model's own)."""
    from omegaconf import OmegaConf

    extra = config_get(config, f"{_R}.engine_kwargs.vllm", None) or {}
    if not isinstance(extra, dict):
        extra = OmegaConf.to_container(extra, resolve=True)
    args = {
        "model": os.path.expanduser(str(config_get(config, "actor_rollout_ref.model.path"))),
        "max_model_len": config_get(config, f"{_R}.max_model_len", None),
        "tensor_parallel_size": int(config_get(config, f"{_R}.tensor_model_parallel_size", 1) or 1),
        "gpu_memory_utilization": float(config_get(config, f"{_R}.gpu_memory_utilization", 0.9)),
        "dtype": str(config_get(config, f"{_R}.dtype", "auto") or "auto"),
        "trust_remote_code": bool(config_get(config, "actor_rollout_ref.model.trust_remote_code", False)),
        "skip_tokenizer_init": True,  # the config's check needs no tokenizer
    }
    args.update({k: v for k, v in extra.items() if v is not None})
    return args


def _one_line(e: BaseException) -> str:
    errors = getattr(e, "errors", None)
    if callable(errors):  # pydantic: the field and its message
        try:
            first = errors()[0]
            where = ".".join(str(x) for x in first.get("loc", ()))
            return (f"{where}: " if where else "") + str(first.get("msg", "")).removeprefix("Value error, ")
        except (IndexError, TypeError, KeyError):
            pass
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def check_engine(config: Any) -> list:
    """Refuse a rollout section that vLLM's own config classes refuse (module docstring), naming the keys verl passes
    it; an ``("info", line)`` instead where the check cannot run here (engine not installed, model not a local
    folder); a warning where the context caps responses."""
    name = str(config_get(config, f"{_R}.name", "") or "")
    if name != "vllm":
        return [("info", f"{_R}.name={name}: no engine config check for it (vLLM's only)")] if name in (
            "sglang", "trtllm") else []
    args = vllm_args(config)
    where = f"on {os.uname().nodename}"
    if importlib.util.find_spec("vllm") is None:
        return [("info", f"vLLM is not installed {where}: its own check of the rollout section (parallelism, memory "
                 "fraction, context length) runs in our TaskRunner, on the node, before any model loads")]
    if not os.path.isfile(os.path.join(args["model"], "config.json")):
        return [("info", f"actor_rollout_ref.model.path={args['model']} is not a local model folder {where}: "
                 "vLLM's check of the rollout section runs in our TaskRunner, where the model is read")]
    from vllm.config import CacheConfig, ParallelConfig
    from vllm.engine.arg_utils import EngineArgs

    shown = (f"{_R}.tensor_model_parallel_size={args['tensor_parallel_size']}, "
             f"{_R}.gpu_memory_utilization={args['gpu_memory_utilization']}, "
             f"{_R}.max_model_len={args['max_model_len']}")
    try:
        engine = EngineArgs(**args)
        CacheConfig(gpu_memory_utilization=args["gpu_memory_utilization"])
        model = engine.create_model_config()
        model.verify_with_parallel_config(ParallelConfig(tensor_parallel_size=args["tensor_parallel_size"]))
    except (ValueError, TypeError) as e:  # pydantic's ValidationError is a ValueError
        raise ConfigError(f"vLLM refuses the rollout section that verl would pass it: {_one_line(e)}; verl passes "
                          f"{shown}: set these within what vLLM accepts for this model") from None
    prompt = int(config_get(config, "data.max_prompt_length", 0) or 0)
    response = int(config_get(config, "data.max_response_length", 0) or 0)
    if prompt + response > model.max_model_len:
        return [f"data.max_prompt_length={prompt} + data.max_response_length={response} = {prompt + response} "
                f"tokens exceed the rollout's context of {model.max_model_len} (the model's, or {_R}.max_model_len): "
                "verl caps each response at the context its prompt leaves, so a prompt over "
                f"{model.max_model_len - response} tokens gets a shorter response"]
    return []
