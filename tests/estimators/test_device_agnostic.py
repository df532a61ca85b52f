"""Every estimator of ours keeps the input's device and dtype (docs/gpu.md; finding 5 and 10 of the GPU audit).

No GPU is needed: a ``TorchFunctionMode`` records every tensor factory call (``torch.zeros``, ``torch.tensor``,
...) that code of the package makes without ``device=``.  Such a tensor lands on the CPU whatever the inputs'
device, and meets CUDA inputs a line later.  Each estimator runs the whole hook sequence (prepare, then the
estimator) on CPU inputs with a full context -- ``acc``, texts, problems and the old log-prob columns -- under
that probe.  ``torch.as_tensor(tensor)`` keeps its argument's device and is not a site.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf
from torch.overrides import TorchFunctionMode

import verl_focal
from _reference import make_grouped_batch
from verl_focal.estimators import all_specs
from verl_focal.estimators.context import AdvantageContext
from verl_focal.estimators.old_log_probs import sequence_log_prob_columns
from verl_focal.step.seam import AdvantageStep

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "partition"))
import cue_corpus  # noqa: E402

PACKAGE = str(Path(verl_focal.__file__).resolve().parent) + "/"
FACTORIES = {torch.zeros, torch.ones, torch.empty, torch.full, torch.arange, torch.tensor, torch.as_tensor,
             torch.rand, torch.randn, torch.randint, torch.linspace, torch.eye}
SIZES = [8, 3, 8, 5, 4, 8]


class NoDeviceFactory(TorchFunctionMode):
    """Records ``path:line`` (relative to the package) of every factory call made directly by package code
    without ``device=`` (a call from torch's or verl's own code is theirs, whoever called it)."""

    def __init__(self) -> None:
        super().__init__()
        self.sites: set[str] = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in FACTORIES and kwargs.get("device") is None and not (
                func is torch.as_tensor and args and isinstance(args[0], torch.Tensor)):
            caller = sys._getframe(1)
            path = str(Path(caller.f_code.co_filename).resolve())
            if path.startswith(PACKAGE):
                self.sites.add(f"{path[len(PACKAGE):]}:{caller.f_lineno}")
        return func(*args, **kwargs)


def _algo(name: str):
    return OmegaConf.create({"adv_estimator": name, "norm_adv_by_std_in_grpo": True,
                             "focal": {"gamma": 1.0}, "passk": {"k": 2}, "cue": {"alpha": 0.8}})


def _case(seed: int, rewards_dtype: torch.dtype, mask_dtype: torch.dtype):
    """A batch with uneven groups and padding rows, and the context the hook builds for it."""
    rewards, mask, index = make_grouped_batch(seed, SIZES, n_padding=3, length=7)
    rng = np.random.default_rng(seed)
    old_lp = torch.as_tensor(rng.uniform(-3.0, -0.01, size=mask.shape), dtype=torch.float32) * mask
    texts = cue_corpus.all_texts()
    acc = (rewards.sum(-1) > 0.5).double().numpy()
    ctx = AdvantageContext(uids=index, acc=acc, responses=[texts[i % len(texts)] for i in range(len(index))],
                           problems=[f"problem {u}" for u in index], source="test")
    ctx.extras.update(sequence_log_prob_columns(old_lp, mask))
    return rewards.to(rewards_dtype), mask.to(mask_dtype), index, ctx


@pytest.mark.parametrize("mask_dtype", [torch.int64, torch.bool, torch.float32], ids=["int", "bool", "fp32-mask"])
@pytest.mark.parametrize("rewards_dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("spec", all_specs(), ids=lambda s: s.name)
def test_no_tensor_is_made_off_the_inputs_device(spec, rewards_dtype, mask_dtype):
    rewards, mask, index, ctx = _case(0, rewards_dtype, mask_dtype)
    algo = _algo(spec.name)
    step = AdvantageStep(spec, algo)
    assert step.needs - {"acc", "responses", "problems", "old_log_probs", "cue_sig"} == set()
    probe = NoDeviceFactory()
    with probe:
        adv, ret = step.run(ctx, lambda: spec.fn(rewards, mask, algo, index, ctx=ctx))
    assert probe.sites == set()
    # as verl's grpo: the rewards' dtype, promoted with a floating mask's (bf16 rewards x fp32 mask -> fp32)
    assert adv.device == rewards.device and adv.shape == rewards.shape
    assert adv.dtype == torch.promote_types(rewards_dtype, mask_dtype)
    assert bool(adv.abs().sum() > 0)  # the estimator acted: the batch has mixed groups
    assert adv[mask.to(torch.bool) == 0].abs().max().item() == 0.0


def test_the_probe_sees_a_site_without_device():
    """The probe itself: a package-level call without ``device=`` is recorded, with its line; one with it is not."""
    from verl_focal.core import groups

    probe = NoDeviceFactory()
    with probe:
        groups.segment_sum(torch.ones(3), torch.tensor([0, 1, 1]), 2)  # zeros(..., device=values.device)
        exec(compile("import torch\ntorch.zeros(2)\n", PACKAGE + "fake.py", "exec"))
    assert probe.sites == {"fake.py:2"}


def test_focal_diagnostics_reach_past_the_quantile_on_meta_tensors():
    """``torch.quantile`` needs ``q`` on the input's device; on ``meta`` the function must get past it to its
    first host read (``float(...)``), which no tensor on ``meta`` allows."""
    from verl_focal.estimators.focal import focal_diagnostics

    p_hat = torch.rand(4, dtype=torch.float64, device="meta")
    n = torch.tensor([4.0, 3.0, 0.0, 2.0])
    with pytest.raises(RuntimeError, match=r"Tensor.item\(\) cannot be called on meta tensors"):
        focal_diagnostics(None, p_hat, n, torch.ones(4, device="meta"))


# ----------------------------------------------------------------- finding 10: the row sum's dtype
def test_bf16_dense_rewards_are_summed_in_float64():
    """257 tokens of reward 1 sum to 257, which bf16 cannot hold (it rounds to 256): a row sum taken in the
    rewards' dtype would tie the two rows of the group, and GRPO would give both 0.  Summed in float64 the rows
    score 257 and 256, and GRPO gives ±1/√2 / (1 + ε·√2) (sample std 1/√2)."""
    from verl_focal.estimators.focal import compute_f_grpo_advantage

    rewards = torch.zeros(2, 300, dtype=torch.bfloat16)
    rewards[0, :257] = 1.0
    rewards[1, :256] = 1.0
    assert rewards.sum(-1).tolist() == [256.0, 256.0]  # what bf16 arithmetic gives
    mask = torch.ones(2, 300, dtype=torch.int64)
    algo = OmegaConf.create({"norm_adv_by_std_in_grpo": True, "focal": {"gamma": 0.0, "correctness": "reward"}})
    adv, _ = compute_f_grpo_advantage(rewards, mask, algo, np.array(["g", "g"], dtype=object))
    std = (0.5 ** 0.5)
    expected = 0.5 / (std + 1e-6)
    assert adv.dtype == torch.bfloat16
    assert adv[:, 0].float().tolist() == pytest.approx([expected, -expected], rel=1e-2)


class _FakeCuda(torch.Tensor):
    """A CPU tensor that refuses ``.numpy()`` as a CUDA tensor does, until ``.cpu()`` is called."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.Tensor.numpy:
            raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                            "to host memory first.")
        if func is torch.Tensor.cpu:
            return args[0].as_subclass(torch.Tensor).clone()
        return super().__torch_function__(func, types, args, kwargs)


def test_dataproto_response_ids_are_copied_to_the_host_first():
    from verl_focal.step.rows import dataproto_rows

    resp = torch.tensor([[5, 6, 7], [8, 9, 0]]).as_subclass(_FakeCuda)
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]]).as_subclass(_FakeCuda)
    with pytest.raises(TypeError, match="cuda:0"):
        resp[0].numpy()  # the fake refuses, as CUDA does
    tensors = {"responses": resp, "response_mask": mask}
    rows = dataproto_rows(tensors, {"uid": np.array(["a", "b"], dtype=object)}, decode=None)
    got = rows.response_ids(np.array([1, 0]))
    assert [r.tolist() for r in got] == [[8, 9, 0], [5, 6]]
    assert all(type(r) is np.ndarray for r in got)
