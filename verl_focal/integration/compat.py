"""The verl contract: every verl symbol verl-focal relies on, checked by name.

The pin itself lives only in ``pyproject.toml`` (``verl[verl-core]==X``);
:func:`pinned_verl_spec` reads it back from the installed metadata.  If the
installed verl lacks a symbol listed here, :func:`require_contract` raises an
ImportError that names the symbol and the fix, instead of a confusing failure
at step 1.

What verl-focal *replaces* in verl is listed apart: the trainer methods the hook
overrides (:data:`TRAINER_METHODS`) and the module functions the legacy hook
wraps (:data:`LEGACY_WRAPPED`).  No verl import at module level.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import warnings
from pathlib import Path

__all__ = [
    "LIGHT_CONTRACT",
    "FULL_CONTRACT",
    "TRAINER_METHODS",
    "LEGACY_WRAPPED",
    "pinned_verl_spec",
    "check_contract",
    "require_contract",
]

#: symbols needed to register and run the estimators (cheap to import)
LIGHT_CONTRACT: dict[str, tuple[str, ...]] = {
    "verl.trainer.ppo.core_algos": (
        "register_adv_est",
        "get_adv_estimator_fn",
        "ADV_ESTIMATOR_REGISTRY",
        "compute_grpo_outcome_advantage",
        "agg_loss",
        "get_policy_loss_fn",
    ),
}

#: symbols the trainer hook and the entry point need (imports verl's trainers)
FULL_CONTRACT: dict[str, tuple[str, ...]] = {
    **LIGHT_CONTRACT,
    "verl.protocol": ("DataProto",),
    "verl.trainer.ppo.ray_trainer": ("compute_advantage", "compute_data_metrics"),
    "verl.trainer.ppo.v1.trainer_base": ("PPOTrainer", "register_trainer", "get_trainer_cls", "TRAINER_REGISTRY",
                                         "compute_advantage_for_multi_trajectories"),
    "verl.trainer.ppo.v1.utils": ("compute_advantage",),
    "verl.trainer.ppo.utils": ("need_critic", "need_reference_policy"),
    "verl.trainer.main_ppo": ("run_ppo", "TaskRunnerV1"),
    "verl.trainer.main_ppo_v0": ("TaskRunner",),
    "verl.utils.config": ("validate_config", "omega_conf_to_dataclass"),
    "verl.utils.device": ("auto_set_device",),
    "transfer_queue": ("kv_batch_get", "kv_batch_put"),
    "verl.experimental.separation.ray_trainer": ("compute_advantage", "SeparateRayPPOTrainer"),
}

#: symbols ``--trainer one_step_off`` / ``fully_async`` need (imported only when that trainer runs)
SEPARATED_CONTRACT: dict[str, tuple[str, ...]] = {
    "verl.experimental.one_step_off_policy.main_ppo": ("OneStepTaskRunner",),
    "verl.experimental.fully_async_policy.fully_async_main": ("FullyAsyncTaskRunner",),
    "verl.experimental.reward_loop": ("migrate_legacy_reward_impl",),
}

# What verl-focal replaces in verl (everything else above it only calls):

#: methods of verl's v1 ``PPOTrainer`` that ``FocalHookMixin`` (integration/trainer.py) overrides
TRAINER_METHODS = ("__init__", "_build_replay_buffer", "_compute_old_log_prob", "_compute_advantage",
                   "_val_metrics_update")

#: module functions that the DataProto trainers' hook (``integration/dataproto_hook.py``) wraps, by module
LEGACY_WRAPPED: dict[str, tuple[str, ...]] = {
    "verl.trainer.ppo.ray_trainer": ("compute_advantage", "compute_data_metrics"),
    "verl.experimental.separation.ray_trainer": ("compute_advantage",),
}

#: module functions that the v1 hook wraps (the final-output rule for agent sessions, integration/sessions.py)
V1_WRAPPED: dict[str, tuple[str, ...]] = {
    "verl.trainer.ppo.v1.trainer_base": ("compute_advantage_for_multi_trajectories",),
}

#: methods of verl's ``SeparateRayPPOTrainer`` (one-step-off, fully-async) that the hook wraps
SEPARATED_METHODS = ("_fit_compute_advantage",)


def pinned_verl_spec() -> str | None:
    """The verl requirement string from our package metadata (or pyproject.toml in a source checkout)."""
    try:
        reqs = importlib.metadata.requires("verl-focal") or []
    except importlib.metadata.PackageNotFoundError:
        reqs = []
        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        if pyproject.exists():
            import tomllib

            reqs = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    for r in reqs:
        name = r.split(";")[0].split("[")[0].split("=")[0].split(">")[0].split("<")[0].strip()
        if name == "verl":
            return r.split(";")[0].strip()
    return None


def check_contract(full: bool = False) -> list[str]:
    """Return a list of human-readable problems (empty when the contract holds)."""
    problems: list[str] = []
    for mod_name, names in (FULL_CONTRACT if full else LIGHT_CONTRACT).items():
        try:
            mod = importlib.import_module(mod_name)
        except Exception as e:  # noqa: BLE001
            problems.append(f"cannot import {mod_name}: {type(e).__name__}: {e}")
            continue
        for n in names:
            if not hasattr(mod, n):
                problems.append(f"{mod_name}.{n} is missing")
    if full and not problems:
        from verl.trainer.ppo.v1.trainer_base import PPOTrainer

        for m in TRAINER_METHODS:
            if not hasattr(PPOTrainer, m):
                problems.append(f"verl.trainer.ppo.v1.trainer_base.PPOTrainer.{m} is missing")
        from verl.experimental.separation.ray_trainer import SeparateRayPPOTrainer

        for m in SEPARATED_METHODS:
            if not hasattr(SeparateRayPPOTrainer, m):
                problems.append(f"verl.experimental.separation.ray_trainer.SeparateRayPPOTrainer.{m} is missing")
    return problems


def require_contract(full: bool = False) -> None:
    """Raise ImportError (listing every broken symbol) unless the installed verl honours our contract."""
    import verl

    spec = pinned_verl_spec()
    installed = getattr(verl, "__version__", "?")
    if spec and "==" in spec and spec.split("==")[1].strip() != installed:
        warnings.warn(
            f"verl-focal is tested against {spec} but verl {installed} is installed; "
            f"run `pip install '{spec}'` if anything misbehaves",
            stacklevel=2,
        )
    problems = check_contract(full)
    if problems:
        raise ImportError(
            f"the installed verl {installed} breaks verl-focal's contract ({spec or 'verl pin unknown'}):\n  - "
            + "\n  - ".join(problems)
            + f"\nInstall the pinned version: pip install '{spec or 'verl==0.9.1'}'"
        )
