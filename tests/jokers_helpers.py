"""Hand-built Jokers positions for scenario tests."""

import numpy as np

from sim.engine import jokers
from sim.engine.cards import JOKER, parse_card

ACTIONS = {
    jokers.action_notation(a): a
    for a in range(jokers.ACTION_STRIDE * jokers.N_COLUMNS)
    if a % jokers.ACTION_STRIDE <= jokers.KIND_FOUNDATION
}


def position(columns, foundations="A A A A", reserve=0, max_moves=2000):
    """A state with columns written covered card first (`"8C JK 6C"`, `""` for empty;
    fewer than 10 columns leaves the others empty), the top rank of the foundations
    of C D H S, and jokers in the reserve."""
    state = np.zeros(jokers.STATE_SIZE, np.int16)
    for c, text in enumerate(columns):
        cards = [parse_card(card) for card in text.split()]
        for h, card in enumerate(cards):
            state[jokers.COLS + jokers.MAX_HEIGHT * c + h] = card
        state[jokers.HEIGHT + c] = len(cards)
    for suit, top in enumerate(foundations.split()):
        state[jokers.FOUND + suit] = "A23456789TJQK".index(top) + 1
    state[jokers.RESERVE] = reserve
    state[jokers.CAP] = min(max_moves, jokers.SATURATE)
    jokers.clear_scratch_nb(state)  # as dealt: no policy has decided anything yet
    return state


def columns_of(state):
    """The columns as text, covered card first (jokers as JK)."""
    from sim.engine.cards import card_name

    out = []
    for c in range(jokers.N_COLUMNS):
        height = state[jokers.HEIGHT + c]
        cells = state[
            jokers.COLS + jokers.MAX_HEIGHT * c : jokers.COLS + jokers.MAX_HEIGHT * c + height
        ]
        out.append(" ".join(card_name(min(int(x), JOKER)) for x in cells))
    return out


def legal_notation(state):
    buf = np.empty(jokers.N_ACTIONS, np.int16)
    n = jokers.legal_actions_nb(state, buf)
    return sorted(jokers.action_notation(int(a)) for a in buf[:n])


def play(state, *moves):
    for move in moves:
        assert move in legal_notation(state), move
        jokers.apply_action_nb(state, ACTIONS[move])
    return state


def cards_in_play(state):
    """Every card in the columns and the reserve, with the foundations' cards."""
    cards = []
    for c in range(jokers.N_COLUMNS):
        base = jokers.COLS + jokers.MAX_HEIGHT * c
        cards += [min(int(x), JOKER) for x in state[base : base + state[jokers.HEIGHT + c]]]
    cards += [JOKER] * int(state[jokers.RESERVE])
    for suit in range(4):
        cards += [4 * (r - 1) + suit for r in range(1, int(state[jokers.FOUND + suit]) + 1)]
    return cards
