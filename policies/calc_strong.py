"""Strong Calculation policies: Monte Carlo search, its playout heuristic, and an oracle
that sees the stock."""

import numpy as np
from numba import njit

from sim.policies import calc_oracle
from sim.policies.calc import MC_PARAMS, ORACLE_PARAMS
from sim.policies.registry import param_slots

SAMPLES, CONFIDENCE, SCORE_WEIGHT = param_slots(MC_PARAMS, "samples", "confidence", "score_weight")

(NODES,) = param_slots(ORACLE_PARAMS, "nodes")


@njit(cache=True)
def mc_nb(state, legal, n_legal, params, stream):
    """The kernel of policy `mc` (sim.policies.calc)."""
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
