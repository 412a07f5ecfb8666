"""The oracle search (policies.calc_oracle): exact verdicts on positions small enough to check."""

import numpy as np
import pytest
from calc_helpers import position, random_short_deal, winnable_by_memo_search

from sim.engine import calc, rng
from sim.engine.calc import next_rank_nb
from sim.policies import calc_oracle
from sim.policies.registry import resolve


def verdict(state, budget=10**6):
    """The search's verdict on state, and the winning line it found (else empty)."""
    board = np.empty(calc.STATE_SIZE, np.int16)
    calc_oracle.board_from_state_nb(state, board)
    keys, stamps = calc_oracle.new_stamped_table_nb(12)
    winning = np.empty(calc_oracle.MAX_DEPTH, np.int16)
    before = visible_position(board)
    found, _, length = calc_oracle.oracle_search_nb(board, budget, keys, stamps, 1, winning)
    assert visible_position(board) == before, "the search must leave the board as it found it"
    return found, winning[:length].tolist()


def visible_position(board):
    piles = tuple(
        tuple(board[calc.WASTE + calc.PILE_CAP * w + h] for h in range(board[calc.HEIGHT + w]))
        for w in range(board[calc.NWASTE])
    )
    return tuple(board[: calc.HEIGHT].tolist()), piles


def winnable_by_brute_force(state):
    """Every line of play, tried with the engine's own rules (no pruning, no hashing)."""
    legal = np.empty(calc.N_ACTIONS, np.int16)
    n = calc.legal_actions_nb(state, legal)
    if n == 0:
        return calc.score_nb(state) == 52
    for action in legal[:n].copy():
        child = state.copy()
        calc.apply_action_nb(child, action)
        if winnable_by_brute_force(child):
            return True
    return False


F1_NEEDS_TEN = [(10, 9), (0, 13), (0, 13), (0, 13)]  # F1 holds A..9, F2-F4 are complete


def test_C5_lost_deal_is_proved_lost_with_two_wastes():
    # F1 needs T; the stock turns J, Q, K, then T. No foundation takes J, Q or K before
    # the T, so all three go onto the two waste piles and one pile must hold two of
    # them. Whatever lies on top there is needed after what lies under it (F1 wants
    # J, Q, K in that order), so after T the foundation waits for a buried card:
    #     w1: J K   or   w1: J      or   w1: J Q ...   (all lost)
    #     w2: Q          w2: Q K
    state = position(stock=["JC", "QC", "KC", "TC"], wastes=((), ()), foundations=F1_NEEDS_TEN)
    assert verdict(state)[0] == calc.OUTCOME_LOST
    assert not winnable_by_brute_force(state)


def test_C5_three_wastes_win_when_each_card_gets_its_own_pile():
    # The same stock with three piles: J, Q and K each on a pile of their own, then T,
    # J, Q, K go up in turn. Covering any of them with another loses.
    state = position(stock=["JC", "QC", "KC", "TC"], wastes=((), (), ()), foundations=F1_NEEDS_TEN)
    found, line = verdict(state)
    assert found == calc.OUTCOME_WON
    assert line[0] == calc.ACT_TO_WASTE  # the three empty piles are one choice
    assert plays_to_a_win(state, line)


def plays_to_a_win(state, line):
    """True when every action of line is legal in turn (engine rules) and all 52 cards
    end on the foundations."""
    state = state.copy()
    for action in line:
        if not calc.is_legal_nb(state, action):
            return False
        calc.apply_action_nb(state, action)
    return calc.score_nb(state) == 52


def random_endgame(stream, max_cards):
    """A position near the end: foundations a few cards short, those cards shuffled
    between the stock and up to three waste piles."""
    foundations, missing = [], []
    for k in range(4):
        count = 13 - rng.below_nb(stream, 4)
        need = k + 1
        for _ in range(count):
            need = next_rank_nb(need, k + 1)
        foundations.append((0 if count == 13 else need, count))
        rank = need
        for _ in range(13 - count):
            missing.append(rank)
            rank = next_rank_nb(rank, k + 1)
    missing = missing[:max_cards] if len(missing) > max_cards else missing
    cards = np.array([4 * (r - 1) + i % 4 for i, r in enumerate(missing)], np.int16)
    rng.shuffle_nb(stream, cards)
    n_wastes = 1 + rng.below_nb(stream, 3)
    piles = [[] for _ in range(n_wastes)]
    n_stock = rng.below_nb(stream, len(cards) + 1)
    for card in cards[n_stock:]:
        piles[rng.below_nb(stream, n_wastes)].append(card)
    state = np.zeros(calc.STATE_SIZE, np.int16)
    calc.set_start_nb(state, n_wastes)
    state[calc.POS] = calc.STOCK_SIZE - n_stock
    state[calc.STOCK + calc.STOCK_SIZE - n_stock : calc.STOCK + calc.STOCK_SIZE] = cards[:n_stock]
    for w, pile in enumerate(piles):
        for h, card in enumerate(pile):
            state[calc.WASTE + calc.PILE_CAP * w + h] = card
        state[calc.HEIGHT + w] = len(pile)
    for k, (need, count) in enumerate(foundations):
        state[calc.NEED + k] = need
        state[calc.FCOUNT + k] = count
    return state


def test_C5_C6_C7_verdicts_match_brute_force_on_random_endgames():
    # Random endgames cover holding cards back and choosing between foundations.
    stream = rng.new_stream(5, 0, 9)
    outcomes = set()
    for _ in range(150):
        state = random_endgame(stream, max_cards=5)
        found, line = verdict(state)
        expected = calc.OUTCOME_WON if winnable_by_brute_force(state) else calc.OUTCOME_LOST
        assert found == expected
        assert found == calc.OUTCOME_LOST or plays_to_a_win(state, line)
        outcomes.add(found)
    assert outcomes == {calc.OUTCOME_WON, calc.OUTCOME_LOST}


def test_deadlock_test_never_condemns_a_winnable_endgame():
    stream = rng.new_stream(6, 0, 9)
    board = np.empty(calc.STATE_SIZE, np.int16)
    condemned = 0
    for _ in range(300):
        state = random_endgame(stream, max_cards=6)
        calc_oracle.board_from_state_nb(state, board)
        if calc_oracle.deadlocked_nb(board):
            condemned += 1
            assert not winnable_by_brute_force(state)
    assert condemned > 10


def test_unknown_when_the_budget_runs_out():
    state = np.zeros(calc.STATE_SIZE, np.int16)
    for deal in range(50):
        calc.deal_nb(0, deal, 3, state)
        found, _ = verdict(state, budget=3)
        if found == calc.OUTCOME_UNKNOWN:
            return
    pytest.fail("a budget of three positions decided fifty whole deals")


def play_policy(name, state, pairs=()):
    """Play state to the end with a policy, in place; return the actions played.

    A plain loop over the compiled policy (compiling calc.play_out_nb for one more
    policy would cost more than these few deals)."""
    policy = resolve("calc", name)
    params = policy.param_vector(policy.settings(pairs))
    stream = rng.new_stream(0, 0, 1)
    legal = np.empty(calc.N_ACTIONS, np.int16)
    actions = []
    while (n := calc.legal_actions_nb(state, legal)) > 0:
        action = legal[policy.choose(state, legal, n, params, stream)]
        calc.apply_action_nb(state, action)
        actions.append(int(action))
    return actions


def play_oracle(state, nodes):
    """Play state to the end with the oracle policy; return (result row, actions)."""
    actions = play_policy("oracle", state, [f"nodes={nodes}"])
    row = np.zeros(len(calc.COLUMNS), np.int32)
    calc.write_result_nb(state, row)
    return row, np.array(actions, np.int16)


OUTCOME = calc.COLUMNS.index("outcome")


def test_oracle_searches_once_then_plays_the_plan_it_stored():
    state = np.zeros(calc.STATE_SIZE, np.int16)
    verdicts = []
    for deal in range(8):
        calc.deal_nb(0, deal, 4, state)
        row, actions = play_oracle(state, 20000)
        verdicts.append(state[calc.SCRATCH_VERDICT])
        if state[calc.SCRATCH_VERDICT] == calc.OUTCOME_WON:
            assert row[0] == 1 and calc.OUTCOMES[row[OUTCOME]] == "won"
            assert state[calc.SCRATCH_PLAN_LEN] == len(actions)
            assert (state[calc.SCRATCH_PLAN : calc.SCRATCH_PLAN + len(actions)] == actions).all()
    assert calc.OUTCOME_WON in verdicts


def test_oracle_out_of_budget_marks_the_deal_unknown():
    state = np.zeros(calc.STATE_SIZE, np.int16)
    for deal in range(30):
        calc.deal_nb(0, deal, 3, state)
        row, _ = play_oracle(state, 5)
        if state[calc.SCRATCH_VERDICT] == calc.OUTCOME_UNKNOWN and row[0] == 0:
            assert calc.OUTCOMES[row[OUTCOME]] == "unknown"
            return
    pytest.fail("five positions of search settled thirty deals with three wastes")


def cards(text):
    return text.split()


# A whole deal, 4 wastes. The first 39 cards go straight onto the foundations: F1 climbs
# to 4, F2-F4 are completed. F1 then needs a 5, which comes last; the eight cards it
# takes after the 5 come before it, in this order of need on F1 (5 = 0):
#     8:3  T:5  K:8  J:6  9:4  6:1  Q:7  7:2
# so the four piles must hold them with cards needed sooner above cards needed later,
# and four is just enough: the longest run of cards each needed after the one before
# (8 T J Q) is four long.
CAREFUL_DEAL = {
    "bases": ["AC", "2C", "3C", "4C"],
    "stock": cards(
        "4D 6C 6D 8C 2D 3D 9C QC QD 8D TC 3H 2H 7C JC 5C 8H 2S QH AD 6H 3S TD JD AH 5D "
        "5H 4H 7D 9D 9H AS JH 4S 7H KC TH KD KH 8S TS KS JS 9S 6S QS 7S 5S"
    ),
}


def test_C4_C5_oracle_wins_a_deal_the_heuristics_lose_by_careless_placement():
    state = calc.state_from_layout(CAREFUL_DEAL, {"wastes": 4})
    for name in ("greedy", "kings-bottom", "planner", "rollout"):
        played = state.copy()
        play_policy(name, played)
        assert calc.score_nb(played) < 52, name
    row, actions = play_oracle(state.copy(), 100000)
    assert calc.OUTCOMES[row[OUTCOME]] == "won"
    assert plays_to_a_win(state, actions)


def test_C5_oracle_proves_a_hand_built_position_lost():
    # F1 needs 7, F2-F4 are complete, four empty wastes; the stock turns 8 9 T J Q
    # (each needed after the one before), then 7 and K. Five cards that F1 takes in
    # the order they come need five piles: the fifth buries a card needed before it.
    state = position(
        stock=["8C", "9C", "TC", "JC", "QC", "7C", "KC"],
        foundations=[(7, 6), (0, 13), (0, 13), (0, 13)],
    )
    assert not winnable_by_brute_force(state)
    row, _ = play_oracle(state, 100000)
    assert state[calc.SCRATCH_VERDICT] == calc.OUTCOME_LOST
    assert calc.OUTCOMES[row[OUTCOME]] == "unwinnable"


def test_C4_C5_C6_C7_verdicts_match_exhaustive_search_on_short_deals():
    # Whole short deals (ten to thirteen cards to turn onto one or two empty piles)
    # and short deals with cards already piled: the solver, with every pruning on,
    # must win exactly those an exhaustive search wins, and prove the others lost.
    stream = rng.new_stream(8, 0, 9)
    deals = (random_short_deal(stream, 10 + i % 4, 1 + i % 2, 3 * (i % 3)) for i in range(60))
    assert_verdicts_match_exhaustive_search(deals)


def assert_verdicts_match_exhaustive_search(deals):
    """Each deal's verdict is the exhaustive search's, its winning line wins, and at
    least 10 deals are won and 10 proved lost."""
    counts = {calc.OUTCOME_WON: 0, calc.OUTCOME_LOST: 0}
    for state in deals:
        found, line = verdict(state)
        expected = winnable_by_memo_search(state)
        assert found == (calc.OUTCOME_WON if expected else calc.OUTCOME_LOST)
        assert not expected or plays_to_a_win(state, line)
        counts[found] += 1
    assert min(counts.values()) >= 10


def test_relaxed_game_never_condemns_a_winnable_position():
    # The relaxed game lets every stock card skip the piles; it may only call a
    # position lost that no line of play wins.
    stream = rng.new_stream(9, 0, 9)
    board = np.empty(calc.STATE_SIZE, np.int16)
    scratch = calc_oracle.new_relaxed_scratch_nb()
    condemned = 0
    for i in range(100):
        state = random_short_deal(stream, 11, 2 + i % 2, n_piled=4 + i % 6)
        calc_oracle.board_from_state_nb(state, board)
        if calc_oracle.relaxed_lost_nb(board, scratch, 10**6):
            condemned += 1
            assert not winnable_by_memo_search(state)
    assert condemned >= 20


def test_C4_C5_C6_C7_verdicts_match_exhaustive_search_with_up_to_three_wastes():
    # Short deals with cards already piled on one to three waste piles: proved losses
    # and wins alike must agree with the exhaustive search (the lost table, keyed with
    # the kings at the bottom of piles left out, is shared by many of these positions).
    stream = rng.new_stream(12, 0, 9)
    deals = (random_short_deal(stream, 9 + i % 3, 1 + i % 3, 3 + i % 5) for i in range(60))
    assert_verdicts_match_exhaustive_search(deals)


def piles_dealt_again(state, stream):
    """A copy of state with its pile cards shuffled and dealt at random onto its piles."""
    out = state.copy()
    n_wastes = state[calc.NWASTE]
    piled = [
        state[calc.WASTE + calc.PILE_CAP * w + h]
        for w in range(n_wastes)
        for h in range(state[calc.HEIGHT + w])
    ]
    piled = np.array(piled, np.int16)
    rng.shuffle_nb(stream, piled)
    out[calc.HEIGHT : calc.HEIGHT + n_wastes] = 0
    for card in piled:
        w = rng.below_nb(stream, n_wastes)
        out[calc.WASTE + calc.PILE_CAP * w + out[calc.HEIGHT + w]] = card
        out[calc.HEIGHT + w] += 1
    return out


def test_positions_sharing_a_solver_key_are_won_or_lost_together():
    # The lost table treats positions with one key as one: the key leaves out the
    # order of the piles and the kings at the bottom of a pile. Deal the same pile
    # cards again in many ways; wherever two different arrangements share a key, the
    # exhaustive search must give both the same verdict. (A key that also left out a
    # T, J or Q at the bottom of a pile fails here.)
    stream = rng.new_stream(13, 0, 9)
    shared = 0
    for i in range(60):
        start = random_short_deal(stream, 9, 2 + i % 2, n_piled=5 + i % 3)
        verdicts = {}
        for _ in range(16):
            state = piles_dealt_again(start, stream)
            board = np.empty(calc.STATE_SIZE, np.int16)
            calc_oracle.board_from_state_nb(state, board)
            piles = sorted(visible_position(board)[1])  # ranks, as the solver sees them
            won = winnable_by_memo_search(state)
            key = calc_oracle.position_key_nb(board)
            if key in verdicts and verdicts[key][1] != piles:
                shared += 1
                assert verdicts[key][0] == won
            verdicts[key] = (won, piles)
    assert shared >= 20


def test_first_playout_action_is_the_one_the_playout_takes():
    # The solver skips the playout after the playout's own first action (its score is
    # known): that is only right if playout_first_action_nb names that action.
    stream = rng.new_stream(14, 0, 9)
    board = np.empty(calc.STATE_SIZE, np.int16)
    trial = np.empty(calc.STATE_SIZE, np.int16)
    line = np.empty(calc_oracle.MAX_DEPTH, np.int16)
    work = calc_oracle.new_work_nb()
    kinds = set()  # stock to foundation, stock to pile, pile to foundation
    for i in range(200):
        state = random_short_deal(stream, 8 + i % 20, 1 + i % 4, n_piled=i % 7)
        calc_oracle.board_from_state_nb(state, board)
        trial[:] = board
        weights = calc_oracle.PLAYOUT_DEFAULTS
        score, length = calc_oracle.playout_line_nb(trial, weights, line, 0, work)
        first = calc_oracle.playout_first_action_nb(board, weights, work)
        assert first == (line[0] if length > 0 else -1)
        if length > 0:
            calc_oracle.apply_nb(board, first)
            again = calc_oracle.playout_nb(board, calc_oracle.PLAYOUT_DEFAULTS, work)
            assert again == score  # a playout depends on nothing but its position
            kinds.add((first >= calc.ACT_TO_WASTE) + (first >= calc.ACT_FROM_WASTE))
    assert kinds == {0, 1, 2}


def test_the_beam_wins_a_deal_that_the_searches_near_the_playouts_miss():
    # Deal 292 of seed 0 with three piles: the rounds of the search that allow up to
    # three deviations from the playouts use up 20,000 positions without a win; a beam
    # 200 wide finds one, and its line wins by the engine's rules.
    state = np.zeros(calc.STATE_SIZE, np.int16)
    calc.deal_nb(0, 292, 3, state)
    board = np.empty(calc.STATE_SIZE, np.int16)
    calc_oracle.board_from_state_nb(state, board)
    keys, stamps = calc_oracle.new_stamped_table_nb(16)
    explored = calc_oracle.new_explored_table_nb(16)
    winning = np.empty(calc_oracle.MAX_DEPTH, np.int16)
    used = 0
    for deviations in (1, 2, 3):
        found, nodes, _ = calc_oracle.solve_nb(
            board,
            20000 - used,
            keys,
            stamps,
            1,
            winning,
            deviations,
            calc_oracle.RELAXED_BUDGET,
            explored,
        )
        assert found == calc.OUTCOME_UNKNOWN
        used += nodes
    assert used > 20000
    before = visible_position(board)
    found, positions, length = calc_oracle.beam_search_nb(board, 200, winning)
    assert visible_position(board) == before, "the beam must leave the board as it found it"
    assert found == calc.OUTCOME_WON and 0 < positions < 20000
    assert plays_to_a_win(state, winning[:length])


def test_the_beam_finds_no_win_in_a_lost_position_and_its_wins_are_legal_lines():
    lost = position(stock=["JC", "QC", "KC", "TC"], wastes=((), ()), foundations=F1_NEEDS_TEN)
    board = np.empty(calc.STATE_SIZE, np.int16)
    winning = np.empty(calc_oracle.MAX_DEPTH, np.int16)
    calc_oracle.board_from_state_nb(lost, board)
    assert calc_oracle.beam_search_nb(board, 50, winning)[0] == calc.OUTCOME_UNKNOWN
    state = np.zeros(calc.STATE_SIZE, np.int16)
    wins = 0
    for deal in range(20):
        calc.deal_nb(3, deal, 3, state)
        calc_oracle.board_from_state_nb(state, board)
        found, _, length = calc_oracle.beam_search_nb(board, 50, winning)
        if found == calc.OUTCOME_WON:
            wins += 1
            assert plays_to_a_win(state, winning[:length]), deal
    assert wins > 0
