"""Shared fixtures.  Expected values in tests are computed here from the spec's
formulas with plain Python loops (independent of the vectorised implementation)."""

from __future__ import annotations

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))  # for tests/_reference.py

from _reference import make_grouped_batch  # noqa: E402


@pytest.fixture
def grouped_batch():
    return make_grouped_batch


@pytest.fixture(scope="session")
def composed_config():
    """Our packaged config composed once per session (Hydra + verl's real ppo_trainer.yaml)."""
    from verl_focal.main_ppo import compose_config

    def _compose(overrides=()):
        return compose_config(list(overrides))

    return _compose

