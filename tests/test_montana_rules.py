"""Montana rules M1-M7 on hand-built grids (drawn in the comments) and single deals."""

import numpy as np
import pytest
from montana_helpers import (
    POLICIES,
    action,
    column,
    grid_rows,
    legal_notation,
    play,
    play_deals,
    position,
)

from sim.engine import montana, rng
from sim.engine.cards import parse_card
from sim.engine.montana import OUTCOME_CAPPED, OUTCOME_LOST, OUTCOME_WON, PLAYING
from sim.engine.run.job import LOG_END

#        c1 c2 c3 c4 c5 c6 c7 c8 c9 c10 c11 c12 c13
# r1     .. 3H 4H 5H KC .. 7D 8D 9D TD JD  QD  KD
# r2     2D 3D 4D 5D 6D .. 9C TC JC QC 6C  7C  8C
# r3     2H 6H 7H 8H 9H TH JH QH KH 2S 3S  4S  5S
# r4     6S 7S 8S 9S TS JS QS KS 2C 3C 4C  5C  ..
GRID_A = (
    ".. 3H 4H 5H KC .. 7D 8D 9D TD JD QD KD",
    "2D 3D 4D 5D 6D .. 9C TC JC QC 6C 7C 8C",
    "2H 6H 7H 8H 9H TH JH QH KH 2S 3S 4S 5S",
    "6S 7S 8S 9S TS JS QS KS 2C 3C 4C 5C ..",
)

# Stuck: every gap is right of a K. Row 1 is a complete 2..K, row 2 keeps 2H 3H 4H,
# rows 3 and 4 do not start with a 2.
# r1     2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS ..
# r2     2H 3H 4H KD .. 5C 6C 7C 8C 9C TC JC QC
# r3     7H KC .. 2C 3C 4C 5H 6H 2D 3D 4D 5D 6D
# r4     7D 8D 9D TD JD QD KH .. 8H 9H TH JH QH
GRID_STUCK = (
    "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS ..",
    "2H 3H 4H KD .. 5C 6C 7C 8C 9C TC JC QC",
    "7H KC .. 2C 3C 4C 5H 6H 2D 3D 4D 5D 6D",
    "7D 8D 9D TD JD QD KH .. 8H 9H TH JH QH",
)

# Won: each row one suit 2..K in columns 1-12, a gap in column 13, suits in any order.
GRID_WON = (
    "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS ..",
    "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH ..",
    "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC ..",
    "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD ..",
)


def cells(state):
    return list(state[montana.GRID : montana.GRID + montana.CELLS])


def test_M1_the_deal_is_the_shuffle_in_row_order_with_the_aces_taken_out():
    state = np.empty(montana.STATE_SIZE, np.int16)
    montana.deal_nb(11, 7, 2, state)
    deck = np.arange(52).astype(np.int16)
    rng.shuffle_nb(rng.new_stream(11, 7, rng.STREAM_DEAL), deck)
    expected = [montana.GAP if card < 4 else card for card in deck]
    assert cells(state) == expected
    assert sorted(c for c in cells(state) if c != montana.GAP) == list(range(4, 52))
    assert montana.score_nb(state) == sum(montana.row_run_nb(state, r) for r in range(4))


def test_M1_different_deals_differ_and_the_same_deal_repeats():
    a, b, c = (np.empty(montana.STATE_SIZE, np.int16) for _ in range(3))
    montana.deal_nb(1, 0, 2, a)
    montana.deal_nb(1, 0, 2, b)
    montana.deal_nb(1, 1, 2, c)
    assert cells(a) == cells(b) and cells(a) != cells(c)


def test_M2_a_move_fills_the_gap_and_leaves_a_gap_where_the_card_was():
    state = play(position(*GRID_A), "7D>r2c6")
    assert grid_rows(state)[0] == ".. 3H 4H 5H KC .. .. 8D 9D TD JD QD KD"
    assert grid_rows(state)[1] == "2D 3D 4D 5D 6D 7D 9C TC JC QC 6C 7C 8C"
    assert cells(state).count(montana.GAP) == 4
    assert sorted(state[montana.GAPS : montana.GAPS + 4]) == [0, 5, 6, 51]


def test_M3_any_two_and_nothing_else_fills_a_first_column_gap():
    into_r1c1 = [m for m in legal_notation(position(*GRID_A)) if m.endswith(">r1c1")]
    assert sorted(into_r1c1) == ["2C>r1c1", "2D>r1c1", "2H>r1c1", "2S>r1c1"]


def test_M3_a_two_moves_from_one_rows_first_column_to_anothers():
    state = position(*GRID_A)
    assert montana.score_nb(state) == 5 + 1  # 2D..6D in row 2, 2H alone in row 3
    play(state, "2H>r1c1")
    assert grid_rows(state)[0].startswith("2H 3H 4H 5H KC")
    assert grid_rows(state)[2].startswith(".. 6H")
    assert montana.score_nb(state) == 5 + 4


def test_M4_a_gap_takes_only_the_next_card_of_its_left_neighbours_suit():
    # r2c6 is right of 6D: only 7D; r4c13 is right of 5C: only 6C. The right
    # neighbour (9C at r2c7) does not matter.
    moves = legal_notation(position(*GRID_A))
    assert [m for m in moves if not m.endswith(">r1c1")] == ["7D>r2c6", "6C>r4c13"]


def test_M4_no_card_goes_right_of_a_king():
    moves = legal_notation(position(*GRID_A))
    assert not [m for m in moves if m.endswith(">r1c6")]  # r1c5 holds KC


def test_M4_no_card_goes_right_of_a_gap():
    # After 7D>r2c6, r1c7 is a gap right of the gap r1c6: nothing can fill it.
    state = play(position(*GRID_A), "7D>r2c6")
    assert not [m for m in legal_notation(state) if m.endswith(">r1c7")]


def test_M4_the_worked_example_a_gap_right_of_a_king_is_not_yet_a_loss():
    # 5H left of a gap at r2c5, 6H in another row: 6H moves there. Its old cell r3c2,
    # right of KC, cannot be filled, and no other move is left: yet a redeal remains.
    # r1  2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS ..
    # r2  2H 3H 4H 5H .. KD 5C 6C 7C 8C 9C TC JC
    # r3  KC 6H 7H 2C 3C 4C QC 8H 2D 3D 4D 5D 6D
    # r4  7D 8D 9D TD JD QD KH .. .. 9H TH JH QH
    state = position(
        "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS ..",
        "2H 3H 4H 5H .. KD 5C 6C 7C 8C 9C TC JC",
        "KC 6H 7H 2C 3C 4C QC 8H 2D 3D 4D 5D 6D",
        "7D 8D 9D TD JD QD KH .. .. 9H TH JH QH",
    )
    assert legal_notation(state) == ["6H>r2c5"]
    play(state, "6H>r2c5")
    assert legal_notation(state) == []  # the new gap r3c2 is right of KC
    assert montana.end_of_play_nb(state, 5000) == PLAYING  # a redeal remains


def test_M5_redeal_keeps_runs_then_one_gap_then_the_shuffled_rest():
    state = position(*GRID_STUCK)
    assert legal_notation(state) == [] and montana.score_nb(state) == 12 + 3
    montana.redeal_nb(state, 5, 9)
    rows = [row.split() for row in grid_rows(state)]
    assert rows[0] == GRID_STUCK[0].split()  # complete 2..K row: gap in column 13
    assert rows[1][:4] == ["2H", "3H", "4H", ".."]  # partial run, then one gap
    assert rows[2][0] == ".." and rows[3][0] == ".."  # kept nothing: gap in column 1
    dealt = rows[1][4:] + rows[2][1:] + rows[3][1:]
    kept = set(GRID_STUCK[0].split() + ["2H", "3H", "4H"])
    gathered = {c for row in GRID_STUCK for c in row.split()} - kept - {".."}
    assert ".." not in dealt and sorted(dealt) == sorted(gathered)
    assert state[montana.REDEALS] == 1 and cells(state).count(montana.GAP) == 4


def test_M5_the_redeal_shuffle_depends_on_seed_deal_and_redeal_number_only():
    # The same stuck grid reached by different play (other move counts, another
    # policy's plan in the spare slots), or with the gathered cards lying elsewhere,
    # gets the same redeal; another redeal number, deal or seed gets another.
    first = position(*GRID_STUCK)
    other = position(
        GRID_STUCK[0],
        GRID_STUCK[1],
        "7D 8D 9D TD JD QD KH .. 8H 9H TH JH QH",
        "7H KC .. 2C 3C 4C 5H 6H 2D 3D 4D 5D 6D",
    )
    other[montana.MOVES_LO] = 321
    other[montana.SCRATCH_PLAN : montana.SCRATCH_PLAN + 10] = 77
    for state in (first, other):
        montana.redeal_grid_nb(state, 5, 9, 1)
    assert cells(first) == cells(other)
    for seed, deal, k in ((5, 9, 2), (5, 10, 1), (6, 9, 1)):
        again = position(*GRID_STUCK)
        montana.redeal_grid_nb(again, seed, deal, k)
        assert cells(again) != cells(first)


def test_M5_redeal_shuffle_is_the_stream_of_the_redeal_on_the_cards_in_order():
    state = position(*GRID_STUCK)
    montana.redeal_grid_nb(state, 3, 4, 2)
    kept = set(GRID_STUCK[0].split() + ["2H", "3H", "4H", ".."])
    gathered = sorted(parse_card(c) for r in GRID_STUCK for c in r.split() if c not in kept)
    expected = np.array(gathered, np.int16)
    rng.shuffle_nb(rng.new_stream(3, 4, rng.STREAM_REDEAL + 2), expected)
    rows = grid_rows(state)
    dealt = rows[1].split()[4:] + rows[2].split()[1:] + rows[3].split()[1:]
    assert [parse_card(c) for c in dealt] == list(expected)


@pytest.mark.parametrize("name", ["first", "greedy", "random"])
def test_M5_a_played_redeal_is_the_redeal_of_the_stuck_grid_for_seed_deal_and_k(name):
    # Whatever policy got there, the grid play deals for redeal k is the M5 layout of
    # the stuck grid with the stream of (seed, deal, k): nothing else enters.
    choose = POLICIES[name].choose
    checked = 0
    for deal in range(30):
        seen = {"redeals": 0, "after": None}

        def watching(state, legal, n_legal, params, stream, seen=seen, deal=deal):
            nonlocal checked
            if state[montana.REDEALS] == seen["redeals"] + 1:
                expected = seen["after"]
                montana.redeal_grid_nb(expected, 13, deal, state[montana.REDEALS])
                assert cells(state) == cells(expected)
                checked += 1
            seen["redeals"] = state[montana.REDEALS]
            index = choose(state, legal, n_legal, params, stream)
            seen["after"] = state.copy()
            montana.apply_action_nb(seen["after"], legal[index])
            return index

        state = np.empty(montana.STATE_SIZE, np.int16)
        rules = np.array([2, 5000], np.int64)
        montana.start_nb(13, deal, rules, state)
        stream = rng.new_stream(13, deal, rng.STREAM_POLICY)
        log = np.zeros(0, np.int16)
        montana.play_out_nb.py_func(13, deal, rules, state, watching, np.zeros(0), stream, log)
    assert checked > 30


def test_M5_a_redeal_only_when_stuck_and_no_third_one():
    stuck = position(*GRID_STUCK, used=1)
    assert montana.end_of_play_nb(stuck, 5000) == PLAYING  # stuck, a redeal remains
    assert montana.end_of_play_nb(position(*GRID_STUCK, used=2), 5000) == OUTCOME_LOST
    assert montana.end_of_play_nb(position(*GRID_STUCK, redeals=0), 5000) == OUTCOME_LOST


def test_M5_play_redeals_at_most_twice_then_the_deal_is_over():
    rows, logs = play_deals(POLICIES["first"], seed=8, n=300)
    for row, log in zip(rows, logs, strict=True):
        redeals = int((log == montana.REDEAL_ACTION).sum())
        assert redeals == row[column("redeals")] <= 2
        assert row[column("outcome")] == OUTCOME_WON or redeals == 2


@pytest.mark.parametrize("redeals", [0, 1, 5])
def test_M5_the_redeals_rule_option_is_the_number_allowed(redeals):
    rows, _ = play_deals(POLICIES["greedy"], seed=8, n=300, redeals=redeals)
    used = rows[:, column("redeals")]
    assert used.max() == redeals
    assert ((used == redeals) | (rows[:, column("won")] == 1)).all()


def test_M6_won_when_every_row_is_one_suit_two_to_king_and_a_gap_last():
    state = position(*GRID_WON)
    assert legal_notation(state) == []
    assert montana.score_nb(state) == 48
    assert montana.end_of_play_nb(state, 5000) == OUTCOME_WON  # redeals remain: still a win


def test_M6_score_counts_only_runs_from_a_two_in_column_one():
    # Row 2 holds 3H..KH in order but no 2H in column 1: it scores nothing.
    state = position(
        "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS ..",
        ".. 3H 4H 5H 6H 7H 8H 9H TH JH QH KH 2H",
        "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC ..",
        "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD ..",
    )
    assert montana.score_nb(state) == 36
    play(state, "2H>r2c1")
    assert montana.score_nb(state) == 48 and legal_notation(state) == []
    assert montana.end_of_play_nb(state, 5000) == OUTCOME_WON


def test_M6_outcome_and_score_columns_of_a_played_deal():
    rows, _ = play_deals(POLICIES["greedy"], seed=4, n=2000)
    won, score = rows[:, column("won")], rows[:, column("score")]
    assert np.array_equal(won == 1, score == 48)
    assert np.array_equal(won == 1, rows[:, column("outcome")] == OUTCOME_WON)
    assert score.min() >= 0 and score.max() <= 48


def test_M7_the_cap_ends_a_deal_as_capped_never_won():
    rows, logs = play_deals(POLICIES["first"], seed=2, n=50, max_moves=5)
    assert (rows[:, column("outcome")] == OUTCOME_CAPPED).all()
    assert (rows[:, column("moves")] == 5).all() and (rows[:, column("won")] == 0).all()


def test_M7_a_deal_stuck_on_its_last_capped_move_is_capped_as_the_referee_says():
    # Stuck with no redeal left, on exactly the cap: the cap has ended the deal (M7),
    # whatever M6 would say a move later. The referee reads it so; the engine must too.
    from sim.engine.referee import montana as referee

    policy = POLICIES["greedy"]
    free, logs = play_deals(policy, seed=0, n=1, redeals=0)
    assert free[0, column("outcome")] == OUTCOME_LOST
    cap = int(free[0, column("moves")])  # the card moves of the whole deal
    rows, capped_logs = play_deals(policy, seed=0, n=1, redeals=0, max_moves=cap)
    assert rows[0, column("outcome")] == OUTCOME_CAPPED
    actions = [int(a) for a in capped_logs[0] if a != LOG_END]
    line = montana.move_log(0, 0, {"redeals": 0, "max_moves": cap}, actions)
    assert line["outcome"] == "capped"
    assert referee.check(line | {"redeals": 0, "max_moves": cap}).ok


def test_M7_the_cap_counts_card_moves_across_redeals():
    policy = POLICIES["first"]
    free, logs = play_deals(policy, seed=2, n=20)
    for deal in range(20):
        log = list(logs[deal])
        first_redeal = log.index(montana.REDEAL_ACTION)  # card moves before it
        cap = first_redeal + 3
        rows, capped_logs = play_deals(policy, seed=2, n=deal + 1, max_moves=cap)
        row = rows[deal]
        assert row[column("outcome")] == OUTCOME_CAPPED and row[column("moves")] == cap
        assert row[column("redeals")] == 1
        assert list(capped_logs[deal][: cap + 1]) == log[: cap + 1]
    assert (free[:, column("outcome")] != OUTCOME_CAPPED).all()


def test_move_notation_and_grid_notation():
    assert montana.action_notation(action("6H>r2c5")) == "6H>r2c5"
    assert montana.action_notation(montana.REDEAL_ACTION) == "redeal"
    state = position(*GRID_A)
    assert montana.grid_notation(state) == "/".join(GRID_A)
    assert list(montana.parse_grid("/".join(GRID_A))) == cells(state)
    with pytest.raises(ValueError):
        montana.parse_grid("/".join(GRID_A[:3]))
