"""Exact play of the last cards (policies.calc_endgame): chances of winning under best
play, for a player who sees which cards are unseen but not their order."""

import itertools

import numpy as np
from calc_helpers import ACTIONS, position, random_short_deal
from test_calc_oracle import random_endgame

from sim.engine import calc, rng
from sim.policies import calc_endgame, calc_oracle
from sim.policies.registry import resolve

F1_NEEDS_TEN = [(10, 9), (0, 13), (0, 13), (0, 13)]  # F1 holds A..9, F2-F4 are complete


def worths(state, budget=10**7):
    """calc_endgame's chance of winning after each legal action of state."""
    board = np.empty(calc.STATE_SIZE, np.int16)
    calc_oracle.board_from_state_nb(state, board)
    legal = np.empty(calc.N_ACTIONS, np.int16)
    n = calc.legal_actions_nb(state, legal)
    table = calc_endgame.new_worth_table_nb(budget)
    frames = calc_endgame.new_frames_nb()
    spent = np.zeros(1, np.int64)
    found = {}
    for action in legal[:n]:
        found[calc.action_notation(int(action))] = calc_endgame.action_worth_nb(
            board, action, table, spent, budget, frames
        )
    return found


def best_chance(state, memo):
    """Chance of winning state under best play, by the rules alone: the most over the
    legal actions; after the turned card is played, the mean over every unseen card
    turned next (each card, not each rank, equally likely). No pruning, no hashing
    beyond the exact position."""
    key = exact_position(state)
    if key not in memo:
        legal = np.empty(calc.N_ACTIONS, np.int16)
        n = calc.legal_actions_nb(state, legal)
        if n == 0:
            memo[key] = 1.0 if calc.score_nb(state) == 52 else 0.0
        else:
            memo[key] = max(after(state, action, memo) for action in legal[:n].copy())
    return memo[key]


def exact_position(state):
    """Everything of state that play can still depend on: the stock from the turned card
    on, in order, the foundations, and each waste pile's cards in order."""
    pos = int(state[calc.POS])
    piles = tuple(
        tuple(state[calc.WASTE + calc.PILE_CAP * w : calc.WASTE + calc.PILE_CAP * w + h].tolist())
        for w, h in enumerate(state[calc.HEIGHT : calc.HEIGHT + state[calc.NWASTE]])
    )
    stock = tuple(state[calc.STOCK + pos : calc.STOCK + calc.STOCK_SIZE].tolist())
    return stock, tuple(state[calc.NEED : calc.NEED + 4].tolist()), piles


def after(state, action, memo):
    """Chance of winning after `action` under best play (best_chance)."""
    child = state.copy()
    calc.apply_action_nb(child, action)
    pos = child[calc.POS]
    if action >= calc.ACT_FROM_WASTE or pos >= calc.STOCK_SIZE:
        return best_chance(child, memo)
    chances = []
    for slot in range(pos, calc.STOCK_SIZE):
        turned = child.copy()
        turned[[calc.STOCK + pos, calc.STOCK + slot]] = child[[calc.STOCK + slot, calc.STOCK + pos]]
        chances.append(best_chance(turned, memo))
    return sum(chances) / len(chances)


def test_C5_one_pile_turning_K_with_Q_J_T_unseen_wins_five_times_in_six():
    # F1 holds A..9 and needs T, J, Q, K; the other foundations are complete. One waste
    # pile, the K turned, Q J T unseen. The K goes onto the pile; then, by the card
    # turned next:
    #   T (1/3): T up, and J and Q go up in either order (Q waits on the K): won
    #   Q (1/3): pile K Q; J onto it or up after T: won either way
    #   J (1/3): pile K J; then T (1/2) wins, but Q (1/2) covers the J: lost
    # so 1/3 + 1/3 + 1/6 = 5/6, with no choice to make.
    state = position(stock=["KC", "QC", "JC", "TC"], wastes=((),), foundations=F1_NEEDS_TEN)
    assert worths(state) == {"s>w1": 5 / 6}
    assert best_chance(state, {}) == 5 / 6


def test_C5_the_K_onto_an_empty_pile_wins_surely_where_onto_the_Q_it_locks():
    # F1 needs T; waste 1 holds Q, waste 2 is empty; K turned, J and T unseen.
    #   K onto waste 2:  w1 Q, w2 K  -- T and J go up in either order (J may wait on the
    #                                   Q or the K), then Q, then K: won whatever comes
    #   K onto the Q:    w1 Q K      -- the K covers the Q that F1 wants first: lost
    state = position(stock=["KC", "JC", "TC"], wastes=(("QC",), ()), foundations=F1_NEEDS_TEN)
    assert worths(state) == {"s>w1": 0.0, "s>w2": 1.0}


def short_deals(seed, each=30):
    """Short deals of 6 to 8 cards with one or two waste piles, a few cards piled:
    small enough for the plain expectimax, and often neither surely won nor lost."""
    stream = rng.new_stream(seed, 0, 9)
    for n_cards, n_wastes, n_piled in [(6, 1, 2), (7, 1, 3), (7, 2, 2), (8, 2, 3)]:
        for _ in range(each):
            yield random_short_deal(stream, n_cards, n_wastes, n_piled)


def test_C5_C6_C7_worths_equal_a_plain_expectimax_over_the_rules():
    # Random endgames hold choices of foundation and chances of holding a card back;
    # the worths of every legal action must equal those of the plain expectimax.
    stream = rng.new_stream(12, 0, 9)
    fractional = 0
    for state in itertools.chain(short_deals(12), (random_endgame(stream, 6) for _ in range(40))):
        memo = {}
        legal = np.empty(calc.N_ACTIONS, np.int16)
        n = calc.legal_actions_nb(state, legal)
        found = worths(state)
        for action in legal[:n]:
            expected = after(state, action, memo)
            assert abs(found[calc.action_notation(int(action))] - expected) < 1e-12
            fractional += 0 < expected < 1
    assert fractional > 25


def test_worths_ignore_the_order_of_the_unseen_cards():
    stream = rng.new_stream(13, 0, 9)
    shuffler = rng.new_stream(14, 0, 9)
    compared = 0
    while compared < 40:
        state = random_endgame(stream, max_cards=7)
        first = state[calc.POS] + 1
        if calc.STOCK_SIZE - first < 3:
            continue
        compared += 1
        reordered = state.copy()
        rng.shuffle_nb(shuffler, reordered[calc.STOCK + first : calc.STOCK + calc.STOCK_SIZE])
        assert worths(reordered) == worths(state)


def test_the_choice_is_an_action_of_greatest_worth_or_none_when_the_budget_runs_out():
    board = np.empty(calc.STATE_SIZE, np.int16)
    legal = np.empty(calc.N_ACTIONS, np.int16)
    out = np.empty(calc.N_ACTIONS)
    chosen = gave_up = 0
    for state in short_deals(15):
        calc_oracle.board_from_state_nb(state, board)
        n = calc.legal_actions_nb(state, legal)
        found = worths(state)
        choice = calc_endgame.endgame_choice_nb(board, legal, n, 10**7, out)
        if calc_oracle.safe_foundation_move_nb(board) >= 0:
            continue  # taken unweighed (below)
        if max(found.values()) == 0:
            assert choice == -1  # all lost: the caller picks
            continue
        assert found[calc.action_notation(int(legal[choice]))] == max(found.values())
        chosen += 1
        if calc_endgame.endgame_choice_nb(board, legal, n, 1, out) == -1:
            gave_up += 1
    assert chosen > 30 and gave_up > 5


def test_C6_a_safe_foundation_move_is_taken_unweighed():
    # F1 needs T and no other foundation wants a T: the T on waste 1 must go up in every
    # winning line, so it goes up before anything is searched.
    state = position(stock=["KC", "JC", "QC"], wastes=(("TC",), ()), foundations=F1_NEEDS_TEN)
    board = np.empty(calc.STATE_SIZE, np.int16)
    calc_oracle.board_from_state_nb(state, board)
    legal = np.empty(calc.N_ACTIONS, np.int16)
    n = calc.legal_actions_nb(state, legal)
    choice = calc_endgame.endgame_choice_nb(board, legal, n, 1, np.empty(n))
    assert legal[choice] == ACTIONS["w1>f1"]


def test_every_order_of_three_unseen_cards_is_weighed_alike():
    # The chance of 5/6 above, recomputed over each of the six orders of Q J T under
    # the K: the worth is the same whichever order lies in the stock.
    for order in itertools.permutations(["QC", "JC", "TC"]):
        state = position(stock=["KC", *order], wastes=((),), foundations=F1_NEEDS_TEN)
        assert worths(state) == {"s>w1": 5 / 6}


def test_mc_plays_an_action_of_greatest_worth_once_few_cards_are_unseen():
    # A race of two orders often picks a worse action (with endgame=-1 this fails):
    # with three cards or fewer unseen the exact endgame must decide instead.
    mc = resolve("calc", "mc")
    params = mc.param_vector(mc.settings(["samples=2", "endgame=3", "endgame_nodes=100000000"]))
    legal = np.empty(calc.N_ACTIONS, np.int16)
    state = np.zeros(calc.STATE_SIZE, np.int16)
    checked = fractional = 0
    for deal in range(12):
        calc.deal_nb(2, deal, 4, state)
        stream = rng.new_stream(2, deal, rng.STREAM_POLICY)
        while (n := calc.legal_actions_nb(state, legal)) > 0:
            choice = mc.choose(state, legal, n, params, stream)
            if calc.STOCK_SIZE - 1 - state[calc.POS] <= 3:
                found = worths(state)
                best = max(found.values())
                if best > 0:
                    assert found[calc.action_notation(int(legal[choice]))] == best
                    checked += 1
                    fractional += best < 1 or min(found.values()) < best
            calc.apply_action_nb(state, legal[choice])
    assert checked > 30 and fractional > 5
