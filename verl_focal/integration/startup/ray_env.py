"""``ray_kwargs.ray_init.runtime_env.env_vars``: the environment verl's Ray processes get, checked before ``ray.init``.

Ray accepts strings only there.  A Hydra override such as ``+ray_kwargs.ray_init.runtime_env.env_vars.X=1`` parses
``1`` as an integer, and ``ray.init`` then raises a ``TypeError`` deep in Ray's runtime-env validation, with nothing
that names the override.  :func:`check_env_vars` refuses it at start-up, with the quoting that makes it a string.
"""

from __future__ import annotations

from typing import Any

from verl_focal.config.errors import ConfigError
from verl_focal.config.key_names import config_get

__all__ = ["ENV_VARS_KEY", "check_env_vars"]

ENV_VARS_KEY = "ray_kwargs.ray_init.runtime_env.env_vars"


def check_env_vars(config: Any) -> None:
    """Raise :class:`ConfigError` for a value under ``ray_kwargs.ray_init.runtime_env.env_vars`` that is not a
    string (or a mapping there at all), naming the variable and the shell quoting that passes it as text."""
    env = config_get(config, ENV_VARS_KEY, None)
    if env is None:
        return
    if not hasattr(env, "items"):
        raise ConfigError(f"{ENV_VARS_KEY}={env!r} must be a mapping of variable names to strings")
    for name, value in env.items():
        if not isinstance(value, str):
            text = str(value).lower() if isinstance(value, bool) else str(value)
            raise ConfigError(
                f"{ENV_VARS_KEY}.{name}={value!r} is not a string ({type(value).__name__}), and Ray takes strings "
                f"only: quote it for Hydra, e.g. in a shell '+{ENV_VARS_KEY}.{name}=\"{text}\"'"
            )
