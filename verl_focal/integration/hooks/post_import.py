"""Run a callback right after a given module finishes importing.

The ``verl.plugins`` entry point must stay light (it runs on every
``import verl``), but the hooks can only be installed once verl's trainer
modules are imported.  This finder defers each install to the moment its module
is imported, in whatever process that happens (e.g. verl's stock TaskRunner), so
``trainer.v1.trainer_mode=focal_sync`` works with ``python -m
verl.trainer.main_ppo`` too.  The callback runs inside verl's own import: it must
never raise there, so an exception is logged as one WARNING and dropped (the
callbacks the plugin passes are guarded already, :func:`~verl_focal.integration.compat.install`).

``mark_hooked`` / ``is_hooked`` (defined in :mod:`verl_focal.integration.compat`, re-exported here) flag the verl
functions we replaced with a wrapper, so that every hook installs once per process and ``verl-focal check`` can
report which are hooked.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import logging
import sys
from collections.abc import Callable

from verl_focal.integration.compat import is_hooked, mark_hooked  # the flag lives with the contract

__all__ = ["when_imported", "mark_hooked", "is_hooked"]

logger = logging.getLogger(__name__)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, fullname: str, callback: Callable[[], None]) -> None:
        self.fullname = fullname
        self.callback = callback

    def find_spec(self, fullname, path=None, target=None):  # noqa: D401
        if fullname != self.fullname:
            return None
        sys.meta_path.remove(self)  # one-shot; also avoids recursion below
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        original = loader.exec_module
        callback = self.callback

        def exec_module(module):
            original(module)
            try:
                callback()
            except Exception as e:  # noqa: BLE001 - never into verl's import
                logger.warning("verl-focal: the hook on %s failed (%s: %s); verl runs without it", fullname,
                               type(e).__name__, e)

        loader.exec_module = exec_module  # this loader instance serves only this module
        return spec


def when_imported(fullname: str, callback: Callable[[], None]) -> None:
    """Call ``callback()`` once ``fullname`` is imported (now, if it already is)."""
    if fullname in sys.modules:
        callback()
        return
    if any(isinstance(f, _Finder) and f.fullname == fullname for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _Finder(fullname, callback))
