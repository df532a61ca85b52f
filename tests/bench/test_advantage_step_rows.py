"""The rows bench/advantage_step.py writes: tiled from a pool, every row distinct, the reward-side
``cue_sig`` the one the reward workers would compute on the row's own text, the pool cached by
generator version, and one Hydra composition giving every arm's config."""

from __future__ import annotations

import numpy as np
import pytest
from _bench_module import load


@pytest.fixture(scope="module")
def bench():
    return load()


@pytest.fixture(scope="module")
def tok(bench):
    return bench.build_tokenizer(400, seed=0)


def test_rows_are_distinct_full_length_and_keep_the_pool_signature(bench, tok):
    from verl_focal.partition.cues import response_signature

    t, cpt = tok
    size = bench.Size(rows=16 * 8, length=160, group=8)  # more groups than the pool: groups repeat
    pool = bench.generate_pool(t, cpt, size, seed=1)
    n_pool = len(pool["ids"]) // size.group
    assert n_pool == min(bench.POOL_GROUPS, 16)
    ids, group, src = bench.tile_rows(t, pool, size)
    assert ids.shape == (size.rows, size.length)
    assert len({r.tobytes() for r in ids}) == size.rows  # no two rows alike
    assert (group == np.arange(size.rows) // 8).all() and (src < len(pool["ids"])).all()
    texts = t.batch_decode(ids.tolist(), skip_special_tokens=True)
    for i, text in enumerate(texts):
        assert text.startswith(f"<think>\n#{i:07d}\n")
        ok = pool["acc"][src[i]] > 0.5
        answer = pool["answers"][src[i] // 8] if ok else None
        assert text.rstrip().endswith("$.") and "\\boxed{" in text[-80:]
        if ok:
            assert f"\\boxed{{{answer}}}" in text[-80:]
        # what compute_score(cue_set="math_v1") would add for this very row
        assert response_signature(text, "math_v1", correct=ok) == pool["sigs"][src[i]], i
    assert {s.rsplit(":", 1)[-1] for s, a in zip(pool["sigs"], pool["acc"]) if a < 0.5} == {"!wrong"}


def test_pool_cache_is_keyed_by_generator_version(bench, tok, tmp_path):
    t, cpt = tok
    size = bench.Size(rows=16, length=64, group=8)
    first, generated = bench.cached_pool(t, cpt, size, 2, tmp_path)
    (path,) = tmp_path.glob("pool_*.npz")
    assert generated and path.name.startswith(f"pool_v{bench.GEN_VERSION}_16x64_g8_s2_")
    again, generated = bench.cached_pool(t, cpt, size, 2, tmp_path)
    assert not generated and all((np.asarray(first[k]) == np.asarray(again[k])).all() for k in first)


@pytest.mark.parametrize("arm", ["cue_judge", "passk", "unlikely_bypass", "ds_grpo_bypass"])
def test_one_composition_gives_each_arms_config(bench, arm):
    from omegaconf import OmegaConf

    from verl_focal.integration.startup.compose import compose_config

    size = bench.Size(rows=64, length=64, group=16)
    overrides = bench.arm_overrides(arm, "http://127.0.0.1:9/v1", size)
    got = bench.arm_config(compose_config(), overrides)
    assert OmegaConf.to_container(got) == OmegaConf.to_container(compose_config(overrides))
