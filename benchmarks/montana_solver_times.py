"""Time per deal of the Montana solver, one deal at a time on one core (CPU time of
this process, so that other load on the machine does not count): median, 90th and
99th percentile, and the longest.

    python benchmarks/montana_solver_times.py 99 0 1000 0          # seed, first, n, redeals
    python benchmarks/montana_solver_times.py 99 0 200 2 nodes=50000
"""

import sys
import time

import numpy as np

from sim.engine import montana
from sim.policies.registry import resolve


def deal_times(seed, first, count, redeals, pairs):
    policy = resolve("montana", "solver")
    params = policy.param_vector(policy.settings(pairs))
    rules = np.array([redeals, 5000], np.int64)
    rows = np.zeros((1, len(montana.COLUMNS)), np.int32)
    logs = np.zeros((1, 0), np.int16)
    montana.play_chunk_nb(policy.choose, seed, first, rules, params, rows, logs)  # load
    times, outcomes = [], []
    for deal in range(first, first + count):
        clock = time.process_time()
        montana.play_chunk_nb(policy.choose, seed, deal, rules, params, rows, logs)
        times.append(time.process_time() - clock)
        outcomes.append(montana.OUTCOMES[rows[0, 0]])
    return np.array(times), outcomes


if __name__ == "__main__":
    seed, first, count, redeals = (int(float(a)) for a in sys.argv[1:5])
    times, outcomes = deal_times(seed, first, count, redeals, sys.argv[5:])
    shares = {o: outcomes.count(o) for o in sorted(set(outcomes))}
    p50, p90, p99 = np.percentile(times, [50, 90, 99])
    print(f"{count} deals of seed {seed} from {first}, redeals={redeals}: {shares}")
    print(
        f"seconds per deal: median {p50:.3f}, 90th percentile {p90:.3f}, "
        f"99th percentile {p99:.3f}, longest {times.max():.3f}; "
        f"{1 / times.mean():.2f} deals/s per core"
    )
