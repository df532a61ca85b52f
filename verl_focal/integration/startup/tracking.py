"""``trainer.logger`` against the process's environment: W&B's key, looked up as W&B does (no verl import).

verl's default ``trainer.logger=[console, wandb]`` fails in ``wandb.init``, inside ``fit()``, after every worker and
engine has started, when no key is configured.  :func:`check_logger` runs wherever
:func:`~verl_focal.integration.startup.validate.validate_start` runs, our TaskRunner included, so a key set on the
driver's node only is refused where the logger will run.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from verl_focal.config.errors import ConfigError
from verl_focal.config.key_names import config_get

__all__ = ["WANDB_KEYLESS_MODES", "check_logger", "wandb_key_source"]

#: WANDB_MODE values with which ``wandb.init`` needs no key
WANDB_KEYLESS_MODES = ("offline", "disabled", "dryrun")


def wandb_key_source(environ: dict[str, str] | None = None) -> str | None:
    """Where ``wandb.init`` would find its key (or why it needs none) in this process, as W&B looks it up:
    ``WANDB_MODE`` / ``WANDB_DISABLED``, ``WANDB_API_KEY``, an ``api_key`` in W&B's settings files
    (``$WANDB_CONFIG_DIR/settings`` or ``~/.config/wandb/settings``, and ``./wandb/settings``), or the netrc
    entry of ``WANDB_BASE_URL``'s host (``$NETRC``, ``~/.netrc``, ``~/_netrc``); None when there is none."""
    import configparser
    import netrc
    from pathlib import Path
    from urllib.parse import urlparse

    env = os.environ if environ is None else environ
    if env.get("WANDB_MODE", "").strip().lower() in WANDB_KEYLESS_MODES:
        return f"WANDB_MODE={env['WANDB_MODE']}"
    if env.get("WANDB_DISABLED", "").strip().lower() in ("true", "1", "yes"):
        return "WANDB_DISABLED"
    if env.get("WANDB_API_KEY", "").strip():
        return "WANDB_API_KEY"
    config_dir = Path(env.get("WANDB_CONFIG_DIR") or Path(env.get("HOME", "~")) / ".config" / "wandb")
    for settings in (config_dir.expanduser() / "settings", Path("wandb") / "settings"):
        parser = configparser.ConfigParser()
        try:
            parser.read(settings)
        except (configparser.Error, OSError, UnicodeDecodeError):
            continue
        if parser.get("default", "api_key", fallback="").strip():
            return str(settings)
    host = urlparse(env.get("WANDB_BASE_URL") or "https://api.wandb.ai").hostname or "api.wandb.ai"
    home = Path(env.get("HOME", "~")).expanduser()
    candidates = [Path(env["NETRC"]).expanduser()] if env.get("NETRC") else [home / ".netrc", home / "_netrc"]
    for path in candidates:
        try:
            auth = netrc.netrc(str(path)).authenticators(host)
        except (FileNotFoundError, netrc.NetrcParseError, OSError):
            continue
        if auth and auth[2]:
            return f"{path} ({host})"
    return None


def check_logger(config: Any) -> None:
    """``trainer.logger`` with ``wandb``: W&B installed and a key found here (:func:`wandb_key_source`), else
    one line naming the three ways out."""
    loggers = config_get(config, "trainer.logger", None)
    loggers = [loggers] if isinstance(loggers, str) else list(loggers or [])
    if "wandb" not in loggers:
        return
    where = f"on {os.uname().nodename}"
    if importlib.util.find_spec("wandb") is None:
        raise ConfigError(f"trainer.logger={loggers} includes wandb, which is not installed {where}: pip install "
                          "wandb there, or set trainer.logger=[console]")
    if wandb_key_source() is None:
        raise ConfigError(
            f"trainer.logger={loggers} includes wandb but no W&B key is configured {where} (wandb.init would "
            "fail after the models load): set trainer.logger=[console], WANDB_MODE=offline, or WANDB_API_KEY "
            "(wandb login), in the environment of every node's ray start on a cluster"
        )
