"""Statistics of the comparisons, shared by ``verl-focal demo`` and ``verl-focal eval frontier`` (pure numpy/scipy:
no torch, no verl).

* :mod:`~verl_focal.lab.stats.verdict` -- the Student-t interval of a paired mean, the rule that turns an interval into
  *better* / *worse* / *not detected*, and the join of two runs' verdicts (replication);
* :mod:`~verl_focal.lab.stats.frontier` -- a method against a control family at equal pass@1: the frontier's linear
  interpolation, D, its paired bootstrap over seeds of the whole procedure, *outside the grid*;
* :mod:`~verl_focal.lab.stats.power` -- the smallest D a design detects, at its seeds and projected to others.
"""
