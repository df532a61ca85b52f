"""One table of hooked trainer modes (integration/hooks/modes.py), used by the trainer and the TaskRunner."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf
from verl.trainer.ppo.v1.trainer_base import get_trainer_cls

from verl_focal.integration.hooks.modes import HOOKED_MODES, hooked_mode
from verl_focal.integration.hooks.runner import select_hooked_mode
from verl_focal.integration.hooks.trainer import FocalHookMixin, hooked_trainer_cls


def test_each_verl_mode_maps_to_a_registered_hooked_trainer_on_the_same_base():
    for base, ours in HOOKED_MODES.items():
        assert hooked_mode(base) == hooked_mode(ours) == ours
        cls = hooked_trainer_cls(base)
        assert cls is hooked_trainer_cls(ours) is get_trainer_cls(ours)
        assert issubclass(cls, FocalHookMixin) and issubclass(cls, get_trainer_cls(base))
        assert cls._focal_base_mode == base


def test_runner_switches_the_config_to_the_hooked_mode():
    cfg = OmegaConf.create({"trainer": {"v1": {"trainer_mode": "colocate_async"}}})
    OmegaConf.set_struct(cfg, True)
    assert select_hooked_mode(cfg) == "focal_colocate_async" == cfg.trainer.v1.trainer_mode
    assert select_hooked_mode(cfg) == "focal_colocate_async"  # already ours: unchanged


def test_unknown_mode_is_named_with_the_choices():
    for call in (hooked_mode, hooked_trainer_cls,
                 lambda m: select_hooked_mode(OmegaConf.create({"trainer": {"v1": {"trainer_mode": m}}}))):
        with pytest.raises(ValueError, match=r"trainer_mode='turbo'.*\['colocate_async', 'separate_async', 'sync'\]"):
            call("turbo")
