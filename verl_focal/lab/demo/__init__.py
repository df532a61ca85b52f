"""``verl-focal demo``: a CPU-scale RLVR experiment showing sharpening and what focal and cue credit do about it.

Modules: :mod:`task` (the verifiable task, pure Python), :mod:`model` (local
tokenizer, tiny Llama, SFT), :mod:`partitioner` (the task's strategy
partitioner, registered as ``demo_strategy``), :mod:`rollout` and :mod:`rl`
(the RL loop on verl's HFRollout, compute_advantage and policy loss),
:mod:`arms` (the arm list, data), :mod:`metrics` (exact pass@k, strategy
diversity, ΔNLL_rare), :mod:`stats` (paired-by-seed intervals and verdicts),
:mod:`experiment`, :mod:`report`, :mod:`cli`.
"""
