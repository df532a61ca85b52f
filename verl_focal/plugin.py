"""verl plugin entry point (``[project.entry-points."verl.plugins"]``).

verl imports this module -- it does not call anything -- on every
``import verl``, in every process (driver, TaskRunner, Ray workers); verl also
swallows import errors here at DEBUG level, which is why ``verl-focal check``
exists and why a failure here is logged at WARNING level before it propagates.
Importing it:

* registers our advantage estimators (``f_grpo``, ``cue_grpo``, ``f_cue_grpo``, ``passk_grpo``,
  ``unlikely_grpo``);
* arranges for the hooked trainer modes (``focal_sync``, ...) to be registered
  as soon as verl's v1 trainer package is imported;
* arranges for the separated trainers (one-step-off, fully-async) to be hooked as soon as
  ``verl.experimental.separation.ray_trainer`` is imported
  (:func:`verl_focal.integration.dataproto_hook.install_separated_hook`; it acts only on our
  estimators).

Idempotent: safe to import twice (entry point + ``VERL_USE_EXTERNAL_MODULES``).
"""

import logging

from verl_focal.integration.post_import import when_imported
from verl_focal.integration.registration import register_all

logger = logging.getLogger(__name__)


def _register_trainers() -> None:
    import verl_focal.integration.trainer  # noqa: F401  (registers focal_sync & co.)


def _hook_separated_trainers() -> None:
    from verl_focal.integration.dataproto_hook import install_separated_hook

    install_separated_hook()


try:
    register_all()  # a name held by another package is a WARNING there, never an exception
except Exception as e:
    logger.warning(
        "verl-focal: registering the advantage estimators failed (%s: %s); run "
        "`python -c 'import verl_focal.plugin'` for the traceback", type(e).__name__, e,
    )
    raise
when_imported("verl.trainer.ppo.v1", _register_trainers)
when_imported("verl.experimental.separation.ray_trainer", _hook_separated_trainers)
