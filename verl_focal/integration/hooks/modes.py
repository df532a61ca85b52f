"""The trainer modes verl-focal hooks: verl's v1 mode -> our registered, hooked mode.

verl's v1 trainer picks its class by ``trainer.v1.trainer_mode``; for each mode below,
:mod:`verl_focal.integration.hooks.trainer` registers a hooked subclass under our name, and the
TaskRunner (:mod:`verl_focal.integration.hooks.runner`) switches a run's mode to it.  The one table
of modes; no verl import.
"""

from __future__ import annotations

__all__ = ["HOOKED_MODES", "hooked_mode"]

#: verl trainer mode -> our registered mode name
HOOKED_MODES = {
    "sync": "focal_sync",
    "colocate_async": "focal_colocate_async",
    "separate_async": "focal_separate_async",
}


def hooked_mode(mode: str) -> str:
    """Our hooked mode for ``mode`` (a verl mode, or already one of ours).

    >>> hooked_mode("sync"), hooked_mode("focal_sync")
    ('focal_sync', 'focal_sync')
    """
    if mode in HOOKED_MODES.values():
        return mode
    if mode not in HOOKED_MODES:
        raise ValueError(
            f"trainer.v1.trainer_mode={mode!r}: verl-focal hooks only {sorted(HOOKED_MODES)} "
            f"(or {sorted(HOOKED_MODES.values())}); a custom trainer can mix in "
            "verl_focal.integration.hooks.trainer.FocalHookMixin itself"
        )
    return HOOKED_MODES[mode]
