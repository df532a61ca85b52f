"""Shared fixtures.  Expected values in tests are computed here from the formulas
of docs/methods.md with plain Python loops (independent of the vectorised implementation)."""

from __future__ import annotations

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))  # for tests/_reference.py

from _reference import make_grouped_batch  # noqa: E402

# The suite composes verl's default trainer.logger=[console, wandb] everywhere, and start-up refuses wandb without
# a key (startup/tracking.check_logger).  W&B's offline mode stands in for a configured key in this process
# and its subprocesses; tests/startup/test_logger_preflight.py removes it to check the refusal.
if not any(k in os.environ for k in ("WANDB_MODE", "WANDB_API_KEY", "WANDB_DISABLED")):
    os.environ["WANDB_MODE"] = "offline"


@pytest.fixture
def grouped_batch():
    return make_grouped_batch


@pytest.fixture(scope="session")
def composed_config():
    """Our packaged config composed once per session (Hydra + verl's real ppo_trainer.yaml)."""
    from verl_focal.integration.startup.compose import compose_config

    def _compose(overrides=()):
        return compose_config(list(overrides))

    return _compose



@pytest.fixture(scope="session")
def transfer_queue(composed_config):
    """A real TransferQueue on a local Ray cluster (one storage unit), shared by the tests of the v1 hook."""
    import transfer_queue as tq  # a hard dependency (verl's verl-core extra): a missing one must fail, not skip

    from verl_harness import start_transfer_queue, stop_transfer_queue

    started = start_transfer_queue(composed_config(["transfer_queue.backend.SimpleStorage.num_data_storage_units=1"]))
    yield tq
    stop_transfer_queue(started)


@pytest.fixture
def legacy_hook(monkeypatch):
    """``install(tokenizer)``: what our legacy TaskRunner does in its actor (the tokenizer for texts, verl's
    ``compute_data_metrics`` wrapped to log the step's metrics); undone after the test."""
    from verl.trainer.ppo import ray_trainer

    from verl_focal.integration import dataproto_hook

    monkeypatch.setattr(ray_trainer, "compute_data_metrics", ray_trainer.compute_data_metrics)
    monkeypatch.setattr(dataproto_hook, "_LEGACY", {})

    def install(tokenizer=None):
        dataproto_hook.install_legacy_hook(lambda: tokenizer)
        return tokenizer

    return install
