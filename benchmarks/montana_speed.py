"""Montana speed on one core, warm cache: deals per second of each policy, the median
of several timed runs (CPU time of this process, so that other load on the machine
does not count).

    python benchmarks/montana_speed.py first,greedy 200000
    python benchmarks/montana_speed.py search 500 nodes=20000
"""

import statistics
import sys
import time

import numpy as np

from sim.engine import montana
from sim.engine.games import GAMES
from sim.policies.registry import builtin_policies

RULES = GAMES["montana"].rules_vector(GAMES["montana"].default_rules())


def play(policy, params, seed, start, count):
    rows = np.zeros((count, len(montana.COLUMNS)), np.int32)
    logs = np.zeros((count, 0), np.int16)
    montana.play_chunk_nb(policy.choose, seed, start, RULES, params, rows, logs)
    return rows


def deals_per_second(policy, params, deals, runs=5, seed=1):
    play(policy, params, seed, 0, 10)  # load the compiled kernel
    rates = []
    for run in range(runs):
        clock = time.process_time()
        play(policy, params, seed, run * deals, deals)
        rates.append(deals / (time.process_time() - clock))
    return statistics.median(rates), rates


if __name__ == "__main__":
    names = (sys.argv[1] if len(sys.argv) > 1 else "first,greedy").split(",")
    deals = int(float(sys.argv[2])) if len(sys.argv) > 2 else 200_000
    pairs = sys.argv[3:]
    policies = {p.name: p for p in builtin_policies("montana")}
    for name in names:
        policy = policies[name]
        params = policy.param_vector(policy.settings(pairs if name == "search" else ()))
        rate, rates = deals_per_second(policy, params, deals)
        runs = ", ".join(f"{r:,.0f}" for r in rates)
        print(f"{name}: {rate:,.0f} deals/s per core (median of 5 runs of {deals:,}: {runs})")
