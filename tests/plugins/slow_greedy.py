"""A policy written outside the project, in plain Python (not compiled).

It plays exactly like the built-in greedy policy, so its rows can be compared; its
`delay_ms` parameter makes each deal slower still, for tests that need a long run.
"""

import time

from sim.engine.calc import MOVES
from sim.policies.calc import greedy as _compiled_greedy
from sim.policies.registry import Param, policy

_choose = _compiled_greedy.choose.py_func


@policy("calc", name="py-greedy", params=[Param("delay_ms", float, 0.0, "sleep per deal")])
def py_greedy(state, legal, n_legal, params, stream):
    """Greedy, interpreted: foundation first, else the lowest waste pile."""
    if params[0] > 0 and state[MOVES] == 0:
        time.sleep(params[0] / 1000)
    return _choose(state, legal, n_legal, params, stream)


not_a_policy = 42
