"""Strategy cues: catalogues (data), extraction, and per-response signatures.

A *signature* is the compact, serialisable form of one response's cue sequence
(docs/methods.md §6 steps 1-3), computed per response -- e.g. in the reward workers by
:func:`verl_focal.reward.compute_score` -- so that only the cheap group-level
clustering (steps 4-5, :mod:`verl_focal.partition.strategy_cue`) runs at advantage
time.  Format::

    "<version>:<code>.<code>..."      e.g. "math_v1:cw.bin.cw"
    "<version>:"                      no non-generic cue found
    "<version>:!<reason>"             extraction failed (timeout, error); clustered as residual

The version is kept so that a signature made with one catalogue is never clustered
with another's.
"""

from __future__ import annotations

import logging

from verl_focal.partition.cues.catalogue import Catalogue, Cue, list_cue_sets, load_catalogue
from verl_focal.partition.cues.engine import BACKENDS, CueTimeout, Extractor, get_extractor, hyperscan_available

__all__ = [
    "Cue",
    "Catalogue",
    "load_catalogue",
    "list_cue_sets",
    "Extractor",
    "get_extractor",
    "hyperscan_available",
    "CueTimeout",
    "BACKENDS",
    "signature",
    "response_signature",
    "parse_signature",
    "format_signature",
]

logger = logging.getLogger(__name__)

MAX_SEQUENCE = 4096  # cue labels kept per response; longer sequences are truncated (not a failure)


def format_signature(version: str, codes: list[str] | None, failure: str | None = None) -> str:
    """Serialise a cue sequence (or a failure reason) as a signature string."""
    if failure is not None:
        return f"{version}:!{failure}"
    return f"{version}:" + ".".join((codes or [])[:MAX_SEQUENCE])


def signature(text: str, cue_set: str = "math_v1", backend: str = "auto", timeout: float = 2.0) -> str:
    """The cue signature of one response (docs/methods.md §6 steps 1-3, serialised).

    Never raises on bad *text*: a timeout gives ``"<version>:!timeout"`` and a
    non-string ``"<version>:!error"``; both are clustered as residual and counted in
    the step metrics.  A bad ``cue_set``/``backend`` raises ``ValueError`` (a
    configuration error).
    """
    ex = get_extractor(cue_set, backend, timeout)
    version = ex.catalogue.version
    if not isinstance(text, (str, bytes)):
        return format_signature(version, None, "error")
    try:
        return format_signature(version, ex.sequence(text))
    except CueTimeout:
        return format_signature(version, None, "timeout")


def response_signature(text: str, cue_set: str, correct: bool) -> str:
    """The ``cue_sig`` reward extra of one scored response.

    A correct response gets :func:`signature`; a wrong one ``"<version>:!wrong"`` without being
    read, since credit redistribution partitions only a group's correct rollouts
    (docs/methods.md §5-§6) and extraction would cost as much as the answer check.  A bad
    ``cue_set`` raises ``ValueError`` (a configuration error, refused at start-up); any other
    failure on one response is recoverable: ``"<version>:!error"`` (clustered as residual and
    counted by the estimator) and a warning.

    >>> response_signature("any text", "math_v1", correct=False).endswith(":!wrong")
    True
    """
    version = get_extractor(cue_set).catalogue.version
    if not correct:
        return format_signature(version, None, "wrong")
    try:
        return signature(text, cue_set)
    except Exception as e:  # noqa: BLE001 - one bad trace must not kill a training step
        logger.warning("cue signature failed (%s: %s); marking it as an error", type(e).__name__, e)
        return format_signature(version, None, "error")


def parse_signature(sig: str) -> tuple[str, list[str], str | None]:
    """Inverse of :func:`format_signature`: ``(version, codes, failure_or_None)``.

    Raises ``ValueError`` for a string that is not a signature.
    """
    if not isinstance(sig, str) or ":" not in sig:
        raise ValueError(f"not a cue signature: {sig!r} (expected '<cue_set version>:<code>.<code>...')")
    version, _, body = sig.partition(":")
    if body.startswith("!"):
        return version, [], body[1:] or "error"
    return version, ([c for c in body.split(".") if c] if body else []), None
