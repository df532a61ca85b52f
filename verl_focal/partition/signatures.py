"""Cue signatures handed to a partitioner: which ones it can use, and how bad ones are kept.

The reward workers store each response's cue signature (``"<catalogue version>:<codes>"``,
:func:`verl_focal.partition.cues.signature`) as the reward extra ``cue_sig``.  A partitioner
that can cluster from signatures has ``partition_signatures`` and a catalogue ``version``
(its own, or its ``reference``'s for the ``random`` control).  Pure Python: no verl import.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["SIG_KEY", "signature_version", "usable_signatures", "sanitised_signatures"]

#: the reward extra holding a response's cue signature
SIG_KEY = "cue_sig"


def signature_version(part: Any) -> str | None:
    """Catalogue version of a partitioner that can cluster from signatures, else None."""
    if not hasattr(part, "partition_signatures"):
        return None
    return getattr(part, "version", None) or getattr(getattr(part, "reference", None), "version", None)


def usable_signatures(part: Any, sigs: Sequence[Any]) -> bool:
    """True when every signature is a string from ``part``'s own catalogue version."""
    version = signature_version(part)
    if version is None:
        return False
    prefix = f"{version}:"
    return all(isinstance(s, str) and s.startswith(prefix) for s in sigs)


def sanitised_signatures(part: Any, sigs: Sequence[Any]) -> list[str]:
    """Malformed signatures (e.g. the reward's ``""`` after a failure) become failure signatures.

    The partitioner puts a failure in the residual cluster and counts it; a well-formed
    signature from another catalogue is kept (the partitioner counts the mismatch).
    """
    version = signature_version(part)
    return [s if isinstance(s, str) and ":" in s else f"{version}:!error" for s in sigs]
