"""A policy written outside the project, in plain Python (not compiled).

It plays exactly like the built-in greedy policy, so its rows can be compared; its
`delay_ms` parameter makes each deal slower still, for tests that need a long run.
"""

import time

from sim.engine.calc import MOVES
from sim.policies.calc import greedy as _compiled_greedy
from sim.policies.registry import Param, param_slots, policy

_choose = _compiled_greedy.choose.py_func
PY_GREEDY_PARAMS = (Param("delay_ms", float, 0.0, "sleep per deal"),)
(DELAY_MS,) = param_slots(PY_GREEDY_PARAMS, "delay_ms")


@policy("calc", name="py-greedy", params=PY_GREEDY_PARAMS)
def py_greedy(state, legal, n_legal, params, stream):
    """Greedy, interpreted: foundation first, else the lowest waste pile."""
    if params[DELAY_MS] > 0 and state[MOVES] == 0:
        time.sleep(params[DELAY_MS] / 1000)
    return _choose(state, legal, n_legal, params, stream)


not_a_policy = 42
