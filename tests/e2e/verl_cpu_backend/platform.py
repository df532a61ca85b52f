"""A CPU "accelerator" platform for verl 0.9.1 (test-only).

verl resolves its device through ``verl.plugin.platform.get_platform()``; with no GPU it
falls back to the "nvidia" platform and then calls ``torch.cuda.*``.  This class answers
"cpu" instead, so FSDP2 builds its device mesh on CPU and torch.distributed uses gloo.

verl internals touched (verl 0.9.1):
- ``verl.plugin.platform.platform_manager.PlatformRegistry.register`` (public plugin hook);
  selected with the environment variable ``VERL_PLATFORM=cpu`` which
  ``platform_manager._detect_platform_name`` reads in every process.
- ``PlatformBase`` abstract methods (``verl/plugin/platform/platform_base.py``).
- The device module: verl calls ``get_torch_device().<fn>`` for the names listed in
  ``_CpuDeviceModule`` (empty_cache, synchronize, mem_get_info, rng state, ...).
  ``torch.cpu`` lacks most of them, so they are provided here as CPU equivalents or
  no-ops (there is no device cache to empty on CPU).
- Ray resource: workers ask for ``ray_resource_name()`` ("GPU") per bundle; the test
  starts Ray with ``num_gpus`` logical GPUs (no real device behind them).

The one runtime patch (not a source edit): ``verl/utils/distributed.py``,
``initialize_global_process_group_ray`` (line 89 in 0.9.1) builds the backend string
``f"cpu:gloo,{get_device_name()}:{get_nccl_backend()}"``.  With device "cpu" that is
``"cpu:gloo,cpu:gloo"`` and torch (``BackendConfig``) raises "Duplicate device type cpu".
No platform answer avoids it, so ``install_gloo_init_patch`` wraps the function to pass
``backend="cpu:gloo"`` (the same group verl asks for, minus the duplicate).  It must run
before ``verl.workers.engine_workers`` is imported, because that module binds the name
at import; loading this package through ``VERL_USE_EXTERNAL_MODULES`` guarantees it.
"""

from __future__ import annotations

import os
import sys
import types
from contextlib import contextmanager
from typing import Any

import torch
from verl.plugin.platform.platform_base import PlatformBase
from verl.plugin.platform.platform_manager import PlatformRegistry


def _noop(*args, **kwargs):
    return None


def _mem_get_info(device=None) -> tuple[int, int]:
    """(free, total) bytes of host memory, the CPU analogue of cudaMemGetInfo."""
    pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return int(free), int(pages)


class _CpuDeviceModule(types.ModuleType):
    """``torch.cpu`` plus the ``torch.cuda``-style functions verl calls on its device module."""

    def __init__(self):
        super().__init__("verl_cpu_backend.device")
        self.empty_cache = _noop
        self.ipc_collect = _noop
        self.set_per_process_memory_fraction = _noop
        self.mem_get_info = _mem_get_info
        self.get_rng_state = lambda device=None: torch.get_rng_state()
        self.set_rng_state = lambda state, device=None: torch.set_rng_state(state)
        self.manual_seed = torch.manual_seed
        self.manual_seed_all = torch.manual_seed
        self.memory_allocated = lambda device=None: 0
        self.memory_reserved = lambda device=None: 0
        self.max_memory_allocated = lambda device=None: 0
        self.max_memory_reserved = lambda device=None: 0
        self.reset_peak_memory_stats = _noop
        self.get_device_name = lambda device=None: "cpu"
        self.is_available = lambda: True

    def __getattr__(self, name: str) -> Any:
        # Everything else (synchronize, current_stream, Stream, Event, device_count,
        # set_device, current_device, ...) comes from torch.cpu; a missing name raises.
        return getattr(torch.cpu, name)


_DEVICE_MODULE = _CpuDeviceModule()


@PlatformRegistry.register(platform="cpu")
class PlatformCPU(PlatformBase):
    """verl platform whose device is the host CPU (gloo collectives, no IPC)."""

    @property
    def device_name(self) -> str:
        return "cpu"

    @property
    def vendor_name(self) -> str:
        return "cpu"

    @property
    def device_module(self) -> types.ModuleType:
        return _DEVICE_MODULE

    def is_available(self) -> bool:
        return True

    def is_platform_available(self, use_smi_check=False) -> bool:
        # Never auto-detected: only chosen explicitly with VERL_PLATFORM=cpu.
        return False

    def current_device(self) -> str:
        # verl uses get_device_id() as a device argument (``x.to(get_device_id())``,
        # ``torch.device(get_device_id())``, ``to_empty(device=...)``); an int would mean
        # cuda:<n>, so answer "cpu", like torch.cpu.current_device() does.
        return "cpu"

    def device_count(self) -> int:
        return 1

    def set_device(self, device_index: int) -> None:
        return None

    def synchronize(self, device_index: int | None = None) -> None:
        return None

    def manual_seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        torch.manual_seed(seed)

    def set_allocator_settings(self, settings: str) -> None:
        return None

    def empty_cache(self) -> None:
        return None

    def get_device_capability(self, device_index: int = 0):
        return None, None

    def communication_backend_name(self) -> str:
        return "gloo"

    def visible_devices_envvar(self) -> str:
        # Ray sets CUDA_VISIBLE_DEVICES for actors holding logical GPUs; reading it is harmless.
        return "CUDA_VISIBLE_DEVICES"

    @contextmanager
    def nvtx_range(self, msg: str):
        yield

    def profiler_start(self) -> None:
        return None

    def profiler_stop(self) -> None:
        return None

    def ray_resource_name(self) -> str:
        return "GPU"

    def ray_noset_envvars(self) -> list[str]:
        return []

    def is_ipc_supported(self) -> bool:
        return False

    def cudart(self) -> Any:
        return None


def install_gloo_init_patch() -> None:
    """Make verl's process-group init ask torch for ``"cpu:gloo"`` once (see module doc)."""
    import verl.utils.distributed as dist_utils

    original = dist_utils.initialize_global_process_group_ray
    if getattr(original, "_verl_cpu_backend", False):
        return

    def initialize_global_process_group_ray(timeout_second=None, backend=None):
        return original(timeout_second=timeout_second, backend=backend or "cpu:gloo")

    initialize_global_process_group_ray._verl_cpu_backend = True
    dist_utils.initialize_global_process_group_ray = initialize_global_process_group_ray
    for name in ("verl.workers.engine_workers", "verl.checkpoint_engine.base"):
        module = sys.modules.get(name)
        if module is not None:  # imported before us: rebind there too
            module.initialize_global_process_group_ray = initialize_global_process_group_ray


install_gloo_init_patch()
