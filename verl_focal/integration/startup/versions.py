"""The installed stack against verl's own pins.

verl's extras pin the stack it was tested with (``verl[vllm]``: vllm, torch, transformers;
``verl[sglang]``: sglang, torch, transformers).  We read those pins from verl's installed
metadata (``importlib.metadata.requires("verl")``, with their ``extra == ...`` markers), so
nothing here is typed twice, and compare them with what is installed.  A mismatch is a
one-line warning naming both versions; it never stops a run.
"""

from __future__ import annotations

import importlib.metadata as md
import sys

from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

__all__ = ["verl_pins", "version_mismatches", "ENGINES", "CHECKED"]


#: rollout engines with a verl extra of the same name
ENGINES = ("vllm", "sglang")
#: packages whose version we compare with verl's pins
CHECKED = ("vllm", "sglang", "torch", "transformers")


def verl_pins(extra: str | None) -> dict[str, Requirement]:
    """verl's requirements on :data:`CHECKED` packages for ``extra`` (None = the base install)."""
    out: dict[str, Requirement] = {}
    for line in md.requires("verl") or []:
        req = Requirement(line)
        if req.name not in CHECKED:
            continue
        if extra is None:
            if req.marker is None:
                out[req.name] = req
        elif (
            req.marker is not None
            and req.marker.evaluate({"extra": extra})
            and not req.marker.evaluate({"extra": ""})
        ):
            out[req.name] = req
    return out


def _installed(name: str) -> str | None:
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


def _verl_version() -> str | None:
    """The verl this process imports (it can differ from the installed metadata: a checkout on the path)."""
    mod = sys.modules.get("verl")
    return getattr(mod, "__version__", None) or _installed("verl")


def _admits(req: Requirement, version: str) -> bool:
    try:
        return req.specifier.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False


def version_mismatches() -> list[str]:
    """One line per installed package outside verl's pin (engine extra if an engine is installed), and one
    when verl itself is outside our own range."""
    from verl_focal.integration.compat import pinned_verl_spec

    verl_version = _verl_version() or "?"
    engines = [e for e in ENGINES if _installed(e)]
    problems = []
    spec = pinned_verl_spec()
    if spec and not _admits(Requirement(spec), verl_version):
        problems.append(f"verl-focal is tested against {spec} but verl {verl_version} is installed; run "
                        f"`pip install '{spec}'` if anything misbehaves")
    for extra in engines or [None]:
        pins = {**verl_pins(None), **verl_pins(extra)} if extra else verl_pins(None)
        for name, req in sorted(pins.items()):
            have = _installed(name)
            if have is None or not req.specifier:
                continue
            try:
                ok = req.specifier.contains(Version(have).base_version if "+" in have else have, prereleases=True)
            except InvalidVersion:
                continue
            if not ok:
                where = f"verl[{extra}]=={verl_version}" if extra else f"verl=={verl_version}"
                problems.append(
                    f"{name} {have} is installed but {where} was tested with {name}{req.specifier}; "
                    f"`pip install 'verl-focal[{extra}]'` installs the tested stack" if extra else
                    f"{name} {have} is installed but {where} requires {name}{req.specifier}"
                )
    return problems
