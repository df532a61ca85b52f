"""verl plugin entry point (``[project.entry-points."verl.plugins"]``).

verl imports this module -- it does not call anything -- on every ``import verl``, in every process
(driver, TaskRunner, Ray workers), so importing it costs nothing beyond itself and the few small modules
below it (``integration.compat``, ``integration.hooks.arrange`` and ``.post_import``; no verl submodule, no torch
kernel, no scipy): ``bench/import_cost.py`` measures it and ``tests/integration/test_import_cost.py`` holds it to
a module budget.  Importing it only arranges, for when each verl module is first imported
(:func:`~verl_focal.integration.hooks.arrange.arrange`):

* ``verl.trainer.ppo.core_algos``: our advantage estimators (``f_grpo``, ``cue_grpo``, ...) enter its
  ``ADV_ESTIMATOR_REGISTRY``; a process that never imports verl's registry never loads them;
* ``verl.trainer.ppo.ray_trainer``: the hook around verl's ``compute_advantage``;
* ``verl.trainer.ppo.v1``: the hooked v1 trainer modes ``focal_*``;
* ``verl.experimental.separation.ray_trainer``: the hook of the separated trainers.

Each step is guarded (:func:`verl_focal.integration.compat.install`): a verl name it needs that is
missing, or any failure, is one WARNING and that feature is not installed; verl itself always
imports and runs.  Idempotent: safe to import twice (entry point + ``VERL_USE_EXTERNAL_MODULES``).
"""

from verl_focal.integration.hooks.arrange import arrange

arrange()
