"""The compiled kernels of the Pairs policies (declared in sim_pairs.policies).

Lazily compiled (`@njit(cache=True)`, no signature): sim compiles one for the game's
POLICY_SIG when a run first plays it, and caches it on disk."""

from numba import njit

from sim.engine import rng
from sim.policies.registry import param_slots
from sim_pairs.policies import RANDOM_PARAMS

(KEEP_FIRST,) = param_slots(RANDOM_PARAMS, "keep_first")


@njit(cache=True)
def first_nb(state, legal, n_legal, params, stream):
    return 0


@njit(cache=True)
def random_nb(state, legal, n_legal, params, stream):
    if rng.below_nb(stream, 1_000_000) < params[KEEP_FIRST] * 1_000_000:
        return 0
    return rng.below_nb(stream, n_legal)
