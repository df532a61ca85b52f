"""Keys the user sets that nothing will read: refused at start-up, or warned about where verl's schema allows free keys.

One rule for the class, with a did-you-mean that also searches by leaf name (``adv_estimator`` ->
``algorithm.adv_estimator``; the upstream F-GRPO PR's ``algorithm.f_grpo_gamma`` -> ``algorithm.focal.gamma``).
The known keys come from the composed config itself (verl's schema and our sections), never from a copied list,
so a new namespace of ours or of verl's is known as soon as it is in the config:

* a key Hydra refuses (not in verl's struct config): :func:`~verl_focal.config.key_names.unknown_key_message`;
* :func:`check_unread`: ``+``-added keys that verl's schema does not have (refused under ``algorithm.``,
  ``reward.``, the trainer sections and at the top level, warned about elsewhere; silent inside a free-keys dict
  such as ``reward.custom_reward_function.reward_kwargs``), the legacy blocks of verl's
  ``legacy_reward_impl.yaml`` (top-level ``custom_reward_function``, ``reward_model.*``, ``sandbox_fusion``), which
  verl 0.9.1 migrates only in its fully_async trainer, and :func:`unread_keys`;
* :func:`unread_keys`: keys of our sections that the chosen estimator does not read (refused, naming the readers);
* :func:`~.liveness.dead_key_findings`: verl's keys that verl reads only under a condition this
  config does not meet (the liveness table, :mod:`verl_focal.integration.startup.liveness`).

No verl import.
"""

from __future__ import annotations

from typing import Any

from verl_focal.config.errors import ConfigError
from verl_focal.config.key_names import MISSING as _MISSING
from verl_focal.config.key_names import adds_kwargs as _adds_kwargs
from verl_focal.config.key_names import config_get, suggest_key
from verl_focal.config.key_names import free_keys as _free
from verl_focal.config.key_names import get as _get
from verl_focal.config.key_names import plain as _plain
from verl_focal.integration.startup.compose import legacy_blocks
from verl_focal.integration.startup.liveness import dead_key_findings
from verl_focal.integration.startup.reads import reads_here, run_estimator

__all__ = ["check_unread", "declared_field", "reads_here", "unread_keys", "REFUSED_ZONES"]

#: where an added key nothing reads is refused (elsewhere: warned); "" is the top level
REFUSED_ZONES = ("algorithm", "reward", "trainer", "async_training")
#: the trainers in which verl migrates its legacy reward blocks
#: (verl.experimental.reward_loop.migrate_legacy_reward_impl)
_MIGRATES_LEGACY = ("fully_async",)


def _zone(key: str, tree: dict) -> str:
    first = key.split(".")[0]
    return first if first in tree else ""


def _value_of(override: str) -> str | None:
    return override.split("=", 1)[1] if "=" in override else None


def check_unread(config: Any, overrides: list[str], trainer: str = "ppo",
                 base: Any = None) -> list[str]:
    """Refuse (ConfigError) the keys the user set that nothing will read; return the warning lines.

    ``base``: the config composed without the user's overrides (composed here when a ``+`` key needs it).
    """
    from verl_focal.config.schema import SECTIONS
    from verl_focal.estimators import sections_by_estimator

    given = [o for o in overrides if "=" in o and not o.lstrip("+~").startswith("hydra")]
    keys = [(o.split("=", 1)[0], _value_of(o)) for o in given]
    legacy = legacy_blocks()
    ours = sections_by_estimator()
    problems: list[str] = []
    warnings: list[str] = []
    tree = None

    def base_tree() -> dict:
        nonlocal tree, base
        if tree is None:
            if base is None:
                from verl_focal.integration.startup.compose import compose_config

                groups = [o for o in overrides if o.startswith("+") and "." not in o.split("=", 1)[0]
                          and config_get(config, o.split("=", 1)[0].lstrip("+"), _MISSING) is _MISSING]
                base = compose_config(groups, trainer=trainer)
            tree = _plain(base)
        return tree

    def live(path: str, _tree: Any) -> bool:  # what this run reads: the user's config, not the base tree
        return reads_here(path, config)

    for raw, value in keys:
        key = raw.lstrip("+~")
        if raw.startswith("~") or value in (None, "null"):
            continue
        first = key.split(".")[0]
        if first in legacy and trainer not in _MIGRATES_LEGACY:
            meant = suggest_key(key, base_tree(), value, exclude=legacy, estimators=ours, live=live)
            fix = f"; write {meant}={value}" if meant else "; its settings live under reward."
            problems.append(f"{key}: a legacy key of verl's (legacy_reward_impl.yaml) that verl 0.9.1's {trainer} "
                            f"trainer never reads (verl would score with its default reward){fix}")
            continue
        if not raw.startswith("+") or "." not in key and config_get(config, key, _MISSING) is _MISSING:
            continue  # an existing key (Hydra refused the unknown ones), or a config group (+recipe=deepscaler)
        parts = key.split(".")
        if parts[0] == "algorithm" and len(parts) > 2 and parts[1] in SECTIONS:
            continue  # our sections: their schema refuses an unknown key (with a did-you-mean)
        t = base_tree()
        if _get(t, key) is not _MISSING:
            continue
        anc = ".".join(parts[:-1])
        while anc and _get(t, anc) is _MISSING:
            anc = anc.rpartition(".")[0]
        if anc and _free(anc, _get(t, anc)) or _adds_kwargs(key, anc):
            continue  # a free-keys dict: adding keys is what it is for
        if declared_field(t, key):
            continue  # a field of the section's dataclass that its YAML leaves out (verl reads it)
        meant = suggest_key(key, t, value, exclude=legacy, estimators=ours, live=live)
        hint = f" (did you mean {meant!r}?)" if meant else ""
        if _zone(key, t) in ("", *REFUSED_ZONES):
            fix = f"write {meant}={value}" if meant else f"remove +{key}"
            problems.append(f"+{key}: verl's config has no {key}{hint}, and nothing reads it: the run would go on "
                            f"as if it were not set; {fix}")
        else:
            warnings.append(f"+{key} is not a key of verl's config{hint}: only code that looks it up by name "
                            "reads it")
    # keys that exist but that verl reads only under a condition this config does not meet (startup/liveness.py)
    dead, harmless = dead_key_findings(config, [(raw.lstrip("+~"), value) for raw, value in keys
                                                if not raw.startswith("~") and value not in (None, "null")])
    problems += dead
    warnings += harmless
    problems += unread_keys(config, overrides)
    if problems:
        raise ConfigError("; ".join(problems))
    return warnings


def declared_field(tree: dict, key: str) -> bool:
    """Whether ``key`` is a field of the dataclass that its nearest section in ``tree`` names in ``_target_`` (verl's
    config classes declare fields their YAML leaves out: ``algorithm.gdpo_reward_keys``, ``fsdp_config.
    mixed_precision``), or lies inside such a field typed as a free dict.  The class is imported (verl's)."""
    import dataclasses
    import importlib

    parts = key.split(".")
    for i in range(len(parts) - 1, 0, -1):
        node = _get(tree, ".".join(parts[:i]))
        if node is _MISSING or not isinstance(node, dict):
            continue
        target = node.get("_target_")
        if not isinstance(target, str) or "." not in target:
            return False
        module, _, name = target.rpartition(".")
        try:
            cls = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            return False
        if not dataclasses.is_dataclass(cls):
            return False
        fields = {f.name: str(f.type) for f in dataclasses.fields(cls)}
        field = parts[i]
        if field not in fields:
            return False
        return i == len(parts) - 1 or "dict" in fields[field].lower() or fields[field] in ("Any", "typing.Any")
    return False


def unread_keys(config: Any, overrides: list[str]) -> list[str]:
    """One line for each override of one of our sections (``algorithm.focal.*``, ...) that the run's estimator
    (one of ours, or verl's, which read none) does not read (:meth:`~verl_focal.estimators.spec.EstimatorSpec.reads`),
    naming the estimators that do.  Needs no verl import."""
    from verl_focal.config.schema import SECTIONS
    from verl_focal.estimators import all_specs

    est, spec = run_estimator(config)
    out = []
    for o in dict.fromkeys(o.split("=", 1)[0].lstrip("+~") for o in overrides if not o.startswith("~")):
        parts = o.split(".")
        if len(parts) >= 3 and parts[0] == "algorithm" and parts[1] in SECTIONS:
            if spec is None or not spec.reads(parts[1], parts[2]):
                readers = [s.name for s in all_specs() if s.reads(parts[1], parts[2])]
                out.append(f"{o} is set, but algorithm.adv_estimator={est} does not read it, so it would have no "
                           f"effect; remove it, or train an estimator that reads it ({', '.join(readers)})")
    return out
