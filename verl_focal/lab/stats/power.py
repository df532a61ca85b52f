"""The power of a paired design: the smallest D it detects (pure scipy).

For an estimate with standard error se on n seeds and a two-sided test at level α (interval t_{n−1, 1−α/2} · se), a
true difference D is detected with probability ``power`` when

    |D| ≥ (t_{n−1, 1−α/2} + t_{n−1, power}) · se,

the usual minimum detectable effect (t quantiles with n − 1 degrees of freedom, as in the intervals it belongs to).
Projected to n' seeds the standard error scales as se · √(n / n') and the quantiles take n' − 1 degrees of freedom.
With se from the bootstrap of D (``FrontierClaim.se``: √(n/(n−1)) · sd(D*)) this is the smallest D the equal-pass@1
comparison detects at its seeds, or at another number of seeds of the same design.
"""

from __future__ import annotations

import math

from scipy import stats as _st

__all__ = ["minimum_detectable_d"]


def minimum_detectable_d(se: float, n: int, n_target: int | None = None, level: float = 0.95,
                         power: float = 0.80) -> float:
    """(t_{n'−1, (1+level)/2} + t_{n'−1, power}) · se · √(n / n'): the smallest |D| detected with probability
    ``power`` by the two-sided interval at ``level``, on n' = ``n_target`` seeds (default n) of a design whose
    estimate has standard error ``se`` on ``n`` seeds.  Scalars in, a scalar out."""
    n_t = n if n_target is None else n_target
    if not (n >= 2 and n_t >= 2):
        raise ValueError(f"minimum_detectable_d: n={n}, n_target={n_t}: both must be >= 2 (t with n − 1 df)")
    if not (math.isfinite(se) and se >= 0):
        raise ValueError(f"minimum_detectable_d: se={se} must be finite and >= 0")
    if not (0 < level < 1 and 0 < power < 1):
        raise ValueError(f"minimum_detectable_d: level={level}, power={power} must lie in (0, 1)")
    q = _st.t.ppf(0.5 + level / 2, n_t - 1) + _st.t.ppf(power, n_t - 1)
    return float(q * se * math.sqrt(n / n_t))
