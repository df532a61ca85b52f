"""Keys the user sets that nothing will read: refused at start-up, or warned about where verl's schema allows free keys.

One rule for the class, with a did-you-mean that also searches by leaf name (``adv_estimator`` ->
``algorithm.adv_estimator``; the upstream F-GRPO PR's ``algorithm.f_grpo_gamma`` -> ``algorithm.focal.gamma``).
The known keys come from the composed config itself (verl's schema and our sections), never from a copied list,
so a new namespace of ours or of verl's is known as soon as it is in the config:

* :func:`unknown_key_message`: a key Hydra refuses (not in verl's struct config);
* :func:`check_unread`: ``+``-added keys that verl's schema does not have (refused under ``algorithm.``,
  ``reward.``, the trainer sections and at the top level, warned about elsewhere; silent inside a free-keys dict
  such as ``reward.custom_reward_function.reward_kwargs``), the legacy blocks of verl's
  ``legacy_reward_impl.yaml`` (top-level ``custom_reward_function``, ``reward_model.*``, ``sandbox_fusion``), which
  verl 0.9.1 migrates only in its fully_async trainer, and :func:`unread_keys`;
* :func:`unread_keys`: keys of our sections that the chosen estimator does not read (one warning each).

No verl import.
"""

from __future__ import annotations

import difflib
from typing import Any

from verl_focal.config.errors import ConfigError

__all__ = ["check_unread", "unknown_key_message", "suggest_key", "unread_keys", "legacy_blocks", "REFUSED_ZONES"]

#: where an added key nothing reads is refused (elsewhere: warned); "" is the top level
REFUSED_ZONES = ("algorithm", "reward", "trainer", "async_training")
#: the trainers in which verl migrates its legacy reward blocks
#: (verl.experimental.reward_loop.migrate_legacy_reward_impl)
_MIGRATES_LEGACY = ("fully_async",)
_MISSING = object()


def _walk(node: Any, prefix: str = "") -> dict[str, Any]:
    """Every path of a config (dicts and leaves) -> its node, as plain containers."""
    out: dict[str, Any] = {}
    if isinstance(node, dict):
        for k, v in node.items():
            path = f"{prefix}.{k}" if prefix else str(k)
            out[path] = v
            out.update(_walk(v, path))
    return out


def _plain(config: Any) -> dict:
    from omegaconf import DictConfig, OmegaConf

    if isinstance(config, DictConfig):
        return OmegaConf.to_container(config, resolve=False, throw_on_missing=False)  # type: ignore[return-value]
    return dict(config)


def _get(tree: dict, key: str) -> Any:
    node: Any = tree
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _free(path: str, node: Any) -> bool:
    """A dict of free keys: empty in the schema, or a ``*kwargs`` dict (passed on as keyword arguments)."""
    return isinstance(node, dict) and "_target_" not in node and (
        not node or path.rsplit(".", 1)[-1].endswith("kwargs"))


def _adds_kwargs(key: str, anc: str) -> bool:
    """``key`` creates a ``*kwargs`` dict below its existing ancestor ``anc`` (``+reward.custom_reward_function.
    reward_kwargs.rel_tol``): keys passed on as keyword arguments, read by whatever they are passed to."""
    new = key.split(".")[len(anc.split(".")) if anc else 0:-1]
    return any(p.endswith("kwargs") for p in new)


def legacy_blocks() -> tuple[str, ...]:
    """The top-level blocks of verl's ``legacy_reward_impl.yaml`` (kept for backward compatibility, read only by
    the trainers that migrate them), read from verl's config folder without importing verl."""
    import os

    import yaml

    from verl_focal.integration.compose import verl_config_searchpath

    search = verl_config_searchpath()
    if search:
        try:
            with open(os.path.join(search.removeprefix("file://"), "legacy_reward_impl.yaml"), encoding="utf-8") as f:
                return tuple(yaml.safe_load(f) or {})
        except OSError:
            pass
    return ("custom_reward_function", "reward_model", "sandbox_fusion")


def _estimator_alias(parts: list[str]) -> str | None:
    """``algorithm.f_grpo_gamma`` / ``algorithm.f_grpo.gamma`` -> ``algorithm.focal.gamma``: an estimator's
    name used as a prefix of a key of a section it reads."""
    import dataclasses

    from verl_focal.config.schema import SECTIONS
    from verl_focal.estimators import all_specs

    leaf = parts[-1]
    for spec in sorted(all_specs(), key=lambda s: -len(s.name)):
        for section in sorted(spec.sections):
            fields = {f.name for f in dataclasses.fields(SECTIONS[section])}
            rest = leaf[len(spec.name) + 1:] if leaf.startswith(spec.name + "_") else None
            if rest is None and len(parts) >= 2 and parts[-2] == spec.name:
                rest = leaf
            if rest in fields:
                return f"algorithm.{section}.{rest}"
    return None


def suggest_key(key: str, tree: dict, value: Any = None, exclude: tuple[str, ...] = ()) -> str | None:
    """The existing key the user most likely meant by ``key``, or None.

    In order: an estimator's name used as a prefix (:func:`_estimator_alias`); the longest tail of ``key`` that is
    also the tail of an existing key (``custom_reward_function.path`` -> ``reward.custom_reward_function.path``);
    a close spelling among the siblings, then among all leaf names.  ``exclude``: top-level blocks never
    suggested (verl's legacy ones).  A suggested section with a ``name`` given a plain value gets ``.name``.
    """
    parts = key.split(".")
    alias = _estimator_alias(parts)
    if alias is not None and _get(tree, alias) is not _MISSING:
        return alias
    paths = {p: v for p, v in _walk(tree).items() if p != key and p.split(".")[0] not in exclude}
    best = None
    for n in range(len(parts), 0, -1):
        tail = parts[-n:]
        hits = [p for p in paths if p.split(".")[-n:] == tail]
        if hits and (n > 1 or len(hits) <= 2):
            hits.sort(key=lambda p: (p.split(".")[0] != parts[0], p.count("."), p))
            best = hits[0]
            break
    if best is None:
        parent = ".".join(parts[:-1])
        siblings = {p.rpartition(".")[2]: p for p in paths if p.rpartition(".")[0] == parent}
        close = [siblings[c] for c in difflib.get_close_matches(parts[-1], list(siblings), n=1, cutoff=0.6)]
        if not close:
            leaves: dict[str, list[str]] = {}
            for p in paths:
                leaves.setdefault(p.rsplit(".", 1)[-1], []).append(p)
            leaf = difflib.get_close_matches(parts[-1], list(leaves), n=1, cutoff=0.85)
            close = leaves[leaf[0]][:1] if leaf and len(leaves[leaf[0]]) == 1 else []
        best = close[0] if close else None
    if best is not None and isinstance(paths[best], dict) and "name" in paths[best] and value is not None \
            and not str(value).startswith(("{", "[")):
        best += ".name"
    return best


def _zone(key: str, tree: dict) -> str:
    first = key.split(".")[0]
    return first if first in tree else ""


def unknown_key_message(key: str, value: str | None, base: Any, trainer: str = "ppo") -> str:
    """The message for a key Hydra refused (``not in struct``): the key meant, by leaf name too; the ``+KEY``
    advice only inside a free-keys dict, where adding a key is what the user meant."""
    tree = _plain(base)
    parent = key.rpartition(".")[0]
    shown = f"{key}={value}" if value is not None else key
    node = _get(tree, parent) if parent else tree
    if parent and _free(parent, node) or _adds_kwargs(key, parent if node is not _MISSING else ""):
        return f"{parent} takes free keys, added with +: write +{shown}"
    meant = suggest_key(key, tree, value, exclude=legacy_blocks())
    if meant is not None:
        fix = f"{meant}={value}" if value is not None else meant
        return f"unknown key {key} (did you mean {meant!r}?): verl's config has no {key}; write {fix}"
    where = f"under {parent}" if parent and isinstance(node, dict) else "at the top level"
    keys = sorted(k for k in (node if isinstance(node, dict) else tree) if not str(k).startswith("_"))
    return f"unknown key {key}: verl's config has no such key, and nothing would read it; keys {where}: " + (
        ", ".join(keys[:30]) + (" ..." if len(keys) > 30 else ""))


def _value_of(override: str) -> str | None:
    return override.split("=", 1)[1] if "=" in override else None


def check_unread(config: Any, overrides: list[str], trainer: str = "ppo",
                 base: Any = None) -> list[str]:
    """Refuse (ConfigError) the keys the user set that nothing will read; return the warning lines.

    ``base``: the config composed without the user's overrides (composed here when a ``+`` key needs it).
    """
    from omegaconf import OmegaConf

    from verl_focal.config.schema import SECTIONS

    given = [o for o in overrides if "=" in o and not o.lstrip("+~").startswith("hydra")]
    keys = [(o.split("=", 1)[0], _value_of(o)) for o in given]
    legacy = legacy_blocks()
    problems: list[str] = []
    warnings: list[str] = []
    tree = None

    def base_tree() -> dict:
        nonlocal tree, base
        if tree is None:
            if base is None:
                from verl_focal.integration.compose import compose_config

                groups = [o for o in overrides if o.startswith("+") and "." not in o.split("=", 1)[0]
                          and OmegaConf.select(config, o.split("=", 1)[0].lstrip("+"), default=_MISSING) is _MISSING]
                base = compose_config(groups, trainer=trainer)
            tree = _plain(base)
        return tree

    for raw, value in keys:
        key = raw.lstrip("+~")
        if raw.startswith("~") or value in (None, "null"):
            continue
        first = key.split(".")[0]
        if first in legacy and trainer not in _MIGRATES_LEGACY:
            meant = suggest_key(key, base_tree(), value, exclude=legacy)
            fix = f"; write {meant}={value}" if meant else "; its settings live under reward."
            problems.append(f"{key}: a legacy key of verl's (legacy_reward_impl.yaml) that verl 0.9.1's {trainer} "
                            f"trainer never reads (verl would score with its default reward){fix}")
            continue
        if not raw.startswith("+") or "." not in key and OmegaConf.select(config, key, default=_MISSING) is _MISSING:
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
        meant = suggest_key(key, t, value, exclude=legacy)
        hint = f" (did you mean {meant!r}?)" if meant else ""
        if _zone(key, t) in ("", *REFUSED_ZONES):
            fix = f"write {meant}={value}" if meant else f"remove +{key}"
            problems.append(f"+{key}: verl's config has no {key}{hint}, and nothing reads it: the run would go on "
                            f"as if it were not set; {fix}")
        else:
            warnings.append(f"+{key} is not a key of verl's config{hint}: only code that looks it up by name "
                            "reads it")
    if problems:
        raise ConfigError("; ".join(problems))
    return warnings + unread_keys(config, overrides)


def unread_keys(config: Any, overrides: list[str]) -> list[str]:
    """One warning line for each override the run's estimator will not read: a key of one of our sections
    (``algorithm.focal.*``, ...) that the estimator (one of ours, or verl's, which read none) does not read
    (:meth:`~verl_focal.estimators.spec.EstimatorSpec.reads`), and verl's ``algorithm.gamma`` (the GAE
    discount) set with one of ours.  Needs no verl import."""
    from verl_focal.config.schema import SECTIONS
    from verl_focal.estimators import all_specs
    from verl_focal.integration.late_checks import config_get

    est = config_get(config, "algorithm.adv_estimator")
    name = str(getattr(est, "value", est)).removeprefix("verl_focal.")
    spec = next((s for s in all_specs() if s.name == name), None)
    out = []
    for o in dict.fromkeys(o.split("=", 1)[0].lstrip("+~") for o in overrides):
        parts = o.split(".")
        if len(parts) >= 3 and parts[0] == "algorithm" and parts[1] in SECTIONS:
            if spec is None or not spec.reads(parts[1], parts[2]):
                out.append(f"{o} is set, but algorithm.adv_estimator={est} does not read it: the value has no effect")
        elif o == "algorithm.gamma" and spec is not None:
            hint = " did you mean algorithm.focal.gamma (the focal exponent)?" if spec.reads("focal", "gamma") else ""
            out.append(f"algorithm.gamma is verl's GAE discount, which {est} does not read:"
                       f"{hint or ' it has no effect'}")
    return out
