"""verl plugin entry point (``[project.entry-points."verl.plugins"]``).

verl imports this module (it does not call anything) on every ``import verl``,
in every process.  Importing it registers our advantage estimators.  It is
idempotent and safe to import twice (entry point + ``VERL_USE_EXTERNAL_MODULES``).
"""

from verl_focal.integration.registration import register_all

register_all()
