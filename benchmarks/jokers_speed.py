"""Jokers speed on one core, warm cache: deals per second of a heuristic policy (median
of several runs), or the time per deal of the solver (median and 99th percentile).

    python benchmarks/jokers_speed.py greedy 200000
    python benchmarks/jokers_speed.py solver 5000
"""

import statistics
import sys
import time

import numpy as np

from sim.engine import jokers
from sim.policies import jokers as policies

RULES = np.array([jokers.DEFAULT_MAX_MOVES], np.int64)


def play(policy, seed, start, count):
    rows = np.zeros((count, len(jokers.COLUMNS)), np.int32)
    logs = np.zeros((count, 0), np.int16)
    params = policy.param_vector(policy.settings())
    jokers.play_chunk_nb(policy.choose, seed, start, RULES, params, rows, logs)
    return rows


def deals_per_second(policy, deals, runs=5, seed=1):
    play(policy, seed, 0, 10)  # load the compiled kernel
    rates = []
    for run in range(runs):
        clock = time.perf_counter()
        play(policy, seed, run * deals, deals)
        rates.append(deals / (time.perf_counter() - clock))
    return statistics.median(rates)


def seconds_per_deal(policy, deals, seed=1):
    play(policy, seed, 0, 1)
    times = []
    for deal in range(deals):
        clock = time.perf_counter()
        play(policy, seed, deal, 1)
        times.append(time.perf_counter() - clock)
    return np.array(times)


if __name__ == "__main__":
    name = sys.argv[1] if len(sys.argv) > 1 else "greedy"
    deals = int(sys.argv[2]) if len(sys.argv) > 2 else 200_000
    policy = getattr(policies, name)
    if name == "solver":
        times = seconds_per_deal(policy, deals)
        print(
            f"solver: {deals:,} deals, median {np.median(times) * 1e3:.2f} ms, "
            f"p99 {np.percentile(times, 99) * 1e3:.1f} ms, max {times.max():.2f} s per deal"
        )
    else:
        rate = deals_per_second(policy, deals)
        print(f"{name}: {rate:,.0f} deals/s per core (median of 5 runs of {deals:,} deals)")
