"""Pins verl issue #7956 for us: ``algorithm.use_pf_ppo`` and the v1 trainer's advantage pass.

verl 0.9.1's ``compute_advantage`` resamples rows by reward (``compute_pf_ppo_reweight_data``) only in its GAE
branch; the v1 trainer (``_compute_advantage``) then writes the returned rows' advantages back under the
*original* rows' keys, so with GAE each advantage lands on another response (#7956).  Our estimators group by
uid and go through the other branch: the tests run them through verl's real v1 path
(``compute_advantage_for_multi_trajectories``) with ``use_pf_ppo=true`` and check every row against its own
group (loop reference).  Nothing is faked: verl's own functions run on CPU.  Since nothing reads
``use_pf_ppo`` for our estimators, and GAE mis-pairs on v1, start-up refuses both
(``integration/startup/no_signal.check_pf_ppo``); if verl ever applies pf_ppo to every estimator, the first test fails.
"""

import numpy as np
import pytest
import torch
import verl  # noqa: F401  (loads our plugin through the verl.plugins entry point)
from omegaconf import OmegaConf
from verl import DataProto
from verl.trainer.ppo.v1.utils import compute_advantage_for_multi_trajectories

from _reference import make_grouped_batch, reference_advantages

SIZES = [8, 3, 8, 5, 4, 8]


def _v1_advantages(rewards, mask, index, algo, seed=0):
    """verl's v1 advantage pass on one batch, keys as the v1 trainer makes them (uid_session_turn)."""
    data = DataProto.from_dict(tensors={"token_level_rewards": rewards.clone(), "token_level_scores": rewards.clone(),
                                        "response_mask": mask.clone()}, non_tensors={"uid": index})
    keys = [f"{u}_{i}_0" for i, u in enumerate(index)]  # one agent session per rollout, one turn
    torch.manual_seed(seed)
    out = compute_advantage_for_multi_trajectories(data, batch_keys=keys, adv_estimator=algo.adv_estimator,
                                                   norm_adv_by_std_in_grpo=True, config=algo,
                                                   num_repeat=8)
    return out


def _algo(est, **extra):
    return OmegaConf.create({"adv_estimator": est, "use_pf_ppo": True, "norm_adv_by_std_in_grpo": True,
                             "pf_ppo": {"reweight_method": "pow", "weight_pow": 2.0}, "gamma": 1.0, "lam": 1.0,
                             "focal": {"gamma": 0.5}, **extra})


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("est,base,gamma", [("f_grpo", "grpo", 0.5), ("grpo", "grpo", 0.0)])
def test_with_use_pf_ppo_each_row_keeps_its_own_groups_advantage_on_the_v1_path(seed, est, base, gamma):
    rewards, mask, index = make_grouped_batch(seed, SIZES, n_padding=2, length=6)
    out = _v1_advantages(rewards, mask, index, _algo(est), seed)
    assert list(out.non_tensor_batch["uid"]) == list(index)  # no resampling: the rows are where they were
    valid = (mask.sum(-1) > 0).tolist()
    ref = reference_advantages(rewards.sum(-1).tolist(), index, valid, base=base, gamma=gamma)
    expected = torch.tensor(ref, dtype=torch.float32).unsqueeze(-1) * mask
    assert torch.allclose(out.batch["advantages"], expected, rtol=1e-5, atol=1e-5)


def test_gae_with_use_pf_ppo_reorders_rows_which_v1_writes_back_in_the_old_order():
    """The bug itself (#7956): GAE's pass returns resampled rows; the v1 trainer puts them under the old keys."""
    g = torch.Generator().manual_seed(0)
    n, length = 16, 4
    rewards = torch.zeros(n, length)
    rewards[:, -1] = torch.rand(n, generator=g) * 2 - 1
    mask = torch.ones(n, length)
    index = np.array([f"p{i // 4}" for i in range(n)], dtype=object)
    data = DataProto.from_dict(tensors={"token_level_rewards": rewards.clone(), "token_level_scores": rewards.clone(),
                                        "response_mask": mask, "values": torch.zeros(n, length)},
                               non_tensors={"uid": index, "row": np.arange(n)})
    torch.manual_seed(0)
    out = compute_advantage_for_multi_trajectories(data, batch_keys=[f"{u}_{i}_0" for i, u in enumerate(index)],
                                                   adv_estimator="gae", config=_algo("gae"))
    assert list(out.non_tensor_batch["row"]) != list(range(n))  # rows resampled: row i's slot holds another row


@pytest.mark.parametrize("est,use_v1,needle", [
    ("f_grpo", True, "algorithm.use_pf_ppo=true: verl 0.9.1 resamples rows by reward only for gae"),
    ("grpo", False, "with algorithm.adv_estimator=grpo nothing reads it"),
    ("gae", True, "verl issue #7956"),
])
def test_start_up_refuses_use_pf_ppo_where_nothing_reads_it_or_it_mis_pairs(composed_config, est, use_v1, needle):
    from verl_focal.config.errors import ConfigError
    from verl_focal.integration.startup.validate import validate_start

    cfg = composed_config([f"algorithm.adv_estimator={est}", "algorithm.use_pf_ppo=true",
                           f"trainer.use_v1={str(use_v1).lower()}"])
    with pytest.raises(ConfigError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        validate_start(cfg)
