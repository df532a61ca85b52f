"""cue_grpo / f_cue_grpo through verl's real ``compute_advantage`` dispatch and our hooks.

Uses verl (CPU).  The batch is the cue test corpus: every problem is one group whose
correct rollouts are the corpus solutions (methods known) plus two wrong rollouts.
Expected advantages are computed here from the formulas (GRPO by hand, the credit
rule by loops over the known methods), not from the implementation.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf
from verl import DataProto
from verl.trainer.ppo import core_algos, ray_trainer

import verl_focal.plugin  # noqa: F401  (registers the estimators)
from verl_focal.config.schema import ConfigError, parse_settings
from verl_focal.estimators.context import AdvantageContext, use_context
from verl_focal.integration.registration import get_spec
from verl_focal.partition.cues import signature

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "partition"))
import cue_corpus  # noqa: E402

L = 6
corpus_batch = cue_corpus.batch_rows
expected = cue_corpus.reference_advantages


def to_dataproto(rows, with_sig=True, with_acc=True):
    n = len(rows)
    rewards = torch.zeros(n, L)
    mask = torch.ones(n, L)
    for i, r in enumerate(rows):
        rewards[i, L - 1] = r[2]
        if r[0] == "pad":
            mask[i] = 0
    ntb = {"uid": np.array([r[0] for r in rows], dtype=object)}
    if with_acc:
        ntb["acc"] = np.array([r[2] for r in rows], dtype=object)
    if with_sig:
        ntb["cue_sig"] = np.array([signature(r[1]) for r in rows], dtype=object)
    return DataProto.from_dict(tensors={"token_level_rewards": rewards, "response_mask": mask}, non_tensors=ntb)


def algo(**cue):
    return OmegaConf.create({"adv_estimator": "cue_grpo", "norm_adv_by_std_in_grpo": True, "cue": cue})


def run(data, config, estimator="cue_grpo", ctx=None):
    if ctx is None:
        return ray_trainer.compute_advantage(data, estimator, config=config).batch["advantages"][:, -1].double().numpy()
    with use_context(ctx):
        out = ray_trainer.compute_advantage(data, estimator, config=config)
    return out.batch["advantages"][:, -1].double().numpy()


def hook_context(rows, data, config, estimator="cue_grpo", responses=True):
    """What the trainer hook builds (responses decoded, extras from the reward), then prepare."""
    ntb = data.non_tensor_batch
    extras = {"cue_sig": ntb["cue_sig"]} if "cue_sig" in ntb else {}
    ctx = AdvantageContext(
        uids=ntb["uid"],
        acc=np.array(ntb["acc"], dtype=float) if "acc" in ntb else None,
        responses=[r[1] for r in rows] if responses else None,
        extras=extras,
    )
    spec = get_spec(estimator)
    assert spec.prepare is not None and {"acc", "cue_sig", "responses"} <= spec.needs_for(OmegaConf.create({}))
    spec.prepare(ctx, parse_settings(config))
    return ctx


def test_registered_in_verl():
    from verl_focal.estimators import cue as estimators_cue
    from verl_focal.estimators import cue_step as cue_hook

    assert core_algos.get_adv_estimator_fn("cue_grpo") is get_spec("cue_grpo").fn
    assert core_algos.get_adv_estimator_fn("f_cue_grpo") is get_spec("f_cue_grpo").fn
    assert get_spec("cue_grpo").fn is estimators_cue.compute_cue_grpo_advantage
    assert get_spec("f_cue_grpo").fn is estimators_cue.compute_f_cue_grpo_advantage
    for name in ("cue_grpo", "f_cue_grpo"):  # the hook steps are ours too
        spec = get_spec(name)
        assert spec.prepare is cue_hook.prepare_cue and spec.prefetch is cue_hook.prefetch_cue
        assert spec.needs is cue_hook.cue_needs


@pytest.mark.parametrize("cue", [dict(partitioner="single"), dict(partitioner="singleton"), dict(alpha=0.0)])
def test_reduces_to_verl_grpo(cue):
    rows = corpus_batch()
    data = to_dataproto(rows)
    grpo = ray_trainer.compute_advantage(to_dataproto(rows), "grpo").batch["advantages"].double().numpy()
    cfg = algo(**cue)
    ctx = hook_context(rows, data, cfg)
    with use_context(ctx):
        got = ray_trainer.compute_advantage(data, "cue_grpo", config=cfg).batch["advantages"].double().numpy()
    np.testing.assert_allclose(got, grpo, atol=1e-6)


@pytest.mark.parametrize("source", ["auto", "signature", "text"])
def test_strategy_cue_matches_formula_over_known_methods(source):
    rows = corpus_batch()
    data = to_dataproto(rows)
    cfg = algo(source=source)
    ctx = hook_context(rows, data, cfg)
    got = run(data, cfg, ctx=ctx)
    np.testing.assert_allclose(got, expected(rows), atol=1e-5)
    m = ctx.metrics
    src = m["cue/groups_from_signatures"] if source != "text" else m["cue/groups_from_text"]
    assert src == len(cue_corpus.PROBLEMS)
    assert m["cue/groups_partitioned"] == len(cue_corpus.PROBLEMS)
    # every corpus group has >= 2 methods
    assert m["cue/frac_groups_multi_cluster"] == 1.0
    assert m["cue/w_mean"] == pytest.approx(1.0)
    assert m["cue/credit_size_slope"] < 1.0
    assert "cue/partition_time_s" in m


def test_f_cue_grpo_is_focal_times_cue():
    rows = corpus_batch()
    data = to_dataproto(rows)
    cfg = algo()
    cfg.focal = {"gamma": 0.5}
    ctx = hook_context(rows, data, cfg, "f_cue_grpo")
    got = run(data, cfg, "f_cue_grpo", ctx)
    np.testing.assert_allclose(got, expected(rows, gamma=0.5), atol=1e-5)


def test_legacy_hook_end_to_end(legacy_hook):
    """The legacy trainer hook builds the context from the DataProto, decodes text, runs prepare."""
    rows = corpus_batch()
    texts = [r[1] for r in rows]

    class Decoder:  # the hook decodes response token ids; here ids index the corpus texts
        def batch_decode(self, ids, skip_special_tokens=True):
            return [texts[i[0]] if len(i) else "" for i in ids]

    data = to_dataproto(rows, with_sig=False)
    data.batch["responses"] = torch.arange(len(rows)).unsqueeze(-1).repeat(1, L)
    chats = np.empty(len(rows), dtype=object)
    chats[:] = [[{"role": "user", "content": r[0]}] for r in rows]
    data.non_tensor_batch["raw_prompt"] = chats
    legacy_hook(Decoder())
    cfg = algo()
    out = ray_trainer.compute_advantage(data, "cue_grpo", config=cfg)
    got = out.batch["advantages"][:, -1].double().numpy()
    np.testing.assert_allclose(got, expected(rows), atol=1e-5)
    metrics = out.meta_info["verl_focal_metrics"]
    assert metrics["cue/groups_from_text"] == len(cue_corpus.PROBLEMS)


def test_uniform_boost_scales_correct_rollouts_only():
    rows = corpus_batch()
    data = to_dataproto(rows)
    cfg = algo(uniform_boost=1.25)
    ctx = hook_context(rows, data, cfg)
    got = run(data, cfg, ctx=ctx)
    base = expected(rows, alpha=0.0, clip=None)
    corr = np.array([r[2] for r in rows]) > 0.5
    np.testing.assert_allclose(got, np.where(corr, 1.25 * base, base), atol=1e-5)
    assert ctx.cluster_labels is None  # nothing partitioned


def test_random_control_runs_and_preserves_mass():
    rows = corpus_batch()
    data = to_dataproto(rows)
    cfg = algo(partitioner="random", seed=3)
    ctx = hook_context(rows, data, cfg)
    got = run(data, cfg, ctx=ctx)
    for uid in dict.fromkeys(r[0] for r in rows):
        idx = [i for i, r in enumerate(rows) if r[0] == uid]
        np.testing.assert_allclose(got[idx].sum(), expected(rows, alpha=0.0, clip=None)[idx].sum(), atol=1e-5)


def test_without_acc_the_estimator_partitions_by_reward():
    rows = corpus_batch()
    data = to_dataproto(rows, with_acc=False)
    cfg = algo()
    ctx = hook_context(rows, data, cfg)
    assert ctx.cluster_labels is None
    np.testing.assert_allclose(run(data, cfg, ctx=ctx), expected(rows), atol=1e-5)


def test_prepare_rows_disagreeing_with_estimator_are_repartitioned():
    rows = corpus_batch()
    data = to_dataproto(rows)
    cfg = algo()
    cfg.focal = {"correctness": "reward"}
    ctx = hook_context(rows, data, cfg)
    # make one rollout's `acc` wrong: prepare sees a different correct set in that group
    ctx.cluster_labels = np.where(np.arange(len(rows)) == 0, -1, ctx.cluster_labels)
    got = run(data, cfg, ctx=ctx)
    np.testing.assert_allclose(got, expected(rows), atol=1e-5)
    assert ctx.metrics["cue/groups_repartitioned"] == 1


def test_missing_context_is_an_error_for_text_partitioners():
    rows = corpus_batch()
    with pytest.raises(ConfigError, match="verl_focal.main_ppo"):
        run(to_dataproto(rows), algo())
    got = run(to_dataproto(rows), algo(partitioner="single"))
    np.testing.assert_allclose(got, expected(rows, alpha=0.0, clip=None), atol=1e-5)


def test_signature_required_but_missing():
    rows = corpus_batch()
    data = to_dataproto(rows, with_sig=False)
    cfg = algo(source="signature")
    with pytest.raises(ConfigError, match="cue_sig"):
        hook_context(rows, data, cfg)


@pytest.mark.parametrize("source,from_text", [("signature", False), ("auto", True)])
def test_failed_signature_is_recoverable(source, from_text):
    """The reward writes "" when a signature fails: residual cluster (or text under auto), never a crash."""
    rows = corpus_batch()
    data = to_dataproto(rows)
    data.non_tensor_batch["cue_sig"][0] = ""
    cfg = algo(source=source)
    ctx = hook_context(rows, data, cfg)
    got = run(data, cfg, ctx=ctx)
    g0 = [i for i, r in enumerate(rows) if r[0] == rows[0][0]]
    other = [i for i in range(len(rows)) if i not in g0]
    np.testing.assert_allclose(got[other], expected(rows)[other], atol=1e-5)  # other groups untouched
    if from_text:
        np.testing.assert_allclose(got[g0], expected(rows)[g0], atol=1e-5)
        assert ctx.metrics["cue/groups_from_text"] == 1
    else:
        assert ctx.metrics["cue/extract_failed"] == 1
        assert got[g0].sum() == pytest.approx(expected(rows)[g0].sum(), abs=1e-5)  # mass still preserved


@pytest.mark.parametrize("cue,match", [(dict(alpha=-1), "alpha"), (dict(source="disk"), "source"),
                                       (dict(partitioner="nope"), "partitioner"), (dict(cue_set="math_v0"), "cue_set")])
def test_bad_config_is_named(cue, match):
    rows = corpus_batch()
    data = to_dataproto(rows)
    with pytest.raises((ConfigError, ValueError), match=match):
        hook_context(rows, data, algo(**cue))


def test_cue_needs_is_minimal_per_config():
    from verl_focal.estimators.cue_step import CUE_NEEDS, cue_needs

    assert cue_needs(parse_settings(algo(source="signature"))) == {"acc", "cue_sig"}
    # strategy_cue (the default) and the random control over it never read the problem statement
    assert cue_needs(parse_settings(algo(source="text"))) == {"acc", "responses"}
    assert cue_needs(parse_settings(algo(partitioner="random"))) == {"acc", "cue_sig", "responses"}
    assert cue_needs(parse_settings(algo(partitioner="judge"))) == {"acc", "responses", "problems"}
    assert cue_needs(parse_settings(algo(partitioner="single"))) == {"acc"}
    assert cue_needs(parse_settings(algo(uniform_boost=1.1))) == {"acc"}
    assert cue_needs(parse_settings(algo())) == CUE_NEEDS - {"problems"} == get_spec("cue_grpo").needs_for(algo())
    user = algo(partitioner="verl_focal.partition.controls:SingletonPartitioner")  # named as a user's own class
    assert cue_needs(parse_settings(user)) == CUE_NEEDS  # a user's own partitioner may read them
    # the hook asks the spec, which follows the config
    assert get_spec("cue_grpo").needs_for(algo(source="signature")) == {"acc", "cue_sig"}


def test_floor_mode_reaches_the_multipliers():
    rows = corpus_batch()
    data = to_dataproto(rows)
    cfg = algo(floor_mode="max", floor=1.05)
    ctx = hook_context(rows, data, cfg)
    got = run(data, cfg, ctx=ctx)
    base = expected(rows)
    grpo = expected(rows, alpha=0.0, clip=None)
    corr = np.array([r[2] for r in rows]) > 0.5
    # w' = max(w, 1.05) on correct rows: base/grpo is w there
    w = np.divide(base, grpo, out=np.ones_like(base), where=grpo != 0)
    np.testing.assert_allclose(got, np.where(corr, np.maximum(w, 1.05) * grpo, base), atol=1e-5)
    assert ctx.metrics["cue/w_min"] >= 1.05 - 1e-9


def test_judge_partitioner_is_used_and_falls_back_to_strategy_cue():
    """partitioner=judge gets problems + texts for all groups at once; with no server reachable
    every group falls back to strategy_cue (judge's documented fallback), so the result matches."""
    rows = corpus_batch()
    data = to_dataproto(rows)
    cfg = algo(partitioner="judge", judge={"base_url": "http://127.0.0.1:9/v1", "model": "m",
                                           "timeout_s": 2.0, "max_retries": 0})
    ntb = data.non_tensor_batch
    ctx = AdvantageContext(uids=ntb["uid"], acc=np.array(ntb["acc"], dtype=float),
                           responses=[r[1] for r in rows], problems=[r[0] for r in rows])
    get_spec("cue_grpo").prepare(ctx, parse_settings(cfg))
    got = run(data, cfg, ctx=ctx)
    np.testing.assert_allclose(got, expected(rows), atol=1e-5)
    assert ctx.metrics["cue/groups_from_text"] == len(cue_corpus.PROBLEMS)



def test_f_cue_grpo_logs_the_focal_diagnostics_too():
    """f_cue_grpo applies (1 − p̂)^γ, so it reports the same focal/* metrics as f_grpo."""
    index = np.array(["a"] * 4 + ["b"] * 4, dtype=object)
    acc = np.array([1, 1, 0, 0, 1, 0, 0, 0], dtype=float)
    rewards = torch.zeros(8, 2)
    rewards[:, -1] = torch.as_tensor(acc, dtype=torch.float32)
    ctx = AdvantageContext(uids=index, acc=acc)
    algo = OmegaConf.create({"focal": {"gamma": 1.0}, "cue": {"partitioner": "single"}})
    core_algos.get_adv_estimator_fn("f_cue_grpo")(rewards, torch.ones(8, 2), config=algo, index=index, ctx=ctx)
    # a: p̂ = 1/2 -> 0.5 ; b: p̂ = 1/4 -> 0.75
    assert ctx.metrics["focal/weight_mean_active"] == pytest.approx((0.5 + 0.75) / 2)
    assert ctx.metrics["focal/frac_active"] == 1.0


def test_a_step_with_nothing_to_partition_logs_the_same_metric_keys():
    """Steps whose groups have < 2 correct rollouts still report zeros (stable metric keys per step)."""
    index = np.array(["a"] * 4 + ["b"] * 4, dtype=object)
    acc = np.array([1, 0, 0, 0, 0, 0, 0, 0], dtype=float)
    rewards = torch.zeros(8, 2)
    rewards[:, -1] = torch.as_tensor(acc, dtype=torch.float32)
    ctx = AdvantageContext(uids=index, acc=acc, responses=["x"] * 8)
    algo = OmegaConf.create({"adv_estimator": "cue_grpo", "cue": {"source": "text"}})
    get_spec("cue_grpo").prepare(ctx, parse_settings(algo))
    core_algos.get_adv_estimator_fn("cue_grpo")(rewards, torch.ones(8, 2), config=algo, index=index, ctx=ctx)
    keys = ("cue/groups_partitioned", "cue/groups_from_signatures", "cue/groups_from_text", "cue/groups_repartitioned")
    for key in keys:
        assert ctx.metrics[key] == 0.0, key
