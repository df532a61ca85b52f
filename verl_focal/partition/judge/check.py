"""Start-up checks of the judge configuration, for ``verl-focal check`` and the TaskRunner.

``check_judge(cfg)`` never raises: it returns a list of problems, each naming
the key, what was found and the fix; an empty list means the judge is usable.
It makes one ``GET {base_url}/models`` request.  :func:`probe_judge_here` runs it in the
process that will send the requests (the TaskRunner) and raises; :func:`judge_topology_warnings`
names the settings that point at one node's resources on a run over several nodes.
"""

from __future__ import annotations

import os
from typing import Any

import httpx

from verl_focal.partition.base import get_partitioner
from verl_focal.partition.judge.config import coerce_judge_config, missing_key_line

__all__ = ["check_judge", "judge_topology_warnings", "probe_judge_here"]

_K = "algorithm.cue.judge"


def check_judge(
    cfg: Any, timeout_s: float | None = None, network: bool = True, fallback_kwargs: dict | None = None
) -> list[str]:
    """Problems with the ``algorithm.cue.judge`` section ``cfg`` (JudgeConfig, mapping or OmegaConf node).

    Checks, in order: the values themselves (``model`` set); the fallback partitioner;
    the API-key variable (named, never printed); then, with ``network`` (default), that
    ``{base_url}/models`` answers, that the key is accepted and that ``model`` is among the
    served models.  ``network=False`` gives the cheap offline subset for a trainer's start-up.
    """
    try:
        c = coerce_judge_config(cfg)
    except ValueError as e:
        return [str(e)]
    problems: list[str] = []
    try:
        get_partitioner(c.fallback, **dict(fallback_kwargs or {}))
    except ValueError as e:
        problems.append(f"{_K}.fallback={c.fallback!r}: {e}")

    headers = {}
    if c.api_key_env:
        key = os.environ.get(c.api_key_env)
        if not key:
            problems.append(missing_key_line(c.api_key_env))
        else:
            headers["Authorization"] = f"Bearer {key}"

    if not network:
        return problems
    url = c.base_url.rstrip("/") + "/models"
    try:
        with httpx.Client(timeout=min(c.timeout_s, 10.0) if timeout_s is None else timeout_s, trust_env=False) as http:
            resp = http.get(url, headers=headers)
    except httpx.HTTPError as e:
        problems.append(
            f"{_K}.base_url={c.base_url!r} is unreachable (GET {url}: {type(e).__name__}); "
            "start the server (e.g. `vllm serve MODEL`) or fix the URL, which must be the API root ending in /v1"
        )
        return problems
    if resp.status_code in (401, 403):
        via = f"the key in ${c.api_key_env}" if c.api_key_env else "no key (api_key_env is empty)"
        problems.append(
            f"{_K}: the server at {c.base_url!r} refused {via} (HTTP {resp.status_code}); "
            "set api_key_env to the name of a variable holding a valid key"
        )
        return problems
    if resp.status_code == 404:
        problems.append(
            f"{_K}.base_url={c.base_url!r}: GET {url} returned 404; base_url must be the OpenAI API root, "
            "usually ending in /v1 (e.g. http://127.0.0.1:8000/v1)"
        )
        return problems
    if resp.status_code != 200:
        problems.append(f"{_K}.base_url={c.base_url!r}: GET {url} returned HTTP {resp.status_code}")
        return problems
    try:
        served = [str(m["id"]) for m in resp.json()["data"]]
    except (ValueError, KeyError, TypeError):
        problems.append(f"{_K}.base_url={c.base_url!r}: GET {url} did not return an OpenAI model list")
        return problems
    if c.model not in served:
        problems.append(
            f"{_K}.model={c.model!r} is not served at {c.base_url!r}; served models: {served[:20]}"
            + (" ..." if len(served) > 20 else "")
        )
    return problems


def probe_judge_here(cfg: Any) -> None:
    """:func:`check_judge`'s network probe from this process (the TaskRunner's node, where the requests go out;
    ``verl-focal check`` probes from the driver's); a problem raises
    :class:`~verl_focal.config.errors.ConfigError` in one line."""
    from verl_focal.config.errors import ConfigError

    problems = check_judge(cfg, network=True)
    if problems:
        raise ConfigError(f"{_K}, probed from the TaskRunner on {os.uname().nodename}: " + "; ".join(problems))


def judge_topology_warnings(cfg: Any, nnodes: int) -> list[str]:
    """On several nodes, the judge's settings that name one node's resources: a loopback ``base_url`` (resolved
    on the TaskRunner's node, which Ray picks, not the driver's) and a ``cache_dir`` (that node's local disk)."""
    from urllib.parse import urlsplit

    if nnodes <= 1:
        return []
    out = []
    host = (urlsplit(str(cfg.base_url)).hostname or "").lower()
    if host in ("localhost", "::1") or host.startswith("127."):
        out.append(f"{_K}.base_url={cfg.base_url!r} is a loopback address and trainer.nnodes={nnodes}: it is "
                   "resolved on the node Ray puts the TaskRunner on, where no judge may listen (every group then "
                   "falls back to strategy cues): give the judge host's address")
    if str(cfg.cache_dir or ""):
        out.append(f"{_K}.cache_dir={cfg.cache_dir!r} with trainer.nnodes={nnodes}: the cache is on the "
                   "TaskRunner's node's disk; use a shared folder to reuse it across runs")
    return out
