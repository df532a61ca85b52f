"""The old import paths of the modules that moved into the lab wing, kept for one release.

``import verl_focal.demo.rl`` gives the very module object ``verl_focal.lab.demo.rl`` (one copy: one set of globals,
one identity for every class), and warns once per old name with a DeprecationWarning that names the new path.  A
finder at the front of ``sys.meta_path`` answers only the names in :data:`MOVED`; nothing here imports the lab until
an old name is imported.  Remove this module (and its ``install()`` in ``verl_focal/__init__.py``) in the release
after the move.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings

#: old name (and everything below it) -> new name; the longest matching old name wins
MOVED = {
    "verl_focal.demo": "verl_focal.lab.demo",
    "verl_focal.theory": "verl_focal.lab.theory",
    "verl_focal.stats": "verl_focal.lab.stats",
    "verl_focal.eval": "verl_focal.lab.eval",
    "verl_focal.eval.val_metrics": "verl_focal.validation",
    "verl_focal.partition.agreement": "verl_focal.lab.agreement",
}


def new_name(old: str) -> str | None:
    """The module's name now, or None when ``old`` did not move.

    >>> new_name("verl_focal.demo.rl"), new_name("verl_focal.eval.val_metrics"), new_name("verl_focal.demos")
    ('verl_focal.lab.demo.rl', 'verl_focal.validation', None)
    """
    best = max((o for o in MOVED if old == o or old.startswith(o + ".")), key=len, default=None)
    return None if best is None else MOVED[best] + old[len(best):]


class _Alias:
    """Loader of one old name: the module is the one at the new name, its ``__spec__`` left as it was."""

    def __init__(self, old: str, new: str):
        self.old, self.new = old, new

    def create_module(self, spec):
        # stacklevel 2: the importing line (warnings skips the import machinery's frames)
        warnings.warn(f"{self.old} has moved to {self.new}; import it from there (the old path goes in the next "
                      f"release)", DeprecationWarning, stacklevel=2)
        module = importlib.import_module(self.new)
        self._spec = module.__spec__
        return module

    def exec_module(self, module) -> None:
        module.__spec__ = self._spec  # the import system set the old name's spec on it; the module keeps its own


class _Finder:
    """Finds the old names only (and returns None at once for every other import)."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("verl_focal."):
            return None
        new = new_name(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(fullname, new))


_FINDER = _Finder()


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _FINDER)
