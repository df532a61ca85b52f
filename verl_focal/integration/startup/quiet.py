"""Quiet start-up for our own commands: hide verl's known "optional engine / accelerator not
available" notices, which every CPU or single-engine install prints on ``import verl``.

Called only by our entry points (``verl-focal ...``, ``python -m verl_focal.main_ppo``), never at
plugin import: in a user's own process verl's warnings stay as verl emits them.
"""

from __future__ import annotations

import logging
import warnings

__all__ = ["quiet_optional_engines", "ENGINE_WARNING", "PLATFORM_NOTICES"]

#: verl/workers/engine/__init__.py: "<name> engine is not available: ModuleNotFoundError(...)"
ENGINE_WARNING = r".* engine is not available"
#: verl/plugin/platform/platform_manager.py, on a machine without that accelerator
PLATFORM_NOTICES = ("No supported accelerator detected", "is registered but not available")
_PLATFORM_LOGGER = "verl.plugin.platform.platform_manager"


class _DropPlatformNotices(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        return not any(n in msg for n in PLATFORM_NOTICES)


_FILTER = _DropPlatformNotices()


def quiet_optional_engines() -> None:
    """Install the filters in this process (idempotent)."""
    warnings.filterwarnings("ignore", message=ENGINE_WARNING, category=UserWarning)
    log = logging.getLogger(_PLATFORM_LOGGER)
    if _FILTER not in log.filters:
        log.addFilter(_FILTER)
