r"""SynLogic ``operation``: evaluate expressions under newly defined operators.  Answer: the last
``\boxed{}`` (else math-verify's own extraction from the answer text); correct when
math-verify finds it equal to the gold answer.

Uses sympy through math-verify, so it runs under the caller's time bound (``USES_SYMPY``:
:mod:`verl_focal.ood.runner` sends it to a worker process when no alarm can be set).
"""

from __future__ import annotations

import math_verify.grader
import math_verify.parser
from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse
from math_verify import verify as mv_verify

from verl_focal.ood.synlogic._common import boxed

NEEDS_ANSWER = True
USES_SYMPY = True

# math-verify warns once that its own timeouts are off; the caller's time bound replaces them
for _mod in (math_verify.grader, math_verify.parser):
    if hasattr(_mod, "TIMEOUT_WARNING_SHOWN"):
        _mod.TIMEOUT_WARNING_SHOWN = True


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    cfg = [LatexExtractionConfig(), ExprExtractionConfig()]
    gold = parse("\\boxed{" + str(answer).strip() + "}", cfg, parsing_timeout=None)
    b = boxed(text)
    pred = parse("\\boxed{" + b + "}" if b is not None else text[-2000:], cfg, parsing_timeout=None)
    if not gold or not pred:
        return False, "" if b is None else b
    return bool(mv_verify(gold, pred, timeout_seconds=None)), b if b is not None else str(pred[-1])
