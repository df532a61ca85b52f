"""The library entry points of the start-up rules: :func:`validate_start` and :func:`validate_all`.

Both are wrappers around :func:`~verl_focal.integration.startup.admit.admit` (the ``trainer`` and ``check`` stages of
:data:`~verl_focal.integration.startup.rules.RULES`): they raise the first refusal as a
:class:`~verl_focal.config.errors.ConfigError` naming the key, the value and the fix, and warn the warnings.  The
estimator's rule functions that lived here are in :mod:`~verl_focal.integration.startup.estimator` (imported here by
their old names).  Nothing here imports from an entry point.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from verl_focal.integration.startup.admit import admit
from verl_focal.integration.startup.estimator import (  # noqa: F401 - their old home
    check_estimator_name,
    check_partitioner,
    check_reward_kwargs,
    check_verl_config,
    is_our_name,
    uses_our_scorer,
)

if TYPE_CHECKING:
    from omegaconf import DictConfig

__all__ = ["validate_start", "validate_all"]


def validate_start(config: Any, trainer: str = "ppo") -> dict:
    """The rules of the ``trainer`` stage (:func:`~verl_focal.integration.startup.admit.admit`): everything of ours
    that can fail at step 1; raises the first refusal, warns the warnings, returns the validated sections."""
    report = admit("trainer", config, trainer=trainer).raise_first()
    report.warn()
    return report.sections


def validate_all(config: DictConfig, trainer: str = "ppo") -> dict:
    """:func:`validate_start`'s rules + verl's own ``validate_config`` and a separated ``trainer``'s requirements
    (the ``check`` stage of :func:`~verl_focal.integration.startup.admit.admit`, the judge not contacted); raises
    the first refusal, warns the warnings, returns the validated sections."""
    report = admit("check", config, trainer=trainer, skip_judge=True).raise_first()
    report.warn()
    return report.sections
