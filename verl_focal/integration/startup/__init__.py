"""The start-up checks: a bad run is refused before Ray starts, naming the fix.

One door: ``rules`` (``RULES``, one row per rule), ``admit`` (``admit(stage, config)``, which every entry point
calls) and ``findings`` (the one report and its renderer).  The rule functions: ``compose`` (verl's config, composed
as verl's entry point would), ``estimator`` (estimator, partitioner, reward kwargs, verl's ``validate_config``),
``verl_checks`` (verl's own choices and the reward function), ``no_signal`` (settings under which an estimator
learns nothing), ``unread`` and ``reads`` (keys nothing reads), ``mandatory`` (``???`` values), ``batch`` (padded
batches), ``run_identity``, ``run_size``, ``versions``, ``quiet``, ``engine`` (the rollout engine's own config
classes), ``local_inputs`` (data files and model folders), ``liveness`` (verl keys read only under a condition),
``no_update`` (settings with which nothing updates), ``tracking`` (the logger's credentials) and ``ray_env`` (the
job's environment variables); ``validate`` holds the library's wrappers.
"""
