r"""Answer-equivalence rules used by :func:`verl_focal.reward.compute_score` (no verl import).

One concern per module:

* :mod:`.unicode`   -- Unicode forms (fullwidth digits, ``√``, ``½``, ``×``) as ASCII/LaTeX, first;
* :mod:`.normalise` -- primes, formatting wrappers, brace variants, numeric literal forms, scientific
  notation, code-like answers, lists of accepted reference forms;
* :mod:`.numeric`   -- exact numbers and the numeric policy (:class:`NumericPolicy`);
* :mod:`.units`     -- splitting a trailing unit, degree, arcminute or arcsecond mark off a number;
* :mod:`.congruence` -- a modulus after an answer (``42 \pmod{100}``);
* :mod:`.intervals` -- inequalities in one variable read as intervals;
* :mod:`.equations` -- equations equal up to rearrangement and a constant factor;
* :mod:`.equivalence` -- the order in which the rules and math-verify are applied.

The policy in two sentences each (also in README and docs/eval.md):

Numbers.  Two exact numbers (integers, fractions) must be equal: an integer reference is never
matched by a near miss such as the answer plus one.  When either side is a decimal or is written in
scientific notation, values within a relative tolerance ``rel_tol`` (default 1e-4, as in the
Qwen2.5-Math / DeepSeek-Math / ToRA ``math_equal`` graders) match, and with ``sig_figs=True`` a
prediction that rounds to the reference's significant figures matches too.

Units.  A unit or degree mark is stripped only when one side carries it: if both sides carry
units they must be the same unit (``5 cm`` against ``5 m`` stays wrong; no conversion is tried).
Only explicit unit markup (``\text{}``, ``\mathrm{}``, ...), degree marks and common unit symbols
after a space count as units; a letter glued to a number (``5m``) is a product, not a unit.
Degrees, arcminutes (``'``) and arcseconds (``''``) are three units; after a letter ``'`` is a prime
(``x'`` and ``x`` differ).  A congruence's modulus is treated like a unit: dropped when one side
has it, equal on both sides otherwise.
"""

from verl_focal.grading.equivalence import equivalent, obviously_wrong
from verl_focal.grading.normalise import gold_alternatives
from verl_focal.grading.numeric import NumericPolicy

__all__ = ["NumericPolicy", "equivalent", "gold_alternatives", "obviously_wrong"]
