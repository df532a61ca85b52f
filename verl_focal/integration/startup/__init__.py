"""The start-up checks: a bad run is refused before Ray starts, naming the fix.

``compose`` (verl's config, composed as verl's entry point would), ``validate`` (the pre-flight:
``validate_start`` / ``validate_all``), ``verl_checks`` (verl's own choices and the reward function), ``no_signal``
(settings under which an estimator learns nothing), ``unread`` (keys nothing reads), ``run_size``, ``versions`` and
``quiet``.
"""
