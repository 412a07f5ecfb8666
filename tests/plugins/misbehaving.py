"""Plug-in Calculation policies that misbehave, as a careless or hostile author's might.

Each plays like greedy except on the deals whose stock starts with the card TRIGGER
(about one deal in 48), where it does the one wrong thing its name says.
"""

import os
import sys
import time

from numba import njit

from sim.engine.calc import FCOUNT, STOCK
from sim.engine.kernel import POLICY_SIG
from sim.policies.calc import greedy
from sim.policies.calc_kernels import greedy_nb
from sim.policies.registry import policy

TRIGGER = 5  # the code of a card that is not an ace..4, so it can lead the stock
_greedy = greedy.choose.py_func


@policy("calc", name="loops")
def loops(state, legal, n_legal, params, stream):
    """Never returns on the trigger deals."""
    while state[STOCK] == TRIGGER:
        time.sleep(0.05)
    return _greedy(state, legal, n_legal, params, stream)


@policy("calc", name="sleeps")
def sleeps(state, legal, n_legal, params, stream):
    """Sleeps for an hour, in one call, on the trigger deals."""
    if state[STOCK] == TRIGGER:
        time.sleep(3600)
    return _greedy(state, legal, n_legal, params, stream)


@policy("calc", name="exits")
def exits(state, legal, n_legal, params, stream):
    """Calls sys.exit on the trigger deals."""
    if state[STOCK] == TRIGGER:
        sys.exit(3)
    return _greedy(state, legal, n_legal, params, stream)


@policy("calc", name="dies")
def dies(state, legal, n_legal, params, stream):
    """Ends its own process on the trigger deals, as a crash in native code would."""
    if state[STOCK] == TRIGGER:
        os._exit(9)
    return _greedy(state, legal, n_legal, params, stream)


@policy("calc", name="raises")
def raises(state, legal, n_legal, params, stream):
    """Divides by zero on the trigger deals."""
    if state[STOCK] == TRIGGER:
        return 1 // 0
    return _greedy(state, legal, n_legal, params, stream)


@policy("calc", name="bad-index")
def bad_index(state, legal, n_legal, params, stream):
    """Returns an index past the legal list on the trigger deals."""
    if state[STOCK] == TRIGGER:
        return n_legal
    return _greedy(state, legal, n_legal, params, stream)


@policy("calc", name="cheats")
def cheats(state, legal, n_legal, params, stream):
    """Fills the foundations in the state it is given on the trigger deals."""
    if state[STOCK] == TRIGGER:
        state[FCOUNT : FCOUNT + 4] = 13
    return _greedy(state, legal, n_legal, params, stream)


@policy("calc", name="cheats-compiled")
@njit(POLICY_SIG, cache=True)
def cheats_compiled_nb(state, legal, n_legal, params, stream):
    """Compiled, and fills the foundations on the trigger deals."""
    if state[STOCK] == TRIGGER:
        for k in range(4):
            state[FCOUNT + k] = 13
    return 0


@policy("calc", name="loops-compiled")
@njit(POLICY_SIG, cache=True)
def loops_compiled_nb(state, legal, n_legal, params, stream):
    """Compiled, and never returns on the trigger deals: it holds the interpreter's lock."""
    while state[STOCK] == TRIGGER:
        pass
    return greedy_nb(state, legal, n_legal, params, stream)


@policy("calc", name="interrupts")
def interrupts(state, legal, n_legal, params, stream):
    """Raises KeyboardInterrupt itself on the trigger deals."""
    if state[STOCK] == TRIGGER:
        raise KeyboardInterrupt
    return _greedy(state, legal, n_legal, params, stream)


@policy("calc", name="writes-legal")
def writes_legal(state, legal, n_legal, params, stream):
    """Rewrites the legal list on the trigger deals."""
    if state[STOCK] == TRIGGER:
        legal[0] = 3
    return _greedy(state, legal, n_legal, params, stream)


@policy("calc", name="returns-float")
def returns_float(state, legal, n_legal, params, stream):
    """Returns 0.5 on the trigger deals."""
    if state[STOCK] == TRIGGER:
        return 0.5
    return _greedy(state, legal, n_legal, params, stream)
