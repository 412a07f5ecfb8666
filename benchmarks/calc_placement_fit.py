"""Fit the placement cost that `mc` plays out (policies.calc_oracle.PLACEMENT_WEIGHTS)
to the choices of `mc` itself.

Each round plays deals with `mc` at 2,048 samples whose playouts use the last round's
weights (the first round: the hand heuristic, HAND_PLACEMENT). At every decision where
the turned card goes onto a pile and `mc` raced two or more distinct piles, it keeps
each pile's features (placement_features_nb) and its mean value in the race. The
round's weights then minimise the cross-entropy between the choice the weights would
make (a softmax over minus the piles' costs) and the race's means made a distribution
(softmax of mean / TAU: piles within a few hundredths of the best share the target),
over every round's decisions so far, with a small L2 penalty on standardised weights.
Prints each round's weights, and the win rate of the playout alone beside the hand
heuristic's on 200,000 deals of seed 5.

    python benchmarks/calc_placement_fit.py            # 2 rounds of 600 deals, 2 processes
    python benchmarks/calc_placement_fit.py 3 400
"""

import argparse
import multiprocessing

import numpy as np

from sim.engine import calc, rng
from sim.policies import calc_oracle

SAMPLES = 2048
SCORE_WEIGHT, CONFIDENCE = 0.5, 2.0  # the defaults of `mc`
TAU = 0.03
L2 = 1e-3
FIRST_SEED = 101  # round r plays deals of seed FIRST_SEED + r - 1


def pile_decisions(seed, first, count, placement):
    """(features, mask, means) of the pile decisions of `mc` on the deals."""
    state = np.empty(calc.STATE_SIZE, np.int16)
    legal = np.empty(calc.N_ACTIONS, np.int16)
    board = np.empty(calc.STATE_SIZE, np.int16)
    work = calc_oracle.new_work_nb()
    stream = rng.new_stream(seed, first, 77)
    features, masks, values = [], [], []
    for deal in range(first, first + count):
        calc.deal_nb(seed, deal, 4, state)
        while (n := calc.legal_actions_nb(state, legal)) > 0:
            means = np.full(n, np.nan)
            i = calc_oracle.monte_carlo_choice_nb(
                state, legal, n, SAMPLES, SCORE_WEIGHT, CONFIDENCE, stream, placement, means
            )
            raced = np.flatnonzero(~np.isnan(means))
            piles = legal[raced] - calc.ACT_TO_WASTE
            if len(raced) > 1 and np.all((piles >= 0) & (piles < calc.MAX_WASTES)):
                calc_oracle.board_from_state_nb(state, board)
                calc_oracle.fill_soon_nb(board, work[calc_oracle.SOON_ROW])
                calc_oracle.count_unseen_nb(board, work[calc_oracle.UNSEEN_ROW])
                rows = np.zeros((4, calc_oracle.N_FEATURES))
                calc_oracle.pile_features_nb(
                    board,
                    work[calc_oracle.SOON_ROW],
                    work[calc_oracle.UNSEEN_ROW],
                    work[calc_oracle.TOPS_ROW],
                    rows,
                )
                mask, value = np.zeros(4, bool), np.zeros(4)
                mask[piles], value[piles] = True, means[raced]
                features.append(rows)
                masks.append(mask)
                values.append(value)
            calc.apply_action_nb(state, legal[i])
    return np.array(features), np.array(masks), np.array(values)


def fit(features, masks, values, start):
    """Weights minimising the soft cross-entropy above, from `start`."""
    from scipy.optimize import minimize

    scale = features.reshape(-1, features.shape[-1]).std(0) + 1e-9
    target = np.where(masks, values / TAU, -np.inf)
    target = np.exp(target - target.max(1, keepdims=True))
    target /= target.sum(1, keepdims=True)

    def loss(scaled):
        z = np.where(masks, -(features @ (scaled / scale)), -np.inf)
        z -= z.max(1, keepdims=True)
        p = np.exp(z)
        total = p.sum(1, keepdims=True)
        p /= total
        log_p = np.where(masks, z - np.log(total), 0.0)
        n = len(masks)
        gradient = ((target - p)[:, :, None] * features).sum((0, 1)) / scale / n
        return -(target * log_p).sum() / n + L2 * scaled @ scaled, gradient + 2 * L2 * scaled

    result = minimize(loss, start * scale, jac=True, method="L-BFGS-B")
    return result.x / scale


def solo_win_rate(placement, deals=200_000, seed=5):
    state = np.empty(calc.STATE_SIZE, np.int16)
    board = np.empty(calc.STATE_SIZE, np.int16)
    work = calc_oracle.new_work_nb()
    won = 0
    for deal in range(deals):
        calc.deal_nb(seed, deal, 4, state)
        calc_oracle.board_from_state_nb(state, board)
        won += calc_oracle.fitted_playout_nb(board, placement, work) == 52
    return won / deals


def _collect(task):
    return pile_decisions(*task)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rounds", type=int, nargs="?", default=2)
    parser.add_argument("deals", type=int, nargs="?", default=600, help="deals a round")
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()
    weights = calc_oracle.HAND_PLACEMENT.copy()
    data = []
    with multiprocessing.Pool(args.processes) as pool:
        for r in range(1, args.rounds + 1):
            seed, share = FIRST_SEED + r - 1, -(-args.deals // args.processes)
            tasks = [(seed, p * share, share, weights) for p in range(args.processes)]
            data.extend(pool.map(_collect, tasks))
            features, masks, values = (np.concatenate(part) for part in zip(*data, strict=True))
            weights = fit(features, masks, values, weights)
            print(f"round {r}: {len(masks):,} decisions; weights")
            print(np.array2string(weights, precision=4, separator=", ", max_line_width=88))
    hand, fitted = solo_win_rate(calc_oracle.HAND_PLACEMENT), solo_win_rate(weights)
    print(f"the playout alone, 200,000 deals of seed 5: hand {hand:.2%}, fitted {fitted:.2%}")


if __name__ == "__main__":
    main()
