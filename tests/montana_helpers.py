"""Hand-built Montana positions for scenario tests."""

import numpy as np

from sim.engine import montana
from sim.engine.cards import parse_card
from sim.policies.registry import builtin_policies

POLICIES = {p.name: p for p in builtin_policies("montana")}


def position(*rows, redeals=2, used=0):
    """A state from 4 rows in grid notation (13 cells each, `..` for a gap)."""
    state = np.zeros(montana.STATE_SIZE, np.int16)
    montana.set_grid_nb(state, montana.parse_grid("/".join(rows)), redeals)
    state[montana.REDEALS] = used
    return state


def legal_notation(state):
    buf = np.empty(montana.MAX_LEGAL, np.int16)
    n = montana.legal_actions_nb(state, buf)
    return [montana.action_notation(int(a)) for a in buf[:n]]


def action(notation):
    card, _, cell = notation.partition(">r")
    row, _, col = cell.partition("c")
    target = montana.COLS * (int(row) - 1) + int(col) - 1
    return montana.action_nb(parse_card(card), target)


def play(state, *moves):
    for move in moves:
        assert montana.is_legal_nb(state, action(move)), move
        montana.apply_action_nb(state, action(move))
    return state


def grid_rows(state):
    return montana.grid_notation(state).split("/")


def play_deals(policy, seed, n, redeals=2, max_moves=5000, params=None, log_width=None):
    """Result rows and logs of deals 0..n-1 played by a built-in policy."""
    rules = np.array([redeals, max_moves], np.int64)
    rows = np.zeros((n, len(montana.COLUMNS)), np.int32)
    width = max_moves + redeals if log_width is None else log_width
    logs = np.full((n, width), np.iinfo(np.int16).min, np.int16)
    vector = policy.param_vector(policy.settings(params or ()))
    montana.play_chunk_nb(policy.choose, seed, 0, rules, vector, rows, logs)
    return rows, logs


def column(name):
    return montana.COLUMNS.index(name)
