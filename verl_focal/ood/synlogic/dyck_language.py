r"""SynLogic ``dyck_language``: complete a bracket sequence.

Answer: the whole answer text (inside ``<answer>`` tags when present, or the last
``\boxed{}``), with all whitespace removed and one pair of surrounding quotes dropped.
Correct when it equals ``metadata["full_sequence"]`` exactly.
"""

from __future__ import annotations

from verl_focal.ood.synlogic._common import boxed

REQUIRED_METADATA = ("full_sequence",)


def clean(s: str) -> str:
    s = "".join(s.split())
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'`":
        s = s[1:-1]
    return s


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    b = boxed(text)
    got = clean(b if b is not None else text)
    return got == str(metadata["full_sequence"]), got[:200]
