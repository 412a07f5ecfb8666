"""Strong Calculation policies: Monte Carlo search, its playout heuristic, and an oracle
that sees the stock."""

import numpy as np
from numba import njit

from sim.engine.calc import POLICY_SIG
from sim.policies import calc_oracle
from sim.policies.registry import Param, param_slots, policy

MC_PARAMS = (
    Param("samples", int, 256, "most random stock orders per decision", 1, 1e6),
    Param("confidence", float, 2.0, "standard errors that drop a trailing action", 0, 100),
    Param("score_weight", float, 0.5, "value of a full score (cubed) next to a win", 0, 100),
)
SAMPLES, CONFIDENCE, SCORE_WEIGHT = param_slots(MC_PARAMS, "samples", "confidence", "score_weight")

ORACLE_PARAMS = (Param("nodes", int, 100000, "positions the search may expand", 1, 1e9),)
(NODES,) = param_slots(ORACLE_PARAMS, "nodes")


@policy("calc", name="mc", params=MC_PARAMS)
@njit(POLICY_SIG, cache=True)
def mc(state, legal, n_legal, params, stream):
    """Monte Carlo search over the unseen cards: try each action on sampled stocks.

    The policy sees what a player sees: foundations, waste piles, the turned card and
    which cards are still in the stock, never their order. At each decision it plays
    every distinct legal action (each foundation it could feed, or else each waste
    pile) followed by the `rollout` heuristic to the end of the deal, on random orders
    of the unseen cards drawn from its own stream, the same orders for every action.
    An action is worth 1 per win plus score_weight * (score / 52)**3; actions whose mean
    trails the leader's by `confidence` standard errors drop out after each batch of
    16 orders, and the race stops with one action left or after `samples` orders.
    Safe foundation moves are made at once, and once at most one card is unseen the
    exact solver decides.
    """
    return calc_oracle.monte_carlo_choice_nb(
        state,
        legal,
        n_legal,
        np.int64(params[SAMPLES]),
        params[SCORE_WEIGHT],
        params[CONFIDENCE],
        stream,
    )


@policy("calc", name="rollout")
@njit(POLICY_SIG, cache=True)
def rollout(state, legal, n_legal, params, stream):
    """The playout heuristic of `mc` on its own: fast, and the base mc improves on.

    Every card that fits a foundation goes there (where it fits several, to the one
    whose next card lies on a waste top, else the one with fewest cards). Any other
    card goes where a weighted cost is lowest: covering a top card needed later is
    cheap, the more so when the card comes right before it on a foundation; covering
    a card needed sooner is dear, less so when other copies of that rank are unseen or
    on other waste tops; an empty pile costs about as much as burying; kings go onto
    empty piles or other kings. The weights (engine.calc_oracle.PLAYOUT_DEFAULTS) were
    tuned for the win rate of this heuristic alone.
    """
    return calc_oracle.rollout_choice_nb(state, legal, n_legal)


@policy("calc", name="oracle", params=ORACLE_PARAMS)
@njit(POLICY_SIG, cache=True)
def oracle(state, legal, n_legal, params, stream):
    """It cheats: told the whole stock order, it searches for a line that wins.

    Not a player's policy: it reads the order of the stock, which no player sees, to
    measure how many deals can be won at all, the ceiling for every honest policy.
    Depth-first search over all legal actions (every foundation a card fits, holding a
    card back, every distinct waste pile), best playout first, with a transposition
    table of positions shown lost (waste piles as a multiset) and forced safe
    foundation moves; searches allowing few deviations from the playouts come first,
    remembering the positions they searched in vain. A position is also shown lost
    when even the relaxed game in which every stock card may skip the waste piles is
    lost (engine.calc_oracle.relaxed_lost_nb).
    It searches once, at its first decision: a winning line found is kept in the
    state as its plan and played out; a deal shown lost is marked lost. After `nodes`
    positions without a win or a proof it gives up, marks the deal unknown (the
    result's outcome column says so) and plays the action with the best playout at
    each turn.
    """
    return calc_oracle.oracle_choice_nb(state, legal, n_legal, np.int64(params[NODES]))
