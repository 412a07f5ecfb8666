"""Hand-built Calculation positions for scenario tests."""

import numpy as np

from sim.engine import calc
from sim.engine.cards import parse_card


def position(stock=(), wastes=((), (), (), ()), foundations=None):
    """A state with `stock` still to turn (first turned first), waste piles listed
    bottom to top, and foundations given as (next rank needed, cards on it) per F1..F4
    (default: just the bases)."""
    state = np.zeros(calc.STATE_SIZE, np.int16)
    calc.set_start_nb(state, len(wastes))
    first = calc.STOCK_SIZE - len(stock)
    state[calc.POS] = first
    for i, card in enumerate(stock):
        state[calc.STOCK + first + i] = parse_card(card)
    for w, pile in enumerate(wastes):
        for h, card in enumerate(pile):
            state[calc.WASTE + calc.PILE_CAP * w + h] = parse_card(card)
        state[calc.HEIGHT + w] = len(pile)
    if foundations:
        for k, (need, count) in enumerate(foundations):
            state[calc.NEED + k] = need
            state[calc.FCOUNT + k] = count
    return state


def legal_notation(state):
    buf = np.empty(calc.N_ACTIONS, np.int16)
    n = calc.legal_actions_nb(state, buf)
    return sorted(calc.action_notation(int(a)) for a in buf[:n])


def play(state, *moves):
    for move in moves:
        action = ACTIONS[move]
        assert calc.is_legal_nb(state, action), move
        calc.apply_action_nb(state, action)
    return state


ACTIONS = {calc.action_notation(a): a for a in range(calc.N_ACTIONS)}
