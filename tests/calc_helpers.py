"""Hand-built Calculation positions for scenario tests."""

import numpy as np

from sim.engine import calc, rng
from sim.engine.calc import next_rank_nb
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


def winnable_by_memo_search(state):
    """Every line of play with the engine's own rules, positions remembered by their
    exact contents (waste piles in order): exhaustive, for deals a few cards long."""
    seen = {}
    legal = np.empty(calc.N_ACTIONS, np.int16)

    def key(state):
        piles = tuple(
            tuple(
                state[calc.WASTE + calc.PILE_CAP * w + h] // 4
                for h in range(state[calc.HEIGHT + w])
            )
            for w in range(state[calc.NWASTE])
        )
        return int(state[calc.POS]), tuple(state[calc.FCOUNT : calc.FCOUNT + 4]), piles

    def search(state):
        k = key(state)
        if k not in seen:
            n = calc.legal_actions_nb(state, legal)
            if n == 0:
                seen[k] = calc.score_nb(state) == 52
            else:
                seen[k] = False
                for action in legal[:n].copy():
                    child = state.copy()
                    calc.apply_action_nb(child, action)
                    if search(child):
                        seen[k] = True
                        break
        return seen[k]

    return search(state)


def random_short_deal(stream, n_cards, n_wastes, n_piled=0):
    """A deal whose foundations already hold all but `n_cards` cards: those cards,
    shuffled, form the stock, except `n_piled` of them dealt at random onto the piles."""
    missing = [0, 0, 0, 0]
    while sum(missing) < n_cards:
        k = rng.below_nb(stream, 4)
        missing[k] += missing[k] < 12
    state = np.zeros(calc.STATE_SIZE, np.int16)
    calc.set_start_nb(state, n_wastes)
    cards = []
    for k in range(4):
        count = 13 - missing[k]
        rank = k + 1
        for _ in range(count - 1):
            rank = next_rank_nb(rank, k + 1)
        need = next_rank_nb(rank, k + 1)
        state[calc.NEED + k] = 0 if count == 13 else need
        state[calc.FCOUNT + k] = count
        for _ in range(missing[k]):
            cards.append(4 * (need - 1) + len(cards) % 4)
            need = next_rank_nb(need, k + 1)
    cards = np.array(cards, np.int16)
    rng.shuffle_nb(stream, cards)
    for card in cards[:n_piled]:
        w = rng.below_nb(stream, n_wastes)
        state[calc.WASTE + calc.PILE_CAP * w + state[calc.HEIGHT + w]] = card
        state[calc.HEIGHT + w] += 1
    stock = cards[n_piled:]
    state[calc.POS] = calc.STOCK_SIZE - len(stock)
    state[calc.STOCK + state[calc.POS] : calc.STOCK + calc.STOCK_SIZE] = stock
    return state
