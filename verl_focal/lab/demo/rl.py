"""The demo's RL loop, built from verl's own pieces (verl glue).

One step, for a batch of B training prompts each repeated N times:

1. rollouts: verl's ``HFRollout.generate_sequences`` (:mod:`verl_focal.lab.demo.rollout`);
2. reward: the task verifier, 1 correct / 0 wrong, placed on the last response token;
3. advantages: verl's ``ray_trainer.compute_advantage`` dispatch with
   ``algorithm.adv_estimator`` set to the arm's estimator (``grpo`` or one of
   ours), inside :func:`verl_focal.estimators.context.use_context` carrying
   per-row ``acc``, response texts, problems and, for estimators that need them,
   the rollout policy's sequence log-probs of the sampled responses (verl's
   ``old_log_probs``, from the policy's forward pass before the update) -- what
   our trainer hook builds in a real verl run -- run by the hooks' own
   :class:`verl_focal.step.seam.AdvantageStep` (parse once, prefetch, prepare, advantage);
4. loss: verl's ``get_policy_loss_fn("vanilla")`` (PPO clip; it aggregates with
   verl's ``agg_loss``, token-mean) on one on-policy update (old = current
   log-probs, as in the F-GRPO small-model runs); AdamW, gradient clip 1.0.
   An arm with an entropy bonus or a KL loss (``Arm.actor``, the recipes'
   ``actor_rollout_ref.actor`` keys) takes verl's whole actor loss instead,
   ``verl.workers.utils.losses.ppo_loss`` (:mod:`verl_focal.lab.demo.actor_loss`),
   with the seed's SFT policy, frozen, as the KL's reference; ``optim.lr``
   replaces the run's learning rate.
"""

from __future__ import annotations

import copy
import functools
import math
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from omegaconf import OmegaConf
from verl import DataProto
from verl.trainer.ppo import core_algos, ray_trainer
from verl.trainer.ppo.ray_trainer import compute_advantage

import verl_focal.lab.demo.partitioner  # noqa: F401  (registers the `demo_strategy` partitioner)
from verl_focal.estimators.context import AdvantageContext
from verl_focal.estimators.old_log_probs import OLD_LOG_PROBS, sequence_log_prob_columns
from verl_focal.integration.registration import get_spec, register_all
from verl_focal.lab.demo.actor_loss import actor_config, actor_loss, token_entropy, uses_ppo_loss
from verl_focal.lab.demo.arms import Arm
from verl_focal.lab.demo.effect import advantage_effect
from verl_focal.lab.demo.focal_controls import row_weights
from verl_focal.lab.demo.model import PROMPT_LEN, encode_prompts
from verl_focal.lab.demo.rollout import make_rollout, prompt_batch
from verl_focal.lab.demo.task import Problem, strategy_of, verify
from verl_focal.step.seam import AdvantageStep, finish

__all__ = [
    "Arm",
    "RLConfig",
    "estimator_available",
    "decode_responses",
    "train_rl",
    "algorithm_config",
    "strategy_groups",
    "grpo_reference",
]


@dataclass(frozen=True)
class RLConfig:
    steps: int = 60
    prompts_per_step: int = 8
    lr: float = 1e-3
    clip_ratio: float = 0.2
    grad_clip: float = 1.0
    temperature: float = 1.0


def algorithm_config(arm: Arm) -> Any:
    """verl's ``algorithm`` section for ``arm``: defaults (focal γ=0, cue partitioner ``demo_strategy``),
    then ``arm.settings`` applied as dotted-key overrides."""
    cfg: dict[str, Any] = {"adv_estimator": arm.estimator, "norm_adv_by_std_in_grpo": True, "gamma": 1.0, "lam": 1.0}
    cfg["focal"] = {"gamma": 0.0, "base": "grpo", "correctness": "acc"}
    cfg["cue"] = {"partitioner": "demo_strategy", "alpha": 0.0}
    conf = OmegaConf.create(cfg)
    for key, value in arm.settings.items():
        OmegaConf.update(conf, key, value, force_add=True)
    return conf


def strategy_groups(texts: Sequence[str], acc: np.ndarray, n: int) -> tuple[int, int]:
    """(groups with >= 2 correct rollouts, of those: groups whose correct rollouts use >= 2 strategies).

    Strategy = :func:`verl_focal.lab.demo.task.strategy_of` (the operator), the
    task's ground truth -- a diagnostic of how much a strategy partition has
    to act on, measured the same way for every arm.
    """
    ge2 = multi = 0
    for g in range(len(texts) // n):
        strats = {strategy_of(texts[i]) for i in range(g * n, (g + 1) * n) if acc[i] > 0}
        if int((acc[g * n : (g + 1) * n] > 0).sum()) >= 2:
            ge2 += 1
            multi += len(strats) >= 2
    return ge2, multi


def _actor_config(clip_ratio: float) -> Any:
    # The keys verl's vanilla policy loss reads from the actor config (ActorConfig), single process.
    return OmegaConf.create(
        {"clip_ratio": clip_ratio, "clip_ratio_low": clip_ratio, "clip_ratio_high": clip_ratio, "clip_ratio_c": 3.0,
         "global_batch_info": {}}
    )


#: per tokenizer, what :func:`decode_responses` writes for each id of its vocabulary (the HF tokenizer's per-id
#: conversion and special-token attributes cost microseconds a call, 256 tokens a step)
_TOKEN_TABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _token_table(tokenizer) -> dict[int, str]:
    table = _TOKEN_TABLES.get(tokenizer)
    if table is None:
        special = {tokenizer.pad_token_id, tokenizer.bos_token_id}
        ids = list(range(len(tokenizer)))
        table = _TOKEN_TABLES[tokenizer] = {
            i: "?" if i in special else tok for i, tok in zip(ids, tokenizer.convert_ids_to_tokens(ids))
            if i in special or tok is not None}
    return table


def decode_responses(tokenizer, responses: torch.Tensor) -> list[str]:
    """Response text up to the first <eos>; a missing <eos> or a special token inside
    gives a text the verifier rejects (so nothing is silently repaired)."""
    eos, out = tokenizer.eos_token_id, []
    special = {tokenizer.pad_token_id, tokenizer.bos_token_id}
    table = _token_table(tokenizer)
    for row in responses.tolist():
        chars = []
        for t in row:
            if t == eos:
                break
            c = table.get(t)
            chars.append(c if c is not None else "?" if t in special else tokenizer.convert_ids_to_tokens(t))
        else:
            chars.append("…")  # ran out of length without <eos>
        out.append("".join(chars))
    return out


def grpo_reference(responses: torch.Tensor, response_mask: torch.Tensor, rewards: torch.Tensor, uids: Sequence[str],
                   algo: Any) -> torch.Tensor:
    """verl's GRPO advantages (``compute_advantage`` with ``adv_estimator=grpo``) of a step's rollouts and rewards,
    on copies (the arm's own batch is untouched); (B, T)."""
    ref = DataProto.from_dict(
        tensors={"responses": responses, "response_mask": response_mask, "token_level_rewards": rewards.clone()},
        non_tensors={"uid": np.array(uids, dtype=object)},
    )
    out = ray_trainer.compute_advantage(ref, adv_estimator="grpo", config=algo, norm_adv_by_std_in_grpo=True)
    return out.batch["advantages"]


def _token_entropy(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    logp = torch.log_softmax(logits.float(), dim=-1)
    ent = -(logp.exp() * logp).sum(-1)
    return core_algos.agg_loss(loss_mat=ent, loss_mask=mask, loss_agg_mode="token-mean")


def estimator_available(name: str) -> bool:
    """True when ``name`` is verl's ``grpo`` or registered in verl's estimator registry (after our plugin import)."""
    register_all()
    return name == "grpo" or name in core_algos.ADV_ESTIMATOR_REGISTRY


def _context(step: AdvantageStep, uids, acc, texts, problems, log_prob, response_mask) -> AdvantageContext:
    """The demo's adapter of the step seam: the context of its rows (``acc`` (bs,), texts and, when needed, the
    sequence log-probs of ``log_prob`` (bs, L)), prefetched in place (the hooks prefetch in the background)."""
    ctx = AdvantageContext(uids=np.array(uids, dtype=object), acc=acc, responses=texts, problems=problems,
                           source="demo")
    if OLD_LOG_PROBS in step.needs:
        ctx.extras.update(sequence_log_prob_columns(log_prob, response_mask))
    step.prefetch(ctx)
    return ctx


def train_rl(
    model, tokenizer, problems: Sequence[Problem], arm: Arm, cfg: RLConfig, seed: int, progress=None
) -> list[dict[str, float]]:
    """Run ``cfg.steps`` RL steps of ``arm`` on ``model`` in place; return per-step metrics."""
    register_all()
    spec = get_spec(arm.estimator)
    if spec is None and arm.estimator not in core_algos.ADV_ESTIMATOR_REGISTRY and arm.estimator != "grpo":
        raise ValueError(f"arm {arm.name!r}: advantage estimator {arm.estimator!r} is not registered in verl")
    algo = algorithm_config(arm)
    actor_cfg = _actor_config(cfg.clip_ratio)
    loss_fn = core_algos.get_policy_loss_fn("vanilla")
    regularised = uses_ppo_loss(arm.actor)
    ppo_cfg = actor_config(arm.actor, arm.n, cfg.clip_ratio) if regularised else None
    # the KL's reference: the policy RL starts from (the seed's SFT policy), frozen
    ref = copy.deepcopy(model).eval().requires_grad_(False) if regularised and ppo_cfg.use_kl_loss else None
    rollout = make_rollout(model, temperature=cfg.temperature)
    # foreach: the same per-tensor arithmetic as the default on CPU (the same bits), with less Python per step
    opt = torch.optim.AdamW(model.parameters(), lr=float(arm.actor.get("optim.lr", cfg.lr)), weight_decay=0.0,
                            foreach=True)
    rng = np.random.default_rng(seed)
    # the focal weight's controls draw their permutations from a generator of their own: the other draws (prompts,
    # sampling) stay those of every other arm on this seed
    weights_rng = np.random.default_rng([seed, 0xF0CA1]) if arm.focal_weights else None
    torch.manual_seed(seed)  # HF sampling draws from torch's global generator
    probs = list(problems)
    history = []
    for step in range(cfg.steps):
        pick = rng.choice(len(probs), size=min(cfg.prompts_per_step, len(probs)), replace=False)
        batch_probs = [probs[i] for i in pick for _ in range(arm.n)]
        uids = [f"s{step}p{i}" for i in pick for _ in range(arm.n)]
        prompt_ids = encode_prompts(tokenizer, batch_probs).to(next(model.parameters()).device)
        out = rollout.generate_sequences(prompt_batch(prompt_ids, uids, tokenizer))
        responses = out.batch["responses"]
        response_mask = out.batch["attention_mask"][:, PROMPT_LEN:].float()
        texts = decode_responses(tokenizer, responses)
        acc = np.array([1.0 if verify(p, t) else 0.0 for p, t in zip(batch_probs, texts)])

        rewards = torch.zeros_like(response_mask)
        last = (response_mask.sum(-1).long() - 1).clamp(min=0)
        rewards[torch.arange(len(acc), device=rewards.device), last] = torch.as_tensor(
            acc, dtype=rewards.dtype, device=rewards.device
        )
        data = DataProto.from_dict(
            tensors={"responses": responses, "response_mask": response_mask, "token_level_rewards": rewards},
            non_tensors={"uid": np.array(uids, dtype=object)},
        )
        # the policy's forward pass comes before the advantage step: its detached per-token log-probs are the
        # rollout policy's (pre-update) log-probs, verl's ``old_log_probs``, which the hook hands to estimators
        # that need them (``unlikely_grpo``); no randomness is drawn here, so other arms are unchanged
        if not model.training:  # verl's HFRollout hands the policy back in train mode (a module walk costs ~0.4 ms)
            model.train()
        input_ids = out.batch["input_ids"]
        logits = model(input_ids=input_ids, attention_mask=out.batch["attention_mask"]).logits[:, PROMPT_LEN - 1 : -1]
        log_prob = torch.log_softmax(logits.float(), dim=-1).gather(-1, responses[..., None]).squeeze(-1)
        step_metrics: dict[str, float] = {}

        def advantage(data=data):
            return compute_advantage(data, adv_estimator=arm.estimator, config=algo, norm_adv_by_std_in_grpo=True)

        # verl's GRPO advantages of the same rollouts, the yardstick of the estimator's effect (nothing random)
        reference = None if arm.estimator == "grpo" else grpo_reference(responses, response_mask, rewards, uids, algo)
        # our estimators through the hooks' seam: parse once, fetch what is needed, prefetch, prepare, run
        build = functools.partial(_context, uids=uids, acc=acc, texts=texts, problems=[p.prompt for p in batch_probs],
                                  log_prob=log_prob.detach(), response_mask=response_mask)
        data = advantage() if spec is None else finish(spec, algo, build, lambda ctx: advantage(), step_metrics)
        adv = data.batch["advantages"]
        if arm.focal_weights:  # verl's GRPO advantages times the rearranged focal weights (demo/focal_controls.py)
            reference = adv  # the arm's estimator is grpo: its advantages are the yardstick themselves
            w = row_weights(acc, arm.n, float(arm.settings["focal.gamma"]), arm.focal_weights, weights_rng)
            adv = adv * torch.as_tensor(w, dtype=adv.dtype, device=adv.device)[:, None]
        effect = advantage_effect(adv, adv if reference is None else reference, response_mask)

        loss_terms: dict[str, float] = {}
        if regularised:  # verl's ppo_loss: the policy loss, the entropy bonus and the KL loss, as in the recipes
            ref_log_prob = None
            if ref is not None:
                with torch.no_grad():
                    ref_logits = ref(input_ids=input_ids, attention_mask=out.batch["attention_mask"]).logits
                    ref_log_prob = torch.log_softmax(ref_logits[:, PROMPT_LEN - 1 : -1].float(), dim=-1).gather(
                        -1, responses[..., None]).squeeze(-1)
            pg_loss, verl_metrics = actor_loss(
                ppo_cfg, log_prob=log_prob, entropy=token_entropy(logits) if ppo_cfg.entropy_coeff else None,
                old_log_prob=log_prob.detach(), ref_log_prob=ref_log_prob, advantages=adv, input_ids=input_ids,
                attention_mask=out.batch["attention_mask"], prompt_len=PROMPT_LEN,
            )
            loss_terms = {k: verl_metrics[k] for k in ("actor/entropy_loss", "kl_loss") if k in verl_metrics}
        else:
            pg_loss, pg_metrics = loss_fn(
                old_log_prob=log_prob.detach(), log_prob=log_prob, advantages=adv, response_mask=response_mask,
                loss_agg_mode="token-mean", config=actor_cfg,
            )
        opt.zero_grad()
        pg_loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()

        row_adv = (adv * response_mask).abs().sum(-1)
        groups = row_adv.reshape(-1, arm.n)
        m = {
            "step": step,
            "train_acc": float(acc.mean()),
            "loss": float(pg_loss.detach()),
            "grad_norm": float(gnorm),
            "entropy": float(_token_entropy(logits.detach(), response_mask)),
            "zero_adv_group_frac": float((groups.sum(-1) == 0).float().mean()),
            # token-mean |Â| over the response tokens: the weight the update's token-mean loss gives each token's
            # log-prob gradient (docs/demo.md, "The controls": the lower-lr control is matched on it)
            "adv_abs_mean": float(row_adv.sum() / response_mask.sum()),
        }
        m["groups_ge2_correct"], m["groups_multi_strategy"] = strategy_groups(texts, acc, arm.n)
        m.update(effect)
        m.update(loss_terms)  # the control arms' entropy and KL terms, as verl's actor reports them
        # the step's timings (verl_focal/*_s) depend on the machine: kept out so that results are reproducible
        m.update({k: float(v) for k, v in step_metrics.items()
                  if isinstance(v, (int, float)) and not (k.startswith("verl_focal/") and k.endswith("_s"))})
        if not all(math.isfinite(v) for v in (m["loss"], m["grad_norm"])):
            raise FloatingPointError(f"arm {arm.name}: non-finite loss/grad at step {step}: {m}")
        history.append(m)
        if progress is not None:
            progress.update(1)
            progress.set_postfix(arm=arm.name, acc=f"{m['train_acc']:.2f}")
    model.eval()  # each step's rollout switches to eval itself; the caller gets the policy in eval mode
    return history
