"""The old import paths of the modules that moved (into the lab wing, ``step/``, ``integration/{hooks,startup}/``),
kept for one release.

``import verl_focal.demo.rl`` gives the very module object ``verl_focal.lab.demo.rl`` (one copy: one set of globals,
one identity for every class), and warns once per old name with a DeprecationWarning that names the new path.  A
module that was split (:data:`SPLIT`: ``estimators.rows``, ``integration.preflight``, ...) gives instead a small
stand-in whose names come from the modules that hold them now (first the one :data:`MOVED` names, then the others in
order; :data:`RENAMED` for a name that changed), so ``from verl_focal.integration.preflight import compose_config``
still works.  A finder at the front of ``sys.meta_path`` answers only the names in :data:`MOVED`; nothing here imports
a new module until an old name is imported.  Classes are defined (and pickled, by Ray) at their new paths.  Remove
this module (and its ``install()`` in ``verl_focal/__init__.py``) in the release after the move.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import types
import warnings

#: old name (and everything below it) -> new name; the longest matching old name wins
MOVED = {
    "verl_focal.demo": "verl_focal.lab.demo",
    "verl_focal.theory": "verl_focal.lab.theory",
    "verl_focal.stats": "verl_focal.lab.stats",
    "verl_focal.eval": "verl_focal.lab.eval",
    "verl_focal.eval.val_metrics": "verl_focal.validation",
    "verl_focal.partition.agreement": "verl_focal.lab.agreement",
    # the per-step machinery: its own package (issue 44 step 3)
    "verl_focal.estimators.step": "verl_focal.step.seam",
    "verl_focal.estimators.decode": "verl_focal.step.decode",
    "verl_focal.estimators.sessions": "verl_focal.step.sessions",
    "verl_focal.estimators.rows": "verl_focal.step.rows",
    # integration/ = the contract (compat, registration) + hooks/ + startup/ (issue 44 step 4)
    "verl_focal.integration.trainer": "verl_focal.integration.hooks.trainer",
    "verl_focal.integration.dataproto_hook": "verl_focal.integration.hooks.dataproto_hook",
    "verl_focal.integration.runner": "verl_focal.integration.hooks.runner",
    "verl_focal.integration.post_import": "verl_focal.integration.hooks.post_import",
    "verl_focal.integration.modes": "verl_focal.integration.hooks.modes",
    "verl_focal.integration.arrange": "verl_focal.integration.hooks.arrange",
    "verl_focal.integration.compose": "verl_focal.integration.startup.compose",
    "verl_focal.integration.no_signal": "verl_focal.integration.startup.no_signal",
    "verl_focal.integration.unread": "verl_focal.integration.startup.unread",
    "verl_focal.integration.versions": "verl_focal.integration.startup.versions",
    "verl_focal.integration.quiet": "verl_focal.integration.startup.quiet",
    "verl_focal.integration.run_size": "verl_focal.integration.startup.run_size",
    "verl_focal.integration.preflight": "verl_focal.integration.startup.validate",
    "verl_focal.integration.late_checks": "verl_focal.integration.startup.verl_checks",
    # every start-up rule in integration/startup/ (the one door's folder)
    "verl_focal.config.liveness": "verl_focal.integration.startup.liveness",
    "verl_focal.config.no_update": "verl_focal.integration.startup.no_update",
    "verl_focal.config.tracking": "verl_focal.integration.startup.tracking",
    "verl_focal.config.ray_env": "verl_focal.integration.startup.ray_env",
    "verl_focal.data.local_inputs": "verl_focal.integration.startup.local_inputs",
}

#: old name of a split module -> the other modules its names went to (searched after the one :data:`MOVED` names)
SPLIT = {
    "verl_focal.estimators.rows": ("verl_focal.step.columns", "verl_focal.estimators.old_log_probs"),
    "verl_focal.integration.trainer": ("verl_focal.step.tq_rows",),
    "verl_focal.integration.preflight": ("verl_focal.integration.startup.compose",
                                         "verl_focal.integration.startup.local_inputs"),
    "verl_focal.integration.late_checks": ("verl_focal.config.key_names",),
}

#: ``old module.old name`` -> ``new module.new name``, for a name that changed as it moved
RENAMED = {
    "verl_focal.estimators.rows.SIGNATURE_EXTRA": "verl_focal.partition.signatures.SIG_KEY",
}


def new_name(old: str) -> str | None:
    """The module's name now, or None when ``old`` did not move.

    >>> new_name("verl_focal.demo.rl"), new_name("verl_focal.eval.val_metrics"), new_name("verl_focal.demos")
    ('verl_focal.lab.demo.rl', 'verl_focal.validation', None)
    """
    best = max((o for o in MOVED if old == o or old.startswith(o + ".")), key=len, default=None)
    return None if best is None else MOVED[best] + old[len(best):]


def _stand_in(old: str, new: str) -> types.ModuleType:
    """The old name of a split module: each name looked up in the modules that hold it now."""
    homes = (new, *SPLIT[old])
    stand_in = types.ModuleType(old, f"{old} was split; its names live in {', '.join(homes)} (see verl_focal._moved)")

    def __getattr__(name: str):
        renamed = RENAMED.get(f"{old}.{name}")
        if renamed is not None:
            module, attr = renamed.rsplit(".", 1)
            return getattr(importlib.import_module(module), attr)
        for home in homes:
            module = importlib.import_module(home)
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(f"module {old!r} (now {', '.join(homes)}) has no attribute {name!r}")

    stand_in.__getattr__ = __getattr__  # type: ignore[method-assign]
    return stand_in


class _Alias:
    """Loader of one old name: the module is the one at the new name, its ``__spec__`` left as it was (or, for a
    split module, a stand-in: :func:`_stand_in`)."""

    def __init__(self, old: str, new: str):
        self.old, self.new = old, new

    def create_module(self, spec):
        # stacklevel 2: the importing line (warnings skips the import machinery's frames)
        homes = " and ".join((self.new, *SPLIT.get(self.old, ())))
        warnings.warn(f"{self.old} has moved to {homes}; import it from there (the old path goes in the next "
                      f"release)", DeprecationWarning, stacklevel=2)
        if self.old in SPLIT:
            self._spec = None
            return _stand_in(self.old, self.new)
        module = importlib.import_module(self.new)
        self._spec = module.__spec__
        return module

    def exec_module(self, module) -> None:
        if self._spec is not None:
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
