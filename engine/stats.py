"""Interval estimates for the figures the simulator reports."""

import math

Z95 = 1.959963984540054


def wilson_interval(successes, trials, z=Z95):
    """The Wilson score interval of a binomial proportion (95% by default)."""
    if trials <= 0:
        return (0.0, 1.0)
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))
