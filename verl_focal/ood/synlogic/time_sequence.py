r"""SynLogic ``time_sequence``: scheduling question with two numeric answers.

Answer: the last ``[a, b]`` list in the answer text (JSON; full-width commas accepted).
Correct when it has exactly two numbers, ``a`` equal to
``metadata["records"]["answers"]["answer_maxLen"]`` and ``b`` to ``...["answer_nums"]``.
"""

from __future__ import annotations

import json

from verl_focal.ood.synlogic._common import MAX_LITERAL_CHARS, last_bracketed

REQUIRED_METADATA = ("records",)


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    span = last_bracketed(text.replace("，", ","), "[", nested=False)
    if span is None or len(span) > MAX_LITERAL_CHARS:
        return False, ""
    try:
        got = json.loads(span)
    except json.JSONDecodeError:
        return False, span
    gold = metadata["records"]["answers"]
    ok = (isinstance(got, list) and len(got) == 2 and all(type(v) in (int, float) for v in got)
          and got[0] == gold["answer_maxLen"] and got[1] == gold["answer_nums"])
    return ok, span
