"""A policy written outside the project, in plain Python (not compiled).

It plays exactly like the built-in greedy policy, so its rows can be compared.
"""

from policies.calc import greedy as _compiled_greedy
from policies.registry import policy

_choose = _compiled_greedy.choose.py_func


@policy("calc", name="py-greedy")
def py_greedy(state, legal, n_legal, params, stream):
    """Greedy, interpreted: foundation first, else the lowest waste pile."""
    return _choose(state, legal, n_legal, params, stream)


not_a_policy = 42
