"""Play one deal, seeded or laid out by the user, and return its move-log line."""

from functools import partial

import numpy as np

from sim.engine import rng
from sim.engine.run.job import LOG_END, play_chunk_python
from sim.engine.run.move_log import outcome_label


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
        kernel = module.play_chunk_nb if policy.compiled else partial(play_chunk_python, module)
        kernel(policy.choose, seed, deal, rules_vector, param_vector, rows, log)
        return (
            header
            | game.move_log(seed, deal, rules, _actions(log[0]))
            | outcome_label(game, rows[0])
        )
    start = module.state_from_layout(layout, rules)
    state = start.copy()
    stream = rng.new_stream(seed, deal, rng.STREAM_POLICY)
    play_out = getattr(module.play_out_nb, "py_func", module.play_out_nb)
    play_out(seed, deal, rules_vector, state, policy.choose, param_vector, stream, log[0])
    line = module.move_log(seed, deal, rules, _actions(log[0]), start=start, layout=layout)
    return header | line | _outcome_from_row(game, state)


def _outcome_from_row(game, state):
    """The outcome the result row records: a solver's `unknown` is not in its moves."""
    row = np.zeros(len(game.columns), np.int32)
    game.module.write_result_nb(state, row)
    return outcome_label(game, row)


def _actions(log):
    return [int(a) for a in log if a != LOG_END]
