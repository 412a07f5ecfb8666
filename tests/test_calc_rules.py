"""Scenario tests of the Calculation rules C1-C9 on hand-built positions."""

import numpy as np
import pytest
from calc_helpers import legal_notation, play, position

from sim.engine import calc, rng
from sim.engine.cards import card_name, parse_card


def dealt(seed=7, deal=3, wastes=4):
    state = np.zeros(calc.STATE_SIZE, np.int16)
    calc.deal_nb(seed, deal, wastes, state)
    return state


def test_C1_deal_holds_each_of_52_cards_once_and_no_joker():
    state = dealt()
    cards = list(state[calc.BASE : calc.BASE + 4]) + list(state[calc.STOCK : calc.STOCK + 48])
    assert sorted(cards) == list(range(52))


@pytest.mark.parametrize(
    "k, sequence",
    [
        (1, "A 2 3 4 5 6 7 8 9 T J Q K"),
        (2, "2 4 6 8 T Q A 3 5 7 9 J K"),
        (3, "3 6 9 Q 2 5 8 J A 4 7 T K"),
        (4, "4 8 Q 3 7 J 2 6 T A 5 9 K"),
    ],
)
def test_C2_foundation_k_is_built_by_step_k_and_ends_on_a_king(k, sequence):
    ranks = sequence.split()
    # Stock: the 12 cards foundation k wants after its base, in order, all clubs.
    state = position(stock=[r + "C" for r in ranks[1:]])
    for _ in ranks[1:]:
        play(state, f"s>f{k}")
    assert state[calc.FCOUNT + k - 1] == 13
    assert state[calc.NEED + k - 1] == 0  # complete: takes nothing more


def test_C2_a_complete_foundation_takes_nothing_more():
    #   F1 complete (13 cards), turned card: K -- only F? none, so only wastes
    state = position(stock=["KS"], foundations=[(0, 13), (4, 1), (6, 2), (8, 2)])
    assert legal_notation(state) == ["s>w1", "s>w2", "s>w3", "s>w4"]


def test_C2_worked_example_ace_wraps_onto_the_queen_of_step_two():
    #   F1 needs K (reached Q), F2 reached Q (needs A): turned AS fits F2 only.
    state = position(stock=["AS"], foundations=[(13, 12), (1, 6), (6, 2), (8, 2)])
    assert legal_notation(state) == ["s>f2", "s>w1", "s>w2", "s>w3", "s>w4"]


def test_C3_first_ace_two_three_four_of_the_shuffle_are_the_bases():
    seed, deal = 11, 5
    deck = np.arange(52).astype(np.int16)
    rng.shuffle_nb(rng.new_stream(seed, deal, rng.STREAM_DEAL), deck)
    bases = {}
    for card in deck:
        bases.setdefault(card // 4 + 1, card)
    state = dealt(seed, deal)
    assert list(state[calc.BASE : calc.BASE + 4]) == [bases[r] for r in (1, 2, 3, 4)]
    rest = [c for c in deck if c not in state[calc.BASE : calc.BASE + 4]]
    assert list(state[calc.STOCK : calc.STOCK + 48]) == rest
    assert state[calc.POS] == 0


@pytest.mark.parametrize("wastes", [1, 3, 4, 8])
def test_C4_there_are_w_empty_waste_piles_at_the_start(wastes):
    state = dealt(wastes=wastes)
    assert state[calc.NWASTE] == wastes
    assert list(state[calc.HEIGHT : calc.HEIGHT + wastes]) == [0] * wastes
    assert sum(a.startswith("s>w") for a in legal_notation(state)) == wastes


def test_C4_a_waste_pile_grows_without_limit():
    state = dealt()
    for _ in range(48):
        play(state, "s>w1")
    assert state[calc.HEIGHT] == 48
    assert calc.waste_top_nb(state, 0) == state[calc.STOCK + 47]


def test_C5_turned_card_goes_to_a_needing_foundation_or_any_waste():
    #   F1 needs 2, F2 needs 4, F3 needs 6, F4 needs 8; turned 4D fits F2 only
    #   W1: 9C   W2: -   W3: -   W4: -
    state = position(stock=["4D", "5C"], wastes=[["9C"], [], [], []])
    assert legal_notation(state) == ["s>f2", "s>w1", "s>w2", "s>w3", "s>w4"]
    play(state, "s>w1")  # legal although F2 wants the 4
    assert card_name(calc.waste_top_nb(state, 0)) == "4D"
    assert card_name(state[calc.STOCK + state[calc.POS]]) == "5C"  # the next card is turned


def test_C6_only_a_waste_top_goes_to_a_foundation_and_nothing_between_wastes():
    #   W1: 2H (bottom) 9S (top)   -- F1 wants the 2, but it is covered
    #   W2: 6C                     -- F3 wants the 6: it may go at any time
    state = position(stock=["KD"], wastes=[["2H", "9S"], ["6C"], [], []])
    moves = legal_notation(state)
    assert "w2>f3" in moves
    assert "w1>f1" not in moves
    assert all(m.startswith("s>") or m.endswith(("f1", "f2", "f3", "f4")) for m in moves)


def test_C7_a_card_that_fits_two_foundations_may_go_to_either():
    #   F1 needs 5, F2 needs 5: a turned 5 may go to F1 or F2
    state = position(stock=["5S"], foundations=[(5, 4), (5, 9), (6, 2), (8, 2)])
    assert {"s>f1", "s>f2"} <= set(legal_notation(state))


def test_C8_after_the_stock_waste_moves_go_on_then_the_game_ends():
    #   stock empty; W1: 4C (bottom) 2C (top); F1 needs 2, F2 needs 4
    state = position(stock=[], wastes=[["4C", "2C"], [], [], []])
    assert legal_notation(state) == ["w1>f1"]
    play(state, "w1>f1")
    assert legal_notation(state) == ["w1>f2"]
    play(state, "w1>f2")
    assert legal_notation(state) == []  # no redeal: the game is over


def test_C9_score_counts_foundation_cards_and_only_52_wins():
    state = position(stock=[], foundations=[(0, 13), (0, 13), (0, 13), (0, 13)])
    row = np.zeros(len(calc.COLUMNS), np.int32)
    calc.write_result_nb(state, row)
    assert row[0] == 1 and row[1] == 52
    state = position(
        stock=[], wastes=[["KC"], [], [], []], foundations=[(0, 13), (0, 13), (0, 13), (13, 12)]
    )
    calc.write_result_nb(state, row)
    assert row[0] == 0 and row[1] == 51  # however close, a loss


def test_move_notation_round_trips_through_parse():
    assert [calc.action_notation(a) for a in (0, 3, 4, 11, 12, 43)] == [
        "s>f1",
        "s>f4",
        "s>w1",
        "s>w8",
        "w1>f1",
        "w8>f4",
    ]
    assert parse_card("TD") == 4 * 9 + 1
