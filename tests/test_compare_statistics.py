"""The interval estimates and the test behind `sim compare`, against scipy and the literature."""

import math

import numpy as np
import pytest
from scipy import stats

from sim.engine.analysis.intervals import (
    mcnemar_exact_p,
    mcnemar_log10_p,
    mean_interval,
    paired_difference_interval,
)
from sim.engine.stats import wilson_interval


@pytest.mark.parametrize(
    "wins, deals",
    [(0, 10), (1, 10), (5, 10), (10, 10), (3, 1000), (4074, 1_000_000), (14655, 1_000_000)],
)
def test_wilson_interval_matches_scipy(wins, deals):
    expected = stats.binomtest(wins, deals).proportion_ci(0.95, method="wilson")
    low, high = wilson_interval(wins, deals)
    assert low == pytest.approx(expected.low, rel=1e-9, abs=1e-12)
    assert high == pytest.approx(expected.high, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(
    "only_a, only_b",
    [(0, 0), (0, 1), (5, 2), (2, 5), (7, 7), (0, 92), (13, 31), (300, 76), (40_000, 41_000)],
)
def test_mcnemar_p_is_scipys_two_sided_binomial_test(only_a, only_b):
    if only_a + only_b == 0:
        assert mcnemar_exact_p(0, 0) == 1.0
        return
    expected = stats.binomtest(only_a, only_a + only_b, 0.5).pvalue
    assert mcnemar_exact_p(only_a, only_b) == pytest.approx(expected, rel=1e-9)


def test_mcnemar_p_of_a_lopsided_million_underflows_to_zero_not_an_error():
    assert mcnemar_exact_p(13_956, 3_375) == 0.0


def log10_tail_by_lgamma(only_a, only_b):
    """log10 of 2 P(X <= min) for X ~ Binomial(n, 1/2), term by term with math.lgamma."""
    n, k = only_a + only_b, min(only_a, only_b)
    terms = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in range(k + 1)]
    top = max(terms)
    log_tail = top + math.log(sum(math.exp(t - top) for t in terms)) + n * math.log(0.5)
    return min(0.0, (math.log(2) + log_tail) / math.log(10))


@pytest.mark.parametrize(
    "only_a, only_b", [(13_956, 3_375), (31_236, 3_158), (0, 5_000), (120_000, 100_000)]
)
def test_mcnemar_log10_p_stays_a_number_where_the_p_value_underflows(only_a, only_b):
    expected = log10_tail_by_lgamma(only_a, only_b)
    assert expected < -300
    assert mcnemar_log10_p(only_a, only_b) == pytest.approx(expected, rel=1e-10)
    assert mcnemar_log10_p(only_b, only_a) == mcnemar_log10_p(only_a, only_b)


@pytest.mark.parametrize("only_a, only_b", [(5, 2), (0, 92), (300, 76), (40_000, 41_000)])
def test_mcnemar_log10_p_is_the_log_of_scipys_p_value(only_a, only_b):
    expected = math.log10(stats.binomtest(only_a, only_a + only_b, 0.5).pvalue)
    assert mcnemar_log10_p(only_a, only_b) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert mcnemar_log10_p(7, 7) == mcnemar_log10_p(0, 0) == 0.0


def test_paired_interval_is_newcombes_method_10_on_his_published_example():
    # Newcombe (1998), Statistics in Medicine 17:2635, Table II: cells 36, 12, 2, 0.
    difference, low, high = paired_difference_interval(36, 12, 2, 0)
    assert difference == pytest.approx(0.2)
    assert (round(low, 4), round(high, 4)) == (0.0569, 0.3404)


def test_paired_interval_approaches_the_wald_interval_for_many_deals():
    both, only_a, only_b, neither = 500, 3000, 2500, 994_000
    n = both + only_a + only_b + neither
    difference, low, high = paired_difference_interval(both, only_a, only_b, neither)
    wald_half = 1.959963984540054 * math.sqrt(only_a + only_b - (only_a - only_b) ** 2 / n) / n
    assert difference == pytest.approx((only_a - only_b) / n)
    assert high - difference == pytest.approx(wald_half, rel=0.02)
    assert difference - low == pytest.approx(wald_half, rel=0.02)


@pytest.mark.parametrize("cells", [(0, 0, 0, 10), (5, 5, 0, 0), (0, 3, 0, 7), (1, 0, 0, 0)])
def test_paired_interval_keeps_width_where_wald_collapses(cells):
    difference, low, high = paired_difference_interval(*cells)
    assert -1 <= low <= difference <= high <= 1
    assert high - low > 0.05


def test_mean_interval_is_the_normal_approximation():
    values = np.array([4, 10, 26, 30, 52, 17, 23], np.int8)
    mean, low, high = mean_interval(values)
    half = 1.959963984540054 * stats.sem(values.astype(float))
    assert (mean, low, high) == pytest.approx(
        (values.mean(), values.mean() - half, values.mean() + half)
    )
    assert all(math.isnan(x) for x in mean_interval(values[:1])[1:])
