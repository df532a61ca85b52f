"""Run a callback right after a given module finishes importing.

The ``verl.plugins`` entry point must stay light (it runs on every
``import verl``), but the trainer modes ``focal_sync`` & co. can only be
registered once verl's heavy v1 trainer package is imported.  This finder
defers that registration to the moment ``verl.trainer.ppo.v1`` is imported, in
whatever process that happens (e.g. verl's stock TaskRunner), so
``trainer.v1.trainer_mode=focal_sync`` works with ``python -m
verl.trainer.main_ppo`` too.

:func:`mark_hooked` / :func:`is_hooked` flag the verl functions we replaced with a wrapper, so
that every hook installs once per process and ``verl-focal check`` can report which are hooked.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Callable

__all__ = ["when_imported", "mark_hooked", "is_hooked"]

#: the attribute that marks a function as one of our wrappers
_HOOK_FLAG = "_verl_focal_hook"


def mark_hooked(fn: Callable) -> Callable:
    """Flag ``fn`` as a verl-focal wrapper (see :func:`is_hooked`); returns it."""
    setattr(fn, _HOOK_FLAG, True)
    return fn


def is_hooked(fn: object) -> bool:
    """Whether ``fn`` is a verl-focal wrapper (:func:`mark_hooked`)."""
    return bool(getattr(fn, _HOOK_FLAG, False))


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
            callback()

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
