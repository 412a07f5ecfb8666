"""What the oracle's exact model (policies.calc_exact) decides, and at what cost: the
verdicts on Calculation deals as dealt, with the time per deal (median, 99th percentile
and largest; wall and CPU seconds, model building included), each winning line played
out by the engine's rules.

    python benchmarks/calc_exact_verdicts.py --deals 0-99 --wastes 3
    python benchmarks/calc_exact_verdicts.py --unknown-in results/calc/oracle.parquet
"""

import argparse
import statistics
import time

import numpy as np
import pandas as pd

from sim.engine import calc
from sim.engine.kernel import OUTCOME_LOST, OUTCOME_WON
from sim.policies import calc_exact

LABELS = {OUTCOME_WON: "won", OUTCOME_LOST: "proved lost"}


def decide_deal(seed, deal, wastes, work):
    """(label, wall s, CPU s) of the model's verdict on one deal."""
    state = np.zeros(calc.STATE_SIZE, np.int16)
    calc.deal_nb(seed, deal, wastes, state)
    wall, cpu = time.perf_counter(), time.process_time()
    found, _ = calc_exact.decide(state, work)  # a line that breaks the rules raises
    return LABELS.get(found, "unknown"), time.perf_counter() - wall, time.process_time() - cpu


def deals_to_decide(args):
    """(seed, wastes, deals) from the options."""
    if args.unknown_in:
        rows = pd.read_parquet(args.unknown_in, columns=["seed", "deal", "rules", "outcome"])
        rows = rows[rows.outcome == "unknown"]
        if rows.empty:
            raise SystemExit(f"{args.unknown_in} has no deal left unknown")
        wastes = int(str(rows.rules.iloc[0]).removeprefix("wastes="))
        return int(rows.seed.iloc[0]), wastes, [int(d) for d in rows.deal]
    first, _, last = args.deals.partition("-")
    return args.seed, args.wastes, list(range(int(first), int(last or first) + 1))


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", default="0-99", help="FIRST-LAST deal indices")
    parser.add_argument("--unknown-in", help="a result file: decide the deals it left unknown")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--wastes", type=int, default=3)
    parser.add_argument("--work", type=float, default=60.0, help="deterministic s a deal")
    args = parser.parse_args()
    seed, wastes, deals = deals_to_decide(args)
    counts, walls, cpus = {}, [], []
    for deal in deals:
        label, wall, cpu = decide_deal(seed, deal, wastes, args.work)
        counts[label] = counts.get(label, 0) + 1
        walls.append(wall)
        cpus.append(cpu)
        if label != "won":
            print(f"deal {deal}: {label}", flush=True)
    shares = ", ".join(f"{label} {n}" for label, n in sorted(counts.items()))
    print(f"{len(deals)} deals of seed {seed}, {wastes} wastes: {shares}")
    for what, values in (("wall", walls), ("CPU", cpus)):
        print(
            f"{what} s a deal: median {statistics.median(values):.2f}, "
            f"99th percentile {percentile(values, 0.99):.2f}, largest {max(values):.2f}"
        )


if __name__ == "__main__":
    main()
