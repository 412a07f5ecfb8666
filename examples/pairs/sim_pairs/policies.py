"""Two Pairs policies: the simplest, and one that reads a parameter by name."""

from numba import njit

from sim.engine import rng
from sim.policies.registry import Param, param_slots, policy
from sim_pairs.rules import POLICY_SIG


@policy("pairs")
@njit(POLICY_SIG, cache=True)
def first(state, legal, n_legal, params, stream):
    """The first legal pair, in cell order."""
    return 0


RANDOM_PARAMS = (Param("keep_first", float, 0.0, "chance of taking the first pair", 0.0, 1.0),)
(KEEP_FIRST,) = param_slots(RANDOM_PARAMS, "keep_first")


@policy("pairs", params=RANDOM_PARAMS)
@njit(POLICY_SIG, cache=True)
def random(state, legal, n_legal, params, stream):
    """A uniformly random legal pair, or the first pair with chance keep_first."""
    if rng.below_nb(stream, 1_000_000) < params[KEEP_FIRST] * 1_000_000:
        return 0
    return rng.below_nb(stream, n_legal)
