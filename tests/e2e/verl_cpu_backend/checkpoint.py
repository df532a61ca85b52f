"""A CPU checkpoint engine for verl 0.9.1's separated trainers (test-only).

The separated trainers (``verl.experimental.one_step_off_policy``, ``fully_async_policy``)
run the actor and the rollout in different resource pools and move the weights with a
checkpoint engine (``actor_rollout_ref.rollout.checkpoint_engine.backend``).  verl 0.9.1's
engines need a GPU transport (nccl, nixl, hccl, mooncake) or colocation ("naive").  This
module registers one more, ``cpu_store``: the actor's rank 0 puts the full state dict into a
named Ray actor (the mailbox), and each rollout worker takes it from there.  Ray's object
store is the transport, so it runs on any machine; it copies the whole model once per sync,
which is fine for the tiny test model and nothing else.

The contract it implements (``verl.checkpoint_engine.base.CheckpointEngine``):
- the actor worker builds it with ``is_master=(rank == 0)`` and calls
  ``send_weights(per_tensor_param_generator, global_steps)``;
- the rollout's ``CheckpointEngineWorker`` builds it without ``is_master`` and hands
  ``receive_weights(global_steps)`` (an async generator of ``(name, tensor)``) to the server
  adapter (here ``HFCpuServerAdapter.update_weights``);
- ``CheckpointEngineManager.update_weights`` calls ``prepare`` / ``build_topology`` /
  ``init_process_group`` on both sides, then sender and receivers at once, then ``finalize``.

Sender and receivers pair up by sync number: the n-th ``send_weights`` of the actor is the
n-th ``receive_weights`` of every rollout worker (both sides are created once, and verl
syncs every replica each time), so a receiver that starts first waits for its version.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Generator
from typing import Any

import ray
import torch
from verl.checkpoint_engine.base import CheckpointEngine, CheckpointEngineRegistry
from verl.workers.rollout.utils import ensure_async_iterator

BACKEND = "cpu_store"
MAILBOX_NAME = "verl_cpu_backend_weight_mailbox"
RECEIVE_TIMEOUT_S = 600.0
_KEEP_VERSIONS = 2


class WeightMailbox:
    """Ray actor holding the last few state dicts sent, keyed by sync number (1, 2, ...)."""

    def __init__(self) -> None:
        self._versions: dict[int, dict[str, torch.Tensor]] = {}

    def put(self, version: int, state_dict: dict[str, torch.Tensor]) -> None:
        self._versions[version] = state_dict
        for old in sorted(self._versions)[:-_KEEP_VERSIONS]:
            del self._versions[old]

    def get(self, version: int) -> dict[str, torch.Tensor] | None:
        return self._versions.get(version)


def _mailbox():
    # detached: a named actor owned by a worker dies as soon as its creator drops the handle; the run's
    # Ray cluster (started by the driver, stopped at exit) bounds its life instead
    return (
        ray.remote(WeightMailbox)
        .options(name=MAILBOX_NAME, get_if_exists=True, lifetime="detached", num_cpus=0, max_concurrency=16)
        .remote()
    )


@CheckpointEngineRegistry.register(BACKEND)
class CpuStoreCheckpointEngine(CheckpointEngine):
    """Weights through a named Ray actor; see the module docstring."""

    def __init__(self, bucket_size: int = 0, is_master: bool = False, **kwargs: Any) -> None:
        self.bucket_size = bucket_size
        self.is_master = is_master
        self._sent = 0
        self._received = 0

    def prepare(self) -> dict[str, Any]:
        return {}

    @classmethod
    def build_topology(
        cls, actor_wg_world_size: int, rollout_world_size: int, metadata: list[dict]
    ) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
        return {}, {}

    def init_process_group(self, **kwargs: Any) -> None:
        return None

    def finalize(self) -> None:
        return None

    async def send_weights(
        self, weights: Generator[tuple[str, torch.Tensor], None, None], global_steps: int | None = None
    ) -> dict:
        state_dict = {}
        # every rank walks the generator (a DTensor's full_tensor() is a collective)
        async for name, tensor in ensure_async_iterator(weights):
            if hasattr(tensor, "full_tensor"):
                tensor = tensor.full_tensor()
            state_dict[name] = tensor.detach().to("cpu", copy=True).contiguous()
        self._sent += 1
        if self.is_master:
            await _mailbox().put.remote(self._sent, state_dict)
        return {}

    async def receive_weights(self, global_steps: int | None = None) -> AsyncGenerator[tuple[str, torch.Tensor], None]:
        self._received += 1
        mailbox = _mailbox()
        deadline = time.monotonic() + RECEIVE_TIMEOUT_S
        while True:
            state_dict = await mailbox.get.remote(self._received)
            if state_dict is not None:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"{BACKEND}: weights #{self._received} never arrived from the actor")
            await asyncio.sleep(0.05)
        for name, tensor in state_dict.items():
            yield name, tensor
