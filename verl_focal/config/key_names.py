"""Names of config keys: the existing key a user most likely meant, found by leaf name too.

Pure helpers over a composed config (as plain dicts) and our estimators' sections (passed in by the caller:
:func:`verl_focal.estimators.sections_by_estimator`); used by composition
(:mod:`~verl_focal.integration.startup.compose`, for a key Hydra refuses) and by
:mod:`~verl_focal.integration.startup.unread` (for ``+``-added and legacy keys).  The
known keys are the config's own, never a copied list.  No verl import.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["config_get", "suggest_key", "unknown_key_message", "free_keys", "adds_kwargs", "plain", "get", "MISSING"]

MISSING = object()


def _walk(node: Any, prefix: str = "") -> dict[str, Any]:
    """Every path of a config (dicts and leaves) -> its node, as plain containers."""
    out: dict[str, Any] = {}
    if isinstance(node, dict):
        for k, v in node.items():
            path = f"{prefix}.{k}" if prefix else str(k)
            out[path] = v
            out.update(_walk(v, path))
    return out


def config_get(config: Any, key: str, default: Any = None) -> Any:
    """``config[key]`` for a dotted ``key`` of a DictConfig, a plain dict or a dataclass (a parsed section such as
    ``CueConfig``, verl's ``AlgoConfig``): the one dotted getter of the package.  ``default`` when a part is absent,
    is None, or is a leaf (``None`` config included); a ``???`` value counts as absent.

    >>> config_get({"algorithm": {"cue": {"rho": 0.5}}}, "algorithm.cue.rho"), config_get({}, "a.b", 3)
    (0.5, 3)
    """
    node = config
    for part in key.split("."):
        if dataclasses.is_dataclass(node) and not isinstance(node, type):
            node = getattr(node, part, None)
        else:
            node = node.get(part, None) if hasattr(node, "get") else None
        if node is None:
            return default
    return node


def plain(config: Any) -> dict:
    from omegaconf import DictConfig, OmegaConf

    if isinstance(config, DictConfig):
        return OmegaConf.to_container(config, resolve=False, throw_on_missing=False)  # type: ignore[return-value]
    return dict(config)


def get(tree: dict, key: str) -> Any:
    node: Any = tree
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return MISSING
        node = node[part]
    return node


def free_keys(path: str, node: Any) -> bool:
    """A dict of free keys: empty in the schema, or a ``*kwargs`` dict (passed on as keyword arguments)."""
    return isinstance(node, dict) and "_target_" not in node and (
        not node or path.rsplit(".", 1)[-1].endswith("kwargs"))


def adds_kwargs(key: str, anc: str) -> bool:
    """``key`` creates a ``*kwargs`` dict below its existing ancestor ``anc`` (``+reward.custom_reward_function.
    reward_kwargs.rel_tol``): keys passed on as keyword arguments, read by whatever they are passed to."""
    new = key.split(".")[len(anc.split(".")) if anc else 0:-1]
    return any(p.endswith("kwargs") for p in new)


def _estimator_alias(parts: list[str], estimators: Mapping[str, Iterable[str]]) -> str | None:
    """``algorithm.f_grpo_gamma`` / ``algorithm.f_grpo.gamma`` -> ``algorithm.focal.gamma``: an estimator's
    name (a key of ``estimators``, which maps it to the sections it reads) used as a prefix of a key of one of
    its sections."""
    import dataclasses

    from verl_focal.config.schema import SECTIONS

    leaf = parts[-1]
    for section in sorted(SECTIONS, key=lambda s: -len(s)):  # a section's name as a prefix: focal_gamma
        fields = {f.name for f in dataclasses.fields(SECTIONS[section])}
        rest = leaf[len(section) + 1:] if leaf.startswith(section + "_") else None
        if rest in fields:
            return f"algorithm.{section}.{rest}"
    for name in sorted(estimators, key=lambda s: -len(s)):
        for section in sorted(estimators[name]):
            fields = {f.name for f in dataclasses.fields(SECTIONS[section])}
            rest = leaf[len(name) + 1:] if leaf.startswith(name + "_") else None
            if rest is None and len(parts) >= 2 and parts[-2] == name:
                rest = leaf
            if rest in fields:
                return f"algorithm.{section}.{rest}"
    return None


def suggest_key(key: str, tree: dict, value: Any = None, exclude: tuple[str, ...] = (),
                estimators: Mapping[str, Iterable[str]] | None = None,
                live: Callable[[str, dict], bool] | None = None) -> str | None:
    """The existing key the user most likely meant by ``key``, or None.

    In order: an estimator's name used as a prefix (:func:`_estimator_alias`); the longest tail of ``key`` that is
    also the tail of an existing key (``custom_reward_function.path`` -> ``reward.custom_reward_function.path``);
    a close spelling among the siblings, then among all leaf names.  ``exclude``: top-level blocks never
    suggested (verl's legacy ones).  ``estimators``: estimator name -> the sections it reads, for the first rule.
    ``live(path, tree)``: whether the run reads ``path`` (keys it does not read are never suggested).
    A suggested section with a ``name`` given a plain value gets ``.name``.
    """
    parts = key.split(".")
    alias = _estimator_alias(parts, estimators or {})
    if alias is not None and get(tree, alias) is not MISSING:
        # the key meant is known; if this run does not read it, no other key is what was meant (under gae,
        # focal_gamma is not GAE's algorithm.gamma)
        return alias if live is None or live(alias, tree) else None
    # only keys this run reads (``live``: startup/liveness.is_live): a hint the same check would refuse is no hint
    paths = {p: v for p, v in _walk(tree).items()
             if p != key and p.split(".")[0] not in exclude and (live is None or live(p, tree))}
    best = None
    for n in range(len(parts), 0, -1):
        tail = parts[-n:]
        hits = [p for p in paths if p.split(".")[-n:] == tail]
        # the policy's keys before the critic's: with a critic both are live, and ``lr=`` means the actor's
        hits.sort(key=lambda p: (p.split(".")[0] != parts[0], p.startswith("critic."), p.count("."), p))
        # a leaf name in several sections: the shallowest, when no other is as shallow (rollout.temperature
        # before rollout.val_kwargs.temperature and the judge's)
        if hits and (n > 1 or len(hits) <= 2 or hits[0].count(".") < hits[1].count(".")):
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


def unknown_key_message(key: str, value: str | None, base: Any, exclude: tuple[str, ...] = (),
                        estimators: Mapping[str, Iterable[str]] | None = None,
                        live: Callable[[str, dict], bool] | None = None) -> str:
    """The message for a key Hydra refused (``not in struct``): the key meant, by leaf name too; the ``+KEY``
    advice only inside a free-keys dict, where adding a key is what the user meant."""
    tree = plain(base)
    parent = key.rpartition(".")[0]
    shown = f"{key}={value}" if value is not None else key
    node = get(tree, parent) if parent else tree
    if parent and free_keys(parent, node) or adds_kwargs(key, parent if node is not MISSING else ""):
        return f"{parent} takes free keys, added with +: write +{shown}"
    meant = suggest_key(key, tree, value, exclude=exclude, estimators=estimators, live=live)
    if meant is not None:
        fix = f"{meant}={value}" if value is not None else meant
        return f"unknown key {key} (did you mean {meant!r}?): verl's config has no {key}; write {fix}"
    where = f"under {parent}" if parent and isinstance(node, dict) else "at the top level"
    keys = sorted(k for k in (node if isinstance(node, dict) else tree) if not str(k).startswith("_"))
    return f"unknown key {key}: verl's config has no such key, and nothing would read it; keys {where}: " + (
        ", ".join(keys[:30]) + (" ..." if len(keys) > 30 else ""))
