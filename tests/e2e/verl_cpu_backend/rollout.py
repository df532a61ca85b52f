"""A transformers-``generate`` rollout backend for verl 0.9.1 without an inference engine (test-only).

verl 0.9.1 only generates through inference servers (vLLM, SGLang, TRT-LLM).  This module
adds a fourth backend, ``actor_rollout_ref.rollout.name=hf_cpu``, with the same three
parts the built-in ones have.  It was written for the CPU runs (hence its name) and runs on verl's device:
the CPU under ``VERL_PLATFORM=cpu``, CUDA on a GPU machine (``gpu/trainer.py``), where it stands in for vLLM.

- ``HFCpuServer``: a Ray actor that plays the inference server.  It holds its own copy of
  the model on verl's device (``verl.utils.device.get_device_name``) and serves
  ``generate(prompt_ids, sampling_params, request_id)`` -> ``TokenOutput`` (the token-in/token-out call
  ``LLMServerClient.generate`` makes), one request at a time with ``transformers``' ``generate``.
- ``HFCpuReplica(RolloutReplica)``: launches one server per replica
  (``launch_servers``); verl's ``LLMServerManager`` creates it through
  ``RolloutReplicaRegistry``.
- ``HFCpuServerAdapter(BaseRollout)``: lives inside the hybrid actor worker
  (``ActorRolloutRefWorker.init_model`` builds it through ``_ROLLOUT_REGISTRY``).  In the
  synchronous trainer the weights go actor -> adapter in-process ("naive" checkpoint
  backend: ``ActorRolloutRefWorker.update_weights`` calls ``rollout.update_weights`` with
  the engine's ``get_per_tensor_param()`` generator); the adapter copies them to CPU and
  hands them to its server actor, which loads them with ``load_state_dict(strict=True)``.

On a GPU the server actor asks Ray for no GPU (``num_cpus=0``, as on CPU: the one GPU is the actor pool's bundle)
and finds the device because Ray 2.60 leaves ``CUDA_VISIBLE_DEVICES`` alone for an actor with no GPU
(``RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO`` unset or 0; ``gpu/trainer.py`` sets it to 0).  Where a GPU was asked
for (``VERL_CPU_BACKEND_ROLLOUT_DEVICE=cuda``) and the server cannot see one, it refuses to start, naming that
variable, instead of generating on the CPU.

verl internals touched (verl 0.9.1), all extension points that take a name:
- ``verl.workers.rollout.replica.RolloutReplicaRegistry.register(name, loader)``.
- ``verl.workers.rollout.base._ROLLOUT_REGISTRY[(name, "async")] = "module.Class"`` (a
  module-level dict; there is no register function for it).
- ``RolloutReplica`` attributes set by ``launch_servers``: ``servers``,
  ``_server_handle``, ``_server_address`` (used only as a routing key here).
- The server-actor methods verl calls on replicas: ``generate``, ``wake_up``, ``sleep``,
  ``clear_kv_cache``, ``release_kv_cache``, ``resume_kv_cache``,
  ``abort_all_requests``, ``resume_generation``, ``start_profile``, ``stop_profile``.
- ``BaseRollout`` methods called by the worker: ``resume(tags)``, ``release()``,
  ``update_weights(weights, **kw)``.
- ``verl.workers.rollout.replica.TokenOutput`` (the return type of ``generate``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Generator
from typing import Any

import ray
import torch
from verl.utils.config import omega_conf_to_dataclass
from verl.workers.config import HFModelConfig, RolloutConfig
from verl.workers.rollout.base import _ROLLOUT_REGISTRY, BaseRollout
from verl.workers.rollout.replica import RolloutReplica, RolloutReplicaRegistry, TokenOutput
from verl.workers.rollout.utils import ensure_async_iterator

logger = logging.getLogger(__name__)

ROLLOUT_NAME = "hf_cpu"
# When set, each server appends one JSON line per weight update to
# ``$VERL_CPU_BACKEND_STATS_DIR/server_<replica>.jsonl`` (L2 distance of the received
# weights from the initial ones): the tests use it to prove the actor's updates arrive.
STATS_DIR_ENV = "VERL_CPU_BACKEND_STATS_DIR"
#: When set (``cpu`` or ``cuda``), the device the server must generate on; unset: verl's device, whatever it is.
DEVICE_ENV = "VERL_CPU_BACKEND_ROLLOUT_DEVICE"


def server_device() -> torch.device:
    """The server's device: verl's (``get_device_name()``: "cuda" on a GPU machine, "cpu" under the CPU platform).
    Raises where torch cannot use it in this process, or where :data:`DEVICE_ENV` asks for another."""
    from verl.utils.device import get_device_name

    name = get_device_name()
    wanted = os.environ.get(DEVICE_ENV) or name
    usable = name != "cuda" or torch.cuda.is_available()
    if wanted != name or not usable:
        raise RuntimeError(
            f"hf_cpu rollout: the server must generate on {wanted!r}; verl's device here is {name!r}"
            f"{'' if usable else ', but torch sees no GPU'} (CUDA_VISIBLE_DEVICES="
            f"{os.environ.get('CUDA_VISIBLE_DEVICES')!r}: set RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO=0, so that Ray "
            f"leaves it alone for an actor without a GPU)")
    return torch.device(name)


def server_actor_name(replica_rank: int, kind: str = "", name_suffix: str = "") -> str:
    """Ray actor name of a replica's server; the adapter looks its server up by this name."""
    middle = f"{kind}_" if kind else ""
    return f"hf_cpu_server_{middle}{replica_rank}{name_suffix}"


class HFCpuServer:
    """Inference "server" for one replica: a transformers causal LM generating on CPU.

    Args:
        config: the rollout config (``RolloutConfig`` or its DictConfig).
        model_config: the model config (``HFModelConfig`` or its DictConfig); the model is
            loaded from ``model_config.local_path``.
        replica_rank: rank of the replica, mixed into the sampling seed.
    """

    def __init__(self, config: RolloutConfig, model_config: HFModelConfig, replica_rank: int):
        from transformers import AutoModelForCausalLM

        self.config: RolloutConfig = omega_conf_to_dataclass(config)
        self.model_config: HFModelConfig = omega_conf_to_dataclass(model_config, dataclass_type=HFModelConfig)
        self.replica_rank = replica_rank
        torch.set_num_threads(1)
        self.device = server_device()
        self.model = AutoModelForCausalLM.from_pretrained(
            self.model_config.local_path, dtype=torch.float32, attn_implementation="sdpa"
        ).to(self.device)
        self.model.eval()
        self.global_steps: int | None = None
        self.weight_updates = 0
        self.requests = 0
        self._seed = int(self.config.seed if self.config.seed is not None else 0) * 1000 + replica_rank
        self._lock = asyncio.Lock()
        # Snapshot of the initial weights, to report how far the synced weights moved.
        self._initial = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        stats_dir = os.environ.get(STATS_DIR_ENV)
        self._stats_path = os.path.join(stats_dir, f"server_{replica_rank}.jsonl") if stats_dir else None

    # -- weights -------------------------------------------------------------------
    async def update_weights(self, state_dict: dict[str, torch.Tensor], global_steps: int | None = None) -> int:
        """Load a full state dict sent by the actor; every model key must be present."""
        async with self._lock:
            own = self.model.state_dict()
            missing = sorted(set(own) - set(state_dict))
            unexpected = sorted(set(state_dict) - set(own))
            if missing or unexpected:
                raise RuntimeError(
                    f"hf_cpu rollout: weight names from the actor do not match the model "
                    f"(missing {missing[:5]}, unexpected {unexpected[:5]})"
                )
            self.model.load_state_dict(state_dict, strict=True)
            self.global_steps = global_steps
            self.weight_updates += 1
            if self._stats_path:
                delta = sum(
                    float((v.detach().float() - self._initial[k].float()).pow(2).sum())
                    for k, v in self.model.state_dict().items()
                )
                record = {
                    "update": self.weight_updates,
                    "device": str(next(self.model.parameters()).device),
                    "global_steps": global_steps,
                    "requests_before": self.requests,
                    "l2_from_initial": delta**0.5,
                }
                with open(self._stats_path, "a") as f:
                    f.write(json.dumps(record) + "\n")
            return self.weight_updates

    async def get_stats(self) -> dict[str, Any]:
        """Counters for tests: weight updates received, requests served, current version."""
        return {"weight_updates": self.weight_updates, "requests": self.requests, "global_steps": self.global_steps}

    # -- generation ----------------------------------------------------------------
    def _generate_sync(self, prompt_ids: list[int], sampling_params: dict[str, Any], seed: int) -> TokenOutput:
        torch.manual_seed(seed)
        temperature = float(sampling_params.get("temperature", 1.0))
        top_p = float(sampling_params.get("top_p", 1.0))
        top_k = int(sampling_params.get("top_k", -1))
        max_new = int(sampling_params.get("max_tokens") or sampling_params.get("max_new_tokens") or 0)
        max_new = min(max_new, self.config.response_length) if max_new > 0 else self.config.response_length
        do_sample = temperature > 0
        gen_kwargs = dict(
            max_new_tokens=max_new,
            do_sample=do_sample,
            output_logits=True,
            return_dict_in_generate=True,
            pad_token_id=self.model.config.pad_token_id,
            eos_token_id=self.model.config.eos_token_id,
        )
        if do_sample:
            gen_kwargs.update(temperature=temperature, top_p=top_p, top_k=top_k if top_k > 0 else 0)
        input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=self.device)
        with torch.no_grad():
            out = self.model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids), **gen_kwargs)
        token_ids = out.sequences[0, len(prompt_ids) :].tolist()
        log_probs = None
        if sampling_params.get("logprobs"):
            # log-probability of each sampled token under the raw (untempered) model logits
            logits = torch.stack(out.logits, dim=1)[0].float()  # (n_new, vocab)
            lp = torch.log_softmax(logits, dim=-1)
            rows = torch.arange(len(token_ids), device=lp.device)
            log_probs = lp[rows, torch.tensor(token_ids, device=lp.device)].tolist()
        eos = self.model.config.eos_token_id
        finished = bool(token_ids) and token_ids[-1] == eos
        return TokenOutput(
            token_ids=token_ids,
            log_probs=log_probs,
            stop_reason="completed",
            num_preempted=0,
            extra_fields={"global_steps": self.global_steps, "finish_reason": "stop" if finished else "length"},
        )

    async def generate(
        self,
        prompt_ids: list[int],
        sampling_params: dict[str, Any],
        request_id: str,
        image_data: list[Any] | None = None,
        video_data: list[Any] | None = None,
        **kwargs: Any,
    ) -> TokenOutput:
        """Token-in/token-out generation (the call ``LLMServerClient.generate`` makes)."""
        if image_data or video_data or kwargs.get("audio_data"):
            raise NotImplementedError("hf_cpu rollout serves text only")
        async with self._lock:
            self.requests += 1
            seed = self._seed * 1_000_003 + self.requests
            prompt_ids = [int(t) for t in prompt_ids]
            return await asyncio.to_thread(self._generate_sync, prompt_ids, dict(sampling_params), seed)

    # -- lifecycle calls verl makes on every backend; nothing to free on CPU ---------
    async def wake_up(self):
        return None

    async def sleep(self):
        return None

    async def clear_kv_cache(self):
        return None

    async def release_kv_cache(self):
        return None

    async def resume_kv_cache(self):
        return None

    async def abort_all_requests(self, reject_request: bool = False):
        return None

    async def resume_generation(self):
        return None

    async def set_global_steps(self, global_steps: int):
        self.global_steps = global_steps

    async def start_profile(self, **kwargs):
        return None

    async def stop_profile(self):
        return None


class HFCpuReplica(RolloutReplica):
    """One ``HFCpuServer`` actor per replica, in every rollout mode (hybrid, colocated, standalone)."""

    async def launch_servers(self):
        kind = "reward" if self.is_reward_model else ("teacher" if self.is_teacher_model else "")
        name = server_actor_name(self.replica_rank, kind, self.name_suffix)
        server = (
            ray.remote(HFCpuServer)
            .options(name=name, num_cpus=0, max_concurrency=self.max_concurrency)
            .remote(config=self.config, model_config=self.model_config, replica_rank=self.replica_rank)
        )
        self.servers = [server]
        self._server_handle = server
        # verl keys its router by this string; there is no HTTP endpoint behind it.
        self._server_address = name


class HFCpuServerAdapter(BaseRollout):
    """Worker-side half of the ``hf_cpu`` rollout: forwards the actor's weights to the server.

    Built by ``ActorRolloutRefWorker.init_model`` (hybrid mode) with
    ``(config, model_config, device_mesh)``; the worker's ``RANK`` decides which replica
    it belongs to, exactly as verl's SGLang adapter does.
    """

    def __init__(self, config, model_config, device_mesh, replica_rank: int = -1, **kwargs):
        super().__init__(config, model_config, device_mesh)
        rank = int(os.environ.get("RANK", "0"))
        world = (
            self.config.tensor_model_parallel_size
            * self.config.data_parallel_size
            * self.config.pipeline_model_parallel_size
        )
        self.replica_rank = rank // world if replica_rank == -1 else replica_rank
        self.rollout_rank = rank % world
        self.is_leader_rank = self.rollout_rank == 0
        self._server = None

    def _server_handle(self):
        if self._server is None:
            self._server = ray.get_actor(server_actor_name(self.replica_rank))
        return self._server

    async def resume(self, tags: list[str]):
        return None

    async def release(self):
        return None

    async def update_weights(
        self,
        weights: Generator[tuple[str, torch.Tensor], None, None],
        wire_format: str = "named_tensors",
        global_steps: int | None = None,
        **kwargs,
    ):
        """Collect the full weights as CPU tensors and load them into this replica's server."""
        if wire_format != "named_tensors":
            raise NotImplementedError(f"hf_cpu rollout only accepts wire_format='named_tensors', got {wire_format!r}")
        if kwargs.get("peft_config") is not None:
            raise NotImplementedError("hf_cpu rollout does not serve LoRA adapters")
        state_dict = {}
        async for name, tensor in ensure_async_iterator(weights):
            if hasattr(tensor, "full_tensor"):  # a DTensor shard: gather it
                tensor = tensor.full_tensor()
            state_dict[name] = tensor.detach().to("cpu", copy=True).contiguous()
        if not self.is_leader_rank:
            return
        await self._server_handle().update_weights.remote(state_dict, global_steps)


def _load_replica() -> type[RolloutReplica]:
    return HFCpuReplica


RolloutReplicaRegistry.register(ROLLOUT_NAME, _load_replica)
_ROLLOUT_REGISTRY[(ROLLOUT_NAME, "async")] = f"{__name__}.HFCpuServerAdapter"
