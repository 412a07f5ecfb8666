"""Interval estimates and tests for comparing policies on the same deals.

The win rate of a run uses the Wilson score interval (engine.stats). A mean uses the
normal approximation, fine for the thousands of deals a run holds. Two runs on the same
deals are compared pairwise: the difference of win rates gets Newcombe's hybrid score
interval for paired proportions (his method 10, 1998), which keeps its coverage where
the plain Wald interval collapses (few discordant deals); the exact McNemar test gives
the p-value of "no difference".
"""

import math

import numpy as np

from sim.engine.stats import Z95, wilson_interval

LOG_HALF = math.log(0.5)
LOG_2 = math.log(2.0)
LOG_10 = math.log(10.0)


def mean_interval(values, z=Z95):
    """(mean, low, high) of values; low and high are NaN under two values."""
    n = len(values)
    if n == 0:
        return (math.nan, math.nan, math.nan)
    mean = float(np.mean(values, dtype=np.float64))
    if n < 2:
        return (mean, math.nan, math.nan)
    half = z * float(np.std(values, dtype=np.float64, ddof=1)) / math.sqrt(n)
    return (mean, mean - half, mean + half)


def mcnemar_exact_p(only_a, only_b):
    """Two-sided exact McNemar p-value: binomial test of only_a of the discordant pairs
    against one half. 0.0 where it is below the smallest float: mcnemar_log10_p keeps it."""
    return 10.0 ** mcnemar_log10_p(only_a, only_b)


def mcnemar_log10_p(only_a, only_b):
    """log10 of the exact McNemar p-value, computed in log space from start to end (log
    binomial coefficients, a log-sum-exp of the tail), so that millions of pairs neither
    overflow nor take long, and a p-value far below the smallest float is still a number
    (-1617.3, not -inf)."""
    n = only_a + only_b
    k = min(only_a, only_b)
    if n == 0 or 2 * k == n:
        return 0.0
    i = np.arange(1, k + 1, dtype=np.float64)
    log_choose = np.concatenate(([0.0], np.cumsum(np.log(n - i + 1) - np.log(i))))
    log_terms = log_choose + n * LOG_HALF
    top = log_terms.max()
    log_tail = top + math.log(float(np.sum(np.exp(log_terms - top))))
    return min(0.0, (LOG_2 + log_tail) / LOG_10)


def paired_difference_interval(both, only_a, only_b, neither, z=Z95):
    """Newcombe's hybrid score interval (method 10) for p_a - p_b on paired outcomes.

    The four cells are the deals both runs won, only A won, only B won, neither won.
    Returns (difference, low, high); NaN for no pairs.
    """
    n = both + only_a + only_b + neither
    if n == 0:
        return (math.nan, math.nan, math.nan)
    p_a, p_b = (both + only_a) / n, (both + only_b) / n
    low_a, high_a = wilson_interval(both + only_a, n, z)
    low_b, high_b = wilson_interval(both + only_b, n, z)
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    phi = (both * neither - only_a * only_b) / math.sqrt(margins) if margins else 0.0
    below = math.sqrt(
        max(
            0.0,
            (p_a - low_a) ** 2 - 2 * phi * (p_a - low_a) * (high_b - p_b) + (high_b - p_b) ** 2,
        )
    )
    above = math.sqrt(
        max(
            0.0,
            (high_a - p_a) ** 2 - 2 * phi * (high_a - p_a) * (p_b - low_b) + (p_b - low_b) ** 2,
        )
    )
    difference = p_a - p_b
    return (difference, max(-1.0, difference - below), min(1.0, difference + above))
