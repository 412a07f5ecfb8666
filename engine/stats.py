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
    # At 0 or all successes the bound is exactly the end of the range: the float sum
    # leaves a residue like 2e-19 that would sit above a 0% point estimate.
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= trials else min(1.0, centre + half)
    return (low, high)
