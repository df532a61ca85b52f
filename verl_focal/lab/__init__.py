"""The research wing: what studies the estimators, never what trains with them.

* ``demo``      -- ``verl-focal demo``: the CPU-scale RLVR experiment (GRPO vs F-GRPO vs Cue-GRPO) through verl's
  own ``compute_advantage`` and our hooks, with paired claims and the controls' equal-pass@1 frontier
* ``eval``      -- ``verl-focal eval``: generate, score and report pass@k, AUC@K, significance, rare-correct NLL and
  the ``eval frontier`` verdicts of trained checkpoints
* ``stats``     -- the paired statistics and the frontier's verdicts (numpy and scipy only), shared by both
* ``theory``    -- ``verl-focal sim`` / ``tail-miss``: the F-GRPO paper's categorical simulation and tail-miss table
* ``frontier_report`` -- the frontier figure's drawing and palettes, shared by the demo's report and ``eval frontier``
* ``agreement`` -- ``verl-focal agreement``: judge against strategy-cue partitions (adjusted Rand index)

Its own dependencies are the ``[lab]`` extra (``pip install 'verl-focal[lab]'``: matplotlib, pillow).
Nothing outside this folder imports it (tests/architecture/test_import_layers.py): a trainer process loads none of
it.  The unbiased pass@k estimator it reports is :mod:`verl_focal.core.pass_at_k`, which validation shares.
"""
