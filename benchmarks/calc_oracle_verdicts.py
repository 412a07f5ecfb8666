"""How many deals the Calculation oracle decides within a node budget, and at what cost:
per budget, the deals won, proved lost and left unknown, with the CPU seconds per deal
(this process's CPU time, so that other load on the machine counts less). It runs the
search the oracle policy runs at its first decision, on the deals of `sim calc`, without
the exact model the policy gives the deals it leaves (benchmarks/calc_exact_verdicts.py).

    python benchmarks/calc_oracle_verdicts.py 300 --wastes 3 --nodes 1e5,2e5,3e5
    python benchmarks/calc_oracle_verdicts.py 50 --start 51 --nodes 1e6
"""

import argparse
import time

import numpy as np

from sim.engine import calc
from sim.policies import calc_oracle


def search_deals(seed, start, count, wastes, nodes):
    """(verdict counts by outcome label, CPU seconds per deal, nodes used per deal)."""
    state = np.zeros(calc.STATE_SIZE, np.int16)
    board = np.empty(calc.STATE_SIZE, np.int16)
    keys, stamps = calc_oracle.new_stamped_table_nb(calc_oracle.TABLE_BITS)
    winning = np.empty(calc_oracle.MAX_DEPTH, np.int16)
    counts = {"won": 0, "unwinnable": 0, "unknown": 0}
    labels = {calc.OUTCOME_WON: "won", calc.OUTCOME_LOST: "unwinnable"}
    used = 0
    clock = time.process_time()
    for i in range(count):
        calc.deal_nb(seed, start + i, wastes, state)
        calc_oracle.board_from_state_nb(state, board)
        found, spent, _ = calc_oracle.oracle_search_nb(board, nodes, keys, stamps, i + 1, winning)
        counts[labels.get(found, "unknown")] += 1
        used += spent
    return counts, (time.process_time() - clock) / count, used / count


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("deals", type=float)
    parser.add_argument("--wastes", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--nodes", default="1e5", help="budgets, comma separated")
    args = parser.parse_args()
    count = int(args.deals)
    search_deals(args.seed, args.start, 1, args.wastes, 10)  # load the compiled kernels
    for nodes in (int(float(n)) for n in args.nodes.split(",")):
        counts, seconds, used = search_deals(args.seed, args.start, count, args.wastes, nodes)
        shares = ", ".join(f"{label} {n} ({n / count:.1%})" for label, n in counts.items())
        print(
            f"nodes={nodes:,}, {args.wastes} wastes, deals {args.start}..{args.start + count - 1}"
            f" of seed {args.seed}: {shares}; {seconds:.3f} CPU s and {used:,.0f} nodes per deal"
        )


if __name__ == "__main__":
    main()
