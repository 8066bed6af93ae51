"""Exact (Clopper–Pearson) binomial intervals without scipy.

The interval's bounds are beta quantiles: lower = B⁻¹(α/2; x, n − x + 1), upper = B⁻¹(1 − α/2; x + 1, n − x).
The regularized incomplete beta I_x(a, b) is evaluated by its continued fraction (modified Lentz), and
inverted by bisection: I_x is monotone in x, so 200 halvings reach double precision on [0, 1].
"""

from __future__ import annotations

import math

_TINY = 1e-300
_EPS = 1e-15
_MAX_TERMS = 1000
_BISECTIONS = 200


def _beta_fraction(x: float, a: float, b: float) -> float:
    """The continued fraction of I_x(a, b) (converges fast for x < (a + 1) / (a + b + 2))."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_TERMS + 1):
        m2 = 2 * m
        for numerator in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            step = d * c
            h *= step
        if abs(step - 1.0) < _EPS:
            return h
    raise ArithmeticError(f"incomplete beta continued fraction did not converge (x={x}, a={a}, b={b})")


def regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b) for a, b > 0 and 0 ≤ x ≤ 1."""
    if a <= 0 or b <= 0:
        raise ValueError(f"beta parameters must be positive (a={a}, b={b})")
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(x, a, b) / a
    # Symmetry I_x(a, b) = 1 − I_{1−x}(b, a) keeps the fraction in its fast-converging range.
    return 1.0 - front * _beta_fraction(1.0 - x, b, a) / b


def beta_quantile(p: float, a: float, b: float) -> float:
    """x with I_x(a, b) = p, by bisection."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"probability must be in [0, 1] (p={p})")
    low, high = 0.0, 1.0
    for _ in range(_BISECTIONS):
        mid = (low + high) / 2.0
        if regularized_beta(mid, a, b) < p:
            low = mid
        else:
            high = mid
        if high - low < 1e-16:
            break
    return (low + high) / 2.0


def clopper_pearson(*, successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact two-sided interval of a binomial proportion (``(nan, nan)`` when there are no trials)."""
    if trials < 0 or not 0 <= successes <= max(trials, 0):
        raise ValueError(f"need 0 ≤ successes ≤ trials (successes={successes}, trials={trials})")
    if trials == 0:
        return math.nan, math.nan
    alpha = 1.0 - confidence
    x, n = successes, trials
    lower = 0.0 if x == 0 else beta_quantile(alpha / 2.0, x, n - x + 1)
    upper = 1.0 if x == n else beta_quantile(1.0 - alpha / 2.0, x + 1, n - x)
    return lower, upper
