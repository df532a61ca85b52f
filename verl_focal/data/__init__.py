"""Data preparation for the papers' setups: DeepScaleR training data, the MATH level 3-5 subset
(Cue-GRPO) and the evaluation sets, all written in verl's RL parquet schema.

Entry point: ``verl-focal prep-data {deepscaler,math-subset,eval,example}`` (:mod:`verl_focal.data.cli`).
Nothing here imports verl.
"""
