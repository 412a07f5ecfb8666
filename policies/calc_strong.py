"""Strong Calculation policies: Monte Carlo search, its playout heuristic, and an oracle
that sees the stock."""

import numpy as np
from numba import njit

from sim.engine.calc import POS, STATE_SIZE, STOCK_SIZE
from sim.policies import calc_endgame, calc_oracle
from sim.policies.calc import MC_PARAMS, ORACLE_PARAMS
from sim.policies.registry import param_slots

SAMPLES, CONFIDENCE, SCORE_WEIGHT, ENDGAME, ENDGAME_NODES = param_slots(
    MC_PARAMS, "samples", "confidence", "score_weight", "endgame", "endgame_nodes"
)

(NODES,) = param_slots(ORACLE_PARAMS, "nodes")


@njit(cache=True)
def mc_nb(state, legal, n_legal, params, stream):
    """The kernel of policy `mc` (sim.policies.calc)."""
    unseen = max(STOCK_SIZE - 1 - state[POS], 0)  # -1 once the stock is done
    if unseen <= params[ENDGAME]:
        board = np.empty(STATE_SIZE, np.int16)
        calc_oracle.board_from_state_nb(state, board)
        budget = np.int64(params[ENDGAME_NODES])
        choice = calc_endgame.endgame_choice_nb(board, legal, n_legal, budget, np.empty(n_legal))
        if choice >= 0:
            return choice
    return calc_oracle.monte_carlo_choice_nb(
        state,
        legal,
        n_legal,
        np.int64(params[SAMPLES]),
        params[SCORE_WEIGHT],
        params[CONFIDENCE],
        stream,
        calc_oracle.PLACEMENT_WEIGHTS,
        np.empty(n_legal),
    )


@njit(cache=True)
def rollout_nb(state, legal, n_legal, params, stream):
    """The kernel of policy `rollout` (sim.policies.calc)."""
    return calc_oracle.rollout_choice_nb(state, legal, n_legal)


@njit(cache=True)
def oracle_nb(state, legal, n_legal, params, stream):
    """The kernel of policy `oracle` (sim.policies.calc)."""
    return calc_oracle.oracle_choice_nb(state, legal, n_legal, np.int64(params[NODES]))
