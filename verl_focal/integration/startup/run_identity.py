"""A launch never resumes from checkpoints that a run with another configuration wrote.

verl's ``trainer.resume_mode: auto`` resumes from the newest checkpoint in ``trainer.default_local_dir``, whatever
run wrote it: the later "seeds" of a seed loop that share one folder (a misspelt ``SEED``, one ``EXP_NAME``) would
each continue the first seed's run.  A launch therefore writes the run's identifying configuration
(:func:`identity`: the seeds, the estimator and its section, the training data, the model and the settings a control
changes) to :data:`RECORD` in that folder, and a later launch into a folder that holds checkpoints and a record of
another configuration is refused, naming the keys that differ and the fix.  A dry run checks, and writes nothing.

A record without checkpoints beside it (a launch that stopped before its first save) is simply replaced.
No verl import.
"""

from __future__ import annotations

import json
import os
from typing import Any

from verl_focal.config.errors import ConfigError
from verl_focal.config.key_names import config_get

__all__ = ["RECORD", "IDENTITY_KEYS", "identity", "check_run_identity", "holds_checkpoints"]

#: the record's file name, next to verl's checkpoints (global_step_N/, latest_checkpointed_iteration.txt)
RECORD = "verl_focal_run.json"

#: what makes two runs different runs: the seeds, the data, the model, the estimator (its section is added by
#: :func:`identity`) and the settings a control family changes (group size, learning rate, loss, clipping, KL,
#: entropy, the group filter, the batch).  The length of training (epochs, steps) is not here: resuming a run to
#: train it longer is what resume is for.
IDENTITY_KEYS = (
    "data.seed",
    "actor_rollout_ref.rollout.seed",
    "actor_rollout_ref.actor.data_loader_seed",
    "data.train_files",
    "data.train_batch_size",
    "actor_rollout_ref.model.path",
    "algorithm.adv_estimator",
    "actor_rollout_ref.rollout.n",
    "actor_rollout_ref.actor.optim.lr",
    "actor_rollout_ref.actor.policy_loss.loss_mode",
    "actor_rollout_ref.actor.clip_ratio_low",
    "actor_rollout_ref.actor.clip_ratio_high",
    "actor_rollout_ref.actor.use_kl_loss",
    "actor_rollout_ref.actor.kl_loss_coef",
    "actor_rollout_ref.actor.entropy_coeff",
    "algorithm.filter_groups.enable",
)


def _get(config: Any, key: str) -> Any:
    from omegaconf import DictConfig, ListConfig, OmegaConf

    val = config_get(config, key)
    if isinstance(val, (DictConfig, ListConfig)):
        return OmegaConf.to_container(val, resolve=True)
    return val


def _sections(estimator: str) -> list[str]:
    """The ``algorithm.*`` sections the estimator reads (ours); none for verl's own estimators."""
    try:
        from verl_focal.estimators import sections_by_estimator

        return sorted(sections_by_estimator().get(estimator, ()))
    except Exception:  # noqa: BLE001 - the record then holds the estimator's name only
        return []


def identity(config: Any) -> dict[str, Any]:
    """The run's identifying configuration: :data:`IDENTITY_KEYS` and the estimator's ``algorithm.*`` section(s),
    resolved, as JSON values (a one-file ``data.train_files`` list is its file)."""
    out = {k: _get(config, k) for k in IDENTITY_KEYS}
    for section in _sections(str(out["algorithm.adv_estimator"])):
        out[f"algorithm.{section}"] = _get(config, f"algorithm.{section}")
    files = out["data.train_files"]
    if isinstance(files, list) and len(files) == 1:
        out["data.train_files"] = files[0]
    return json.loads(json.dumps(out, default=str))


def holds_checkpoints(folder: str) -> bool:
    """verl wrote a checkpoint here: its tracker file or a ``global_step_N`` folder."""
    if os.path.isfile(os.path.join(folder, "latest_checkpointed_iteration.txt")):
        return True
    try:
        return any(n.startswith("global_step_") for n in os.listdir(folder))
    except OSError:
        return False


_ABSENT = object()


def _show(v: Any) -> str:
    if v is _ABSENT:  # an estimator's section that the other run's estimator does not read
        return "not read"
    return json.dumps(v) if isinstance(v, (dict, list)) or v is None else str(v)


def _explicit_resume_lines(checkpoint: str, mine: dict[str, Any]) -> list[str]:
    """``trainer.resume_mode=resume_path``: the user chose the checkpoint, so a run of another configuration there
    is named in a warning (the keys that differ), not refused."""
    for folder in (os.path.dirname(checkpoint.rstrip(os.sep)), checkpoint):  # .../run/global_step_N, or .../run
        path = os.path.join(folder, RECORD)
        try:
            with open(path, encoding="utf-8") as fh:
                theirs = json.load(fh).get("identity", {})
        except (OSError, ValueError, AttributeError):
            continue
        diff = [k for k in sorted(mine.keys() | theirs.keys()) if mine.get(k, _ABSENT) != theirs.get(k, _ABSENT)]
        if not diff:
            return []
        shown = "; ".join(f"{k}: {_show(theirs.get(k, _ABSENT))} there, {_show(mine.get(k, _ABSENT))} here"
                          for k in diff[:6])
        more = f" (and {len(diff) - 6} more)" if len(diff) > 6 else ""
        return [f"trainer.resume_from_path={checkpoint} is a checkpoint of a run with another configuration ({path}): "
                f"{shown}{more}; this run resumes from it as asked"]
    return []


def check_run_identity(config: Any, write: bool) -> list[str]:
    """Refuse a run whose ``trainer.default_local_dir`` holds checkpoints of a run with another :func:`identity`
    (under ``trainer.resume_mode=auto``, which would resume from them); with ``write`` (a launch, not a dry run),
    record this run's identity there.  Returns warning lines (checkpoints without a record; under
    ``resume_mode=resume_path``, a chosen checkpoint of another configuration)."""
    folder = _get(config, "trainer.default_local_dir")
    mode = str(_get(config, "trainer.resume_mode") or "auto")
    if not folder or "://" in str(folder):
        return []
    folder = os.path.abspath(os.path.expanduser(str(folder)))
    path = os.path.join(folder, RECORD)
    mine = identity(config)
    warnings: list[str] = []
    if mode == "auto" and holds_checkpoints(folder):
        try:
            with open(path, encoding="utf-8") as fh:
                theirs = json.load(fh).get("identity", {})
        except FileNotFoundError:
            theirs = None
        except (OSError, ValueError, AttributeError) as e:
            raise ConfigError(f"trainer.default_local_dir={folder}: cannot read {RECORD} ({e}); remove it if the "
                              "checkpoints there are this run's, or give this run its own folder") from None
        if theirs is None:
            warnings.append(f"trainer.default_local_dir={folder} holds checkpoints without a {RECORD} (written before "
                            "verl-focal recorded runs): trainer.resume_mode=auto resumes from them whatever run wrote "
                            "them")
        else:
            diff = [k for k in sorted(mine.keys() | theirs.keys()) if mine.get(k, _ABSENT) != theirs.get(k, _ABSENT)]
            if diff:
                shown = "; ".join(f"{k}: {_show(theirs.get(k, _ABSENT))} there, {_show(mine.get(k, _ABSENT))} here"
                                  for k in diff[:6])
                more = f" (and {len(diff) - 6} more)" if len(diff) > 6 else ""
                raise ConfigError(
                    f"trainer.default_local_dir={folder} holds checkpoints of another run ({path}): {shown}{more}; "
                    "with trainer.resume_mode=auto this run would resume from that run's checkpoint: give this run "
                    "its own folder (trainer.experiment_name and trainer.default_local_dir; recipes: EXP_NAME, or "
                    "SEED, which names the folder), or set trainer.resume_mode=disable to start afresh there")
    resume_from = _get(config, "trainer.resume_from_path")
    if mode == "resume_path" and resume_from and "://" not in str(resume_from):
        warnings += _explicit_resume_lines(os.path.abspath(os.path.expanduser(str(resume_from))), mine)
    if write:
        os.makedirs(folder, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            json.dump({"written_by": "verl-focal", "experiment_name": _get(config, "trainer.experiment_name"),
                       "identity": mine}, fh, indent=1, sort_keys=True)
            fh.write("\n")
    return warnings
