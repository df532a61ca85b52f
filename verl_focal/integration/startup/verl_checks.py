"""What verl itself checks only after start-up, or never, checked before: the run would fail minutes in on a
reserved GPU node, or train for hours and learn nothing.

* :func:`check_reward_function`: ``reward.custom_reward_function`` resolved as verl's
  ``verl.utils.import_utils.load_module`` will (``pkg://`` module or file path), and the function name in
  it, read from its source (nothing of it is run here);
* :func:`check_verl_choices`: the values of verl's own enumerations that its config validation leaves to
  the first step (the policy loss, the KL estimators), taken from verl itself;
(``actor_rollout_ref.rollout.n`` against the estimator is in :mod:`~verl_focal.integration.startup.no_signal`; keys the
estimator does not read in :mod:`~verl_focal.integration.startup.unread`.)

Each raises :class:`~verl_focal.config.errors.ConfigError` naming the key, the value and the fix; the
verl names they read are in ``compat.CONTRACT`` (feature ``entry``).
"""

from __future__ import annotations

import ast
import importlib.util
import os
from typing import Any

from verl_focal.config.errors import ConfigError, did_you_mean
from verl_focal.config.key_names import config_get

__all__ = ["check_reward_function", "check_verl_choices", "kl_penalty_choices"]


def _module_source(module: str) -> str | None:
    """The source file of ``module`` without importing it (its parent packages are imported); None if absent."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):  # a parent package is missing
        return None
    return spec.origin if spec is not None and spec.origin and spec.origin.endswith(".py") else None


def _siblings(module: str) -> list[str]:
    """The importable modules next to ``module`` (for a did-you-mean)."""
    import pkgutil

    parent, _, _ = module.rpartition(".")
    try:
        path = importlib.import_module(parent).__path__ if parent else None
    except (ImportError, AttributeError):
        return []
    return [f"{parent}.{m.name}" if parent else m.name for m in pkgutil.iter_modules(path)]


def _defined_names(source: str) -> tuple[set[str], list[str]] | None:
    """The top-level names a Python file defines or imports, and its functions; None when it star-imports
    (then any name may be there)."""
    with open(source, encoding="utf-8") as f:
        tree = ast.parse(f.read(), source)
    names: set[str] = set()
    funcs = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(a.name == "*" for a in node.names):
                return None
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names, funcs


def check_reward_function(config: Any) -> None:
    """``reward.custom_reward_function.path`` and ``.name``, resolved as verl's reward workers will."""
    from verl.utils.import_utils import FILE_PATH_PREFIX, PKG_PATH_PREFIX

    path = config_get(config, "reward.custom_reward_function.path")
    if not path:
        return
    path, name = str(path), config_get(config, "reward.custom_reward_function.name")
    key = "reward.custom_reward_function.path"
    if path.startswith(PKG_PATH_PREFIX):
        module = path[len(PKG_PATH_PREFIX):].replace("/", ".")
        source = _module_source(module)
        if source is None:
            hint = did_you_mean(module, _siblings(module))
            raise ConfigError(f"{key}={path}: no importable module {module!r}{hint}; name a module of an installed "
                              "package (our scorer: pkg://verl_focal.reward) or give a .py file path")
    else:
        source = path[len(FILE_PATH_PREFIX):] if path.startswith(FILE_PATH_PREFIX) else path
        if not os.path.isfile(source):
            what = "a folder, not a file" if os.path.isdir(source) else "no such file"
            raise ConfigError(f"{key}={path}: {what} (from {os.getcwd()}); give an existing .py file, or "
                              "pkg://package.module for an installed one")
    if not name:
        raise ConfigError("reward.custom_reward_function.name is empty but .path is set: name the function in "
                          f"{path} that scores a response (ours: compute_score)")
    defined = _defined_names(source)
    if defined is not None and str(name) not in defined[0]:
        funcs = [f for f in defined[1] if not f.startswith("_")]
        raise ConfigError(f"reward.custom_reward_function.name={name}: {path} defines no {name!r}"
                          f"{did_you_mean(str(name), defined[0])}; its functions: {', '.join(funcs[:8]) or 'none'}")


def kl_penalty_choices() -> list[str]:
    """The KL estimators verl's ``core_algos.kl_penalty`` computes: the names its ``kl_penalty_forward``
    compares with (read from its source) that it does not refuse, each also with verl's ``+`` suffix."""
    import inspect

    import torch
    from verl.trainer.ppo import core_algos

    tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(core_algos.kl_penalty_forward)))
    names = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and n.value.isidentifier()}
    zero = torch.zeros(1, 1)
    ok = []
    for n in sorted(names):
        try:
            core_algos.kl_penalty(zero, zero, n)
        except NotImplementedError:
            continue
        ok.append(n)
    return ok + [n + "+" for n in ok]


def check_verl_choices(config: Any) -> None:
    """verl's policy loss (``POLICY_LOSS_REGISTRY``) and KL estimators (:func:`kl_penalty_choices`) for the keys
    a run uses; verl refuses a bad one only at the first update."""
    from verl.trainer.ppo import core_algos

    checks = [("actor_rollout_ref.actor.policy_loss.loss_mode", list(core_algos.POLICY_LOSS_REGISTRY), True)]
    kl = None
    for key, enabled in (("algorithm.kl_penalty", "algorithm.use_kl_in_reward"),
                         ("actor_rollout_ref.actor.kl_loss_type", "actor_rollout_ref.actor.use_kl_loss")):
        if config_get(config, enabled, False):
            kl = kl or kl_penalty_choices()
            checks.append((key, kl, True))
    for key, choices, _ in checks:
        value = config_get(config, key)
        if value is not None and str(value) not in choices:
            raise ConfigError(f"{key}={value} is not one of verl's{did_you_mean(str(value), choices)}: "
                              f"{', '.join(choices)}")
