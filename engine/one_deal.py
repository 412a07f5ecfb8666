"""Play one deal, seeded or laid out by the user, and return its move-log line."""

import numpy as np

from engine import rng
from engine.runner import LOG_END


def play_one(game, policy, params, rules, seed, deal, layout=None):
    """The move-log object (RULES.md format) of one deal played by policy.

    Without a layout this is exactly the deal and play of row (seed, deal) of a result
    file: the same kernel plays it. With a layout (move-log form), play starts there and
    the policy draws from the stream of (seed, deal).
    """
    module = game.module
    rules_vector = game.rules_vector(rules)
    param_vector = policy.param_vector(params)
    log = np.full((1, game.max_log(rules)), LOG_END, np.int16)
    header = {"game": game.name, "seed": seed, "deal": deal, "policy": policy.name}
    header |= game.nondefault_rules(rules)
    if layout is None:
        rows = np.zeros((1, len(game.columns)), np.int32)
        if policy.compiled:
            module.play_chunk_nb(policy.choose, seed, deal, rules_vector, param_vector, rows, log)
        else:
            state = np.zeros(module.STATE_SIZE, np.int16)
            play = getattr(module.play_nb, "py_func", module.play_nb)
            play(seed, deal, rules_vector, policy.choose, param_vector, state, log[0])
        return header | game.move_log(seed, deal, rules, _actions(log[0]))
    start = module.state_from_layout(layout, rules)
    state = start.copy()
    stream = rng.new_stream(seed, deal, rng.STREAM_POLICY)
    play_out = getattr(module.play_out_nb, "py_func", module.play_out_nb)
    play_out(seed, deal, rules_vector, state, policy.choose, param_vector, stream, log[0])
    return header | module.move_log(seed, deal, rules, _actions(log[0]), start=start)


def _actions(log):
    return [int(a) for a in log if a != LOG_END]
