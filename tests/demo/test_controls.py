"""The control arms (lower lr, entropy bonus, KL loss to the SFT policy): arm data, and verl's actor loss on the
demo's batch checked against the terms computed independently here."""

import math

import pytest
import torch
import verl  # noqa: F401  a hard dependency: fail loudly if it is missing
from omegaconf import OmegaConf

from verl_focal.lab.demo.arms import (
    ACTOR_KEYS,
    ARM_SETS,
    BASE_LR,
    CONTROL_FAMILIES,
    CONTROLS_SET,
    DEFAULT_ARMS,
    MATCHED_LR,
    METHOD_FAMILIES,
    REFERENCE_ARM,
    Arm,
    arms_by_name,
)

P, R, V = 6, 4, 25


def _batch(seed=0, b=6):
    """Logits (with grad) of a batch of b sequences, sampled token ids, an attention mask with early <eos> rows."""
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(b, P + R, V, generator=g, requires_grad=True)
    ids = torch.randint(3, V, (b, P + R), generator=g)
    am = torch.ones(b, P + R, dtype=torch.long)
    am[0, P + 1:] = 0  # a response of one token (<eos> first)
    am[1, P + 3:] = 0
    adv = torch.randn(b, 1, generator=g).expand(b, R) * am[:, P:].float()
    # the reference's log-probs: the policy's, moved by up to about ±1 (inside verl's clamps of k3)
    ref = _response_log_prob(logits, ids).detach() + 0.5 * torch.randn(b, R, generator=g)
    return logits, ids, am, adv, ref


def _response_log_prob(logits, ids):
    # the demo's own forward: positions P-1 .. end-2 predict the response tokens
    return torch.log_softmax(logits[:, P - 1:-1].float(), -1).gather(-1, ids[:, P:, None]).squeeze(-1)


def test_grids_are_the_registered_ones_and_every_control_is_grpo_n8():
    assert [f.name for f in CONTROL_FAMILIES] == ["lower lr", "KL to SFT", "focal shuffled"]
    lr, kl = CONTROL_FAMILIES[:2]
    assert [a.actor["optim.lr"] for a in lr.arms] == [3.4e-4, MATCHED_LR, 1.25e-4, 5e-5]
    assert MATCHED_LR == 2.3e-4 and BASE_LR == 5e-4 and lr.ends_at_sft
    assert [dict(a.actor) for a in kl.arms] == [
        {"use_kl_loss": True, "kl_loss_coef": c, "kl_loss_type": "low_var_kl"} for c in (0.001, 0.1, 0.3, 1.0)]
    for fam in CONTROL_FAMILIES:
        assert fam.control and len(fam.labels) == len(fam.arms)
        assert all(a.estimator == "grpo" and a.n == 8 for a in fam.arms)
        # the papers' controls change the actor only; the focal weight's controls the weights only
        assert all(not a.settings and not a.focal_weights for a in fam.arms) == (fam in (lr, kl))
    knobs = {f.name: [dict(a.settings) for a in f.arms] for f in METHOD_FAMILIES}
    assert knobs["F-GRPO"] == [{"focal.gamma": g} for g in (0.5, 1.0, 2.0)]
    assert knobs["Cue-GRPO"] == [{"cue.alpha": a} for a in (0.8, 1.6)]
    assert knobs["Unlikely-GRPO"] == [{"unlikely.beta": b, "unlikely.likelihood": "sum"} for b in (0.25, 0.5, 1.0)]
    assert knobs["Pass@k-GRPO"] == [{"passk.k": k} for k in (2, 4)]
    assert knobs["MaxRL"] == [{"maxrl.epsilon": e} for e in (1e-6, 0.125)]
    assert knobs["DS-GRPO"] == [{"ds_grpo.correct_coef": c, "ds_grpo.incorrect_coef": c} for c in (0.2, 0.5)]
    assert knobs["F-GRPO renormalised"] == [{"focal.gamma": g} for g in (0.5, 1.0, 2.0)]
    assert not any(f.control or f.reference for f in METHOD_FAMILIES)
    # the set: the reference first, then 11 controls and 18 method arms, every arm once, all at N = 8; then the
    # output mixture's 12 points, computed (not trained), and the weight interpolation's 12 (not trained)
    names = [a.name for a in CONTROLS_SET]
    trained = [a.name for a in CONTROLS_SET if a.trained]
    assert names[0] == REFERENCE_ARM and len(names) == len(set(names)) == 54 and len(trained) == 30
    assert sum(len(f.arms) for f in CONTROL_FAMILIES) == 11 and sum(len(f.arms) for f in METHOD_FAMILIES) == 18
    assert names[30:42] == [f"output mixture λ={v:g}" for v in (0.975, 0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3,
                                                                 0.2, 0.1)]
    assert names[42:] == [f"weight interpolation λ={v:g}" for v in (0.9, 0.8, 0.7, 0.65, 0.6, 0.55, 0.5, 0.45, 0.4,
                                                                     0.3, 0.2, 0.1)]
    assert all(a.n == 8 for a in CONTROLS_SET)
    # the default settings are the default arms themselves (same name, same settings)
    assert {a.name for a in DEFAULT_ARMS} <= set(names)
    assert [a.name for a in arms_by_name(["controls"])] == names
    assert set(names) <= {a.name for a in ARM_SETS["all"]}


def test_an_arm_with_an_actor_key_the_demo_does_not_run_is_refused():
    with pytest.raises(ValueError, match=r"arm 'x': actor keys \['ppo_epochs'\] are not run by the demo; choose "
                                         r"from \['optim.lr', 'entropy_coeff', 'use_kl_loss', 'kl_loss_coef', "
                                         r"'kl_loss_type'\]"):
        Arm("x", "grpo", 8, actor={"ppo_epochs": 2})
    assert ACTOR_KEYS == ("optim.lr", "entropy_coeff", "use_kl_loss", "kl_loss_coef", "kl_loss_type")
    # the default arms' results.json entry keeps its shape; a control's names its actor settings
    assert "actor" not in DEFAULT_ARMS[0].as_json()
    assert CONTROL_FAMILIES[1].arms[0].as_json()["actor"] == {"use_kl_loss": True, "kl_loss_coef": 0.001,
                                                              "kl_loss_type": "low_var_kl"}


def test_ppo_loss_with_both_terms_off_is_the_vanilla_policy_loss_bit_for_bit():
    """verl's ppo_loss on the demo's packed layout gives the same loss and gradient as the other arms' direct call
    of verl's vanilla policy loss, so the control arms differ from GRPO by their term only."""
    from verl.trainer.ppo import core_algos

    from verl_focal.lab.demo.actor_loss import actor_config, actor_loss

    logits, ids, am, adv, _ = _batch()
    lp = _response_log_prob(logits, ids)
    mask = am[:, P:].float()
    cfg = OmegaConf.create({"clip_ratio": 0.2, "clip_ratio_low": 0.2, "clip_ratio_high": 0.2, "clip_ratio_c": 3.0,
                            "global_batch_info": {}})
    vanilla, _ = core_algos.get_policy_loss_fn("vanilla")(
        old_log_prob=lp.detach(), log_prob=lp, advantages=adv, response_mask=mask, loss_agg_mode="token-mean",
        config=cfg)
    (g_vanilla,) = torch.autograd.grad(vanilla, logits)
    lp2 = _response_log_prob(logits, ids)
    ours, metrics = actor_loss(actor_config({}, 8, 0.2), log_prob=lp2, entropy=None, old_log_prob=lp2.detach(),
                               ref_log_prob=None, advantages=adv, input_ids=ids, attention_mask=am, prompt_len=P)
    (g_ours,) = torch.autograd.grad(ours, logits)
    assert ours.item() == vanilla.item() and torch.equal(g_ours, g_vanilla)
    assert "kl_loss" not in metrics and "actor/entropy_loss" not in metrics


@pytest.mark.parametrize("coef", [0.1, 1.0])
def test_entropy_bonus_and_kl_loss_are_the_recipes_terms(coef):
    """loss = pg − c_H · mean_t H_t + c_KL · mean_t k3_t over the response tokens (token-mean), with the entropy of
    softmax(logits) and k3 = exp(ref − logp) − (ref − logp) − 1, computed here by hand."""
    from verl_focal.lab.demo.actor_loss import actor_config, actor_loss, token_entropy

    logits, ids, am, adv, ref = _batch(seed=1)
    lp = _response_log_prob(logits, ids)
    mask = am[:, P:].float()
    actor = {"entropy_coeff": 0.3 * coef, "use_kl_loss": True, "kl_loss_coef": coef, "kl_loss_type": "low_var_kl"}
    loss, metrics = actor_loss(actor_config(actor, 8, 0.2), log_prob=lp, entropy=token_entropy(logits[:, P - 1:-1]),
                               old_log_prob=lp.detach(), ref_log_prob=ref, advantages=adv, input_ids=ids,
                               attention_mask=am, prompt_len=P)
    p = torch.softmax(logits[:, P - 1:-1].double(), -1)
    h = -(p * p.log()).sum(-1)
    d = ref.double() - lp.double()
    k3 = d.exp() - d - 1
    n = mask.sum()
    pg = (-adv * torch.ones_like(lp)).double().mul(mask).sum() / n  # ratio 1 on the on-policy update
    want = pg - 0.3 * coef * (h * mask).sum() / n + coef * (k3 * mask).sum() / n
    assert loss.item() == pytest.approx(want.item(), rel=1e-5, abs=1e-6)
    assert metrics["actor/entropy_loss"] == pytest.approx(((h * mask).sum() / n).item(), rel=1e-5)
    assert metrics["kl_loss"] == pytest.approx(((k3 * mask).sum() / n).item(), rel=1e-5)
    # the gradient reaches the logits through both terms
    (g,) = torch.autograd.grad(loss, logits)
    assert math.isfinite(g.abs().sum().item()) and g[:, P - 1:-1].abs().sum() > 0


def test_kl_loss_without_reference_log_probs_is_refused():
    from verl_focal.lab.demo.actor_loss import actor_config, actor_loss

    logits, ids, am, adv, _ = _batch()
    lp = _response_log_prob(logits, ids)
    cfg = actor_config({"use_kl_loss": True, "kl_loss_coef": 0.1}, 8, 0.2)
    with pytest.raises(ValueError, match="use_kl_loss needs the reference policy's log-probs"):
        actor_loss(cfg, log_prob=lp, entropy=None, old_log_prob=lp.detach(), ref_log_prob=None, advantages=adv,
                   input_ids=ids, attention_mask=am, prompt_len=P)


def _tiny():
    from verl_focal.lab.demo.model import ModelSpec, build_model, build_tokenizer

    tok = build_tokenizer()
    return tok, build_model(tok, ModelSpec(hidden=32, layers=1, heads=2, intermediate=64), seed=3)


def test_kl_arm_anchors_to_the_policy_rl_starts_from(monkeypatch):
    """In the RL loop the KL's reference log-probs are the starting policy's on the sampled responses at every step
    (computed here by teacher forcing on a copy taken before training), not the updated policy's; the entropy
    bonus moves the policy, so the KL is 0 at the first step and positive after it."""
    import copy

    import verl_focal.lab.demo.rl as rl
    from verl_focal.lab.demo.model import PROMPT_LEN
    from verl_focal.lab.demo.task import split_problems

    tok, model = _tiny()
    start = copy.deepcopy(model).eval()
    seen = []
    real = rl.actor_loss

    def spy(cfg, **kw):
        seen.append((kw["input_ids"].clone(), kw["attention_mask"].clone(), kw["ref_log_prob"].clone()))
        return real(cfg, **kw)

    monkeypatch.setattr(rl, "actor_loss", spy)
    arm = Arm("c", "grpo", 8, actor={"entropy_coeff": 0.5, "use_kl_loss": True, "kl_loss_coef": 1.0})
    hist = rl.train_rl(model, tok, split_problems(0)[0], arm, rl.RLConfig(steps=3, prompts_per_step=2), seed=0)
    assert len(seen) == 3
    for ids, am, ref in seen:
        with torch.no_grad():
            want = _response_log_prob(start(input_ids=ids, attention_mask=am).logits, ids)
        mask = am[:, PROMPT_LEN:].bool()
        torch.testing.assert_close(ref[mask], want[mask], rtol=1e-5, atol=1e-5)
    assert hist[0]["kl_loss"] == 0.0 and hist[1]["kl_loss"] > 0 and hist[2]["kl_loss"] > 0
    # verl's entropy term is the mean token entropy the demo logs for every arm
    assert all(h["actor/entropy_loss"] == pytest.approx(h["entropy"], rel=1e-5) for h in hist)


@pytest.mark.parametrize("lr, moves", [(0.0, False), (1e-3, True)])
def test_a_control_arm_trains_at_its_own_lr(lr, moves):
    import verl_focal.lab.demo.rl as rl
    from verl_focal.lab.demo.task import split_problems

    tok, model = _tiny()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    arm = Arm("c", "grpo", 8, actor={"optim.lr": lr, "entropy_coeff": 0.5})  # the bonus gives a gradient
    rl.train_rl(model, tok, split_problems(0)[0], arm, rl.RLConfig(steps=2, prompts_per_step=2, lr=5e-4), seed=0)
    same = all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert same is not moves


def test_every_method_arm_of_the_controls_set_passes_the_users_config_checks():
    """The grids stay inside what `algorithm.*` accepts for users (DS-GRPO's c₊ = c₋ = 0.5 included: its range is
    c ≥ 0), checked by the same parser the estimators run on every step; a negative c is refused."""
    from verl_focal.config.errors import ConfigError
    from verl_focal.config.schema import parse_settings
    from verl_focal.lab.demo.rl import algorithm_config

    for fam in METHOD_FAMILIES:
        for a in fam.arms:
            parse_settings(algorithm_config(a))
    ds = parse_settings(algorithm_config(arms_by_name(["DS-GRPO N=8 c=0.5"])[0])).ds_grpo
    assert (ds.correct_coef, ds.incorrect_coef) == (0.5, 0.5)
    with pytest.raises(ConfigError, match="correct_coef"):
        parse_settings(algorithm_config(Arm("x", "ds_grpo", 8, {"ds_grpo.correct_coef": -0.1})))
