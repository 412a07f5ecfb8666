"""Speed of the strong Calculation policies on one core, warm cache: deals per second
(median of several runs of consecutive deals, CPU time of this process so that other
load on the machine counts less), with the win rate over all deals played.

    python benchmarks/calc_strong_speed.py mc 200
    python benchmarks/calc_strong_speed.py mc 100 samples=1024
    python benchmarks/calc_strong_speed.py oracle 300 --wastes 3
    python benchmarks/calc_strong_speed.py rollout 100000
"""

import argparse
import statistics
import time

import numpy as np

from sim.engine import calc
from sim.policies.registry import resolve


def play(policy, params, wastes, seed, start, count):
    rows = np.zeros((count, len(calc.COLUMNS)), np.int32)
    logs = np.zeros((count, 0), np.int16)
    rules = np.array([wastes], np.int64)
    calc.play_chunk_nb(policy.choose, seed, start, rules, params, rows, logs)
    return rows


def measure(name, deals, pairs=(), wastes=4, runs=5, seed=1):
    """(median deals/s, rates of each run, win rate over every deal played)."""
    policy = resolve("calc", name)
    params = policy.param_vector(policy.settings(pairs))
    play(policy, params, wastes, seed, 0, 2)  # load the compiled kernel
    rates, wins = [], 0
    for run in range(runs):
        clock = time.process_time()
        rows = play(policy, params, wastes, seed, run * deals, deals)
        rates.append(deals / (time.process_time() - clock))
        wins += int(rows[:, 0].sum())
    return statistics.median(rates), rates, wins / (runs * deals)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("policy")
    parser.add_argument("deals", type=float, help="deals per run")
    parser.add_argument("params", nargs="*", help="policy parameters, k=v")
    parser.add_argument("--wastes", type=int, default=4)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    deals = int(args.deals)
    rate, rates, won = measure(args.policy, deals, args.params, args.wastes, args.runs)
    runs = ", ".join(f"{r:,.1f}" for r in rates)
    settings = " ".join(args.params) or "defaults"
    print(
        f"{args.policy} ({settings}, {args.wastes} wastes): {rate:,.1f} deals/s per core "
        f"(median of {args.runs} runs of {deals:,}: {runs}); won {won:.1%}"
    )


if __name__ == "__main__":
    main()
