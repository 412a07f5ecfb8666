"""Scenario tests of the Jokers rules J1-J9 on dealt and hand-built positions."""

import numpy as np
import pytest
from jokers_helpers import cards_in_play, columns_of, legal_notation, play, position

from sim.engine import jokers, kernel, rng
from sim.engine.cards import JOKER, card_name, parse_card
from sim.engine.games import JOKERS
from sim.engine.run.job import play_deal_python


def dealt(seed, deal, max_moves=2000):
    state = np.zeros(jokers.STATE_SIZE, np.int16)
    jokers.deal_nb(seed, deal, max_moves, state)
    return state


def result(state):
    row = np.zeros(len(jokers.COLUMNS), np.int32)
    jokers.write_result_nb(state, row)
    return dict(zip(jokers.COLUMNS, row.tolist(), strict=True))


@pytest.mark.parametrize("deal", range(20))
def test_J1_aces_start_the_foundations_and_50_cards_are_dealt_row_by_row(deal):
    deck = np.arange(4, 54).astype(np.int16)
    rng.shuffle_nb(rng.new_stream(9, deal, rng.STREAM_DEAL), deck)
    columns = jokers.dealt_columns(9, deal)
    assert columns == [[int(deck[c + 10 * row]) for row in range(5)] for c in range(10)]
    assert sorted(card for column in columns for card in column) == list(range(4, 54))
    state = dealt(9, deal)
    assert list(state[jokers.FOUND : jokers.FOUND + 4]) == [1, 1, 1, 1]
    assert sorted(cards_in_play(state)) == sorted(list(range(52)) + [JOKER, JOKER])
    layout = jokers.move_log(9, deal, JOKERS.default_rules(), [])["layout"]["columns"]
    assert layout == [[card_name(card) for card in column] for column in columns]


def test_J2_only_the_free_card_of_a_column_moves():
    # c1: 2H 9S   (2H, wanted by the hearts, is covered by 9S)
    # c2: TD      c3..c10: 3C 3D 4C 4D 5C 5D 6C 6D (nothing builds on them but 2H)
    state = position(["2H 9S", "TD", "3C", "3D", "4C", "4D", "5C", "5D", "6C", "6D"])
    assert "c1>f" not in legal_notation(state)
    assert "c1>c2" in legal_notation(state)
    play(state, "c1>c2")
    assert "c1>f" in legal_notation(state)


def test_J3_a_card_goes_to_its_foundation_one_rank_above_the_top():
    # c1: 3H 2H   c2: 3C   foundations A A A A
    state = position(["3H 2H", "3C"])
    assert "c1>f" in legal_notation(state)
    assert "c2>f" not in legal_notation(state)  # clubs need the 2 first
    play(state, "c1>f", "c1>f")
    assert state[jokers.FOUND + 2] == 3 and state[jokers.HEIGHT] == 0


def test_J4_builds_go_one_rank_lower_in_the_other_colour():
    # c1: 5C   c2: 6D   c3: 5H   c4: 4S   c5..c10: KC KD KH KS QC QD
    state = position(["5C", "6D", "5H", "4S", "KC", "KD", "KH", "KS", "QC", "QD"])
    legal = legal_notation(state)
    assert {"c1>c2", "c4>c3"} <= set(legal)  # black 5 on red 6, black 4 on red 5
    assert "c3>c2" not in legal  # red on red
    assert "c4>c1" not in legal  # black on black
    assert "c4>c2" not in legal  # two ranks lower, without a joker
    assert "c9>c7" in legal  # QC on KH
    assert "c10>c5" in legal  # QD on KC


def test_J5_any_free_card_goes_into_an_empty_column_but_no_joker_does():
    # c1: KS 7D   c2: (empty)   c3..c10: JC JD JH JS QC QD QH QS   reserve: 2 jokers
    state = position(["KS 7D", "", "JC", "JD", "JH", "JS", "QC", "QD", "QH", "QS"], reserve=2)
    legal = legal_notation(state)
    assert {"c1>c2", "c3>c2", "c10>c2"} <= set(legal)
    assert not [move for move in legal if move.startswith("c") and ">c2+" in move]
    play(state, "c1>c2")
    assert columns_of(state)[:2] == ["KS", "7D"]


def test_J6_a_joker_uncovered_by_a_move_goes_to_the_reserve_again_and_again():
    # c1: 8C JK JK 5H   (two jokers stood for a red 7 and a black 6)
    # c2: 6S            c3..c10: KC KD KH KS QC QD QH QS
    state = position(["8C JK JK 5H", "6S", "KC", "KD", "KH", "KS", "QC", "QD", "QH", "QS"])
    play(state, "c1>c2")
    assert columns_of(state)[:2] == ["8C", "6S 5H"]
    assert state[jokers.RESERVE] == 2


def test_J6_jokers_free_at_the_deal_are_set_aside_even_a_joker_under_a_joker():
    for deal in range(20_000):
        columns = jokers.dealt_columns(3, deal)
        if any(column[-2:] == [52, 53] or column[-2:] == [53, 52] for column in columns):
            break
    else:
        pytest.fail("no deal with a joker on a joker at the bottom of a column")
    state = dealt(3, deal)
    column = next(c for c, cards in enumerate(columns) if min(cards[-2:]) >= JOKER)
    assert state[jokers.RESERVE] == 2
    assert state[jokers.HEIGHT + column] == 3
    for c in range(10):
        assert jokers.top_card_nb(state, c) < JOKER


def test_J6_a_joker_at_the_bottom_of_the_deal_leaves_a_shorter_column():
    for deal in range(200):
        columns = jokers.dealt_columns(4, deal)
        on_top = [c for c, cards in enumerate(columns) if cards[-1] >= JOKER]
        if len(on_top) == 1 and columns[on_top[0]][-2] < JOKER:
            break
    state = dealt(4, deal)
    heights = [int(h) for h in state[jokers.HEIGHT : jokers.HEIGHT + 10]]
    assert heights == [4 if c == on_top[0] else 5 for c in range(10)]
    assert state[jokers.RESERVE] == 1


def test_J7_worked_example_jokers_as_a_red_7_and_a_red_5_on_clubs():
    # The seed's moves: "Дж — Т8, Т6 — Дж" then "Дж — Т6, Т4 — Дж".
    # c2: 6C   c8: 4C   c10: TD 8C   (c1, c3..c7, c9: cards that play no part)
    # reserve: 2 jokers
    state = position(["KD", "6C", "KH", "QC", "QS", "JD", "JH", "4C", "9S", "TD 8C"], reserve=2)
    play(state, "c2>c10+1")  # a joker as a red 7 on the 8 of clubs, the 6 of clubs onto it
    assert columns_of(state)[9] == "TD 8C JK 6C"
    assert state[jokers.HEIGHT + 1] == 0 and state[jokers.RESERVE] == 1  # column 2 empty
    play(state, "c8>c10+1")  # the other joker as a red 5, the 4 of clubs onto it
    assert columns_of(state)[9] == "TD 8C JK 6C JK 4C"
    assert state[jokers.HEIGHT + 7] == 0 and state[jokers.RESERVE] == 0  # column 8 empty


def test_J7_one_joker_needs_two_ranks_lower_same_colour_two_jokers_three_lower_other():
    # c1: 8C   c2: 6C   c3: 6H   c4: 5H   c5: 5S   c6..c10: KC KD KH KS QC
    columns = ["8C", "6C", "6H", "5H", "5S", "KC", "KD", "KH", "KS", "QC"]
    legal = legal_notation(position(columns, reserve=2))
    assert "c2>c1+1" in legal and "c3>c1+1" not in legal
    assert "c4>c1+2" in legal and "c5>c1+2" not in legal
    legal = legal_notation(position(columns, reserve=1))
    assert "c2>c1+1" in legal and "c4>c1+2" not in legal
    assert not [m for m in legal_notation(position(columns)) if "+" in m]
    assert not [m for m in legal if m.endswith(">f")]  # jokers never go to a foundation


def test_J7_a_card_moved_off_a_joker_gives_the_joker_back():
    # c1: 8C JK 6C   c2: 7D   c3..c10: KC KD KH KS QC QD QH QS
    state = position(["8C JK 6C", "7D", "KC", "KD", "KH", "KS", "QC", "QD", "QH", "QS"])
    play(state, "c1>c2")
    assert columns_of(state)[:2] == ["8C", "7D 6C"] and state[jokers.RESERVE] == 1


def test_J8_all_52_on_the_foundations_wins_with_the_jokers_in_reserve():
    # c1: KC   c2: KD   c3: KH   c4: KS   foundations Q Q Q Q   reserve: 2 jokers
    state = position(["KC", "KD", "KH", "KS"], foundations="Q Q Q Q", reserve=2)
    play(state, "c1>f", "c2>f", "c3>f", "c4>f")
    assert legal_notation(state) == []
    assert result(state) | {"moves": 4} == {
        "outcome": jokers.OUTCOMES.index("won"),
        "won": 1,
        "score": 52,
        "moves": 4,
        "jokers_used": 0,
        "nodes": 0,
    }


def test_J8_no_legal_move_left_is_a_loss_with_the_foundation_count_as_score():
    # c1: JK JK 2C 3C   c2: 4C 5C   c3..c10: 6C 7C 8C 9C TC JC QC KC
    # foundations A K K K: the 3C hides the 2C and nothing can take it
    state = position(
        ["JK JK 2C 3C", "4C 5C", "6C", "7C", "8C", "9C", "TC", "JC", "QC", "KC"],
        foundations="A K K K",
    )
    assert legal_notation(state) == []
    assert result(state)["outcome"] == jokers.OUTCOMES.index("lost")
    assert result(state)["score"] == 40


def test_J8_a_policy_that_resigns_ends_the_deal_as_lost():
    def resign(state, legal, n_legal, params, stream):
        return -1

    state = np.zeros(jokers.STATE_SIZE, np.int16)
    rules = np.array([2000], np.int64)
    play_deal_python(jokers, 1, 0, rules, resign, np.zeros(0), state, np.zeros(0, np.int16))
    assert state[jokers.ENDED] == jokers.ENDED_RESIGNED
    assert result(state)["outcome"] == jokers.OUTCOMES.index("lost")
    assert result(state)["moves"] == 0


def test_J8_a_policy_outside_the_legal_list_is_refused():
    def bad(state, legal, n_legal, params, stream):
        return n_legal

    state = np.zeros(jokers.STATE_SIZE, np.int16)
    fault = play_deal_python(
        jokers, 1, 0, np.array([2000], np.int64), bad, np.zeros(0), state, np.zeros(0, np.int16)
    )
    assert fault == kernel.FAULT_BAD_CHOICE
    assert state[jokers.MOVES_LO] == 0  # the move was never made


@pytest.mark.parametrize("cap", [1, 5, 40])
def test_J9_the_move_cap_ends_a_deal_as_capped(cap):
    def shuttle(state, legal, n_legal, params, stream):
        return n_legal - 1  # last legal move: often back and forth, never resigns

    rules = np.array([cap], np.int64)
    state = np.zeros(jokers.STATE_SIZE, np.int16)
    log = np.zeros(cap, np.int16)
    capped = 0
    for deal in range(30):
        play_deal_python(jokers, 2, deal, rules, shuttle, np.zeros(0), state, log)
        moves = int(jokers.moves_nb(state))
        label = jokers.OUTCOMES[result(state)["outcome"]]
        line = jokers.move_log(2, deal, {"max_moves": cap}, [int(a) for a in log[:moves]])
        if moves == cap and label != "won":
            capped += 1
            assert label == "capped" and line["outcome"] == "capped"
        else:
            assert moves < cap and legal_notation(state) == [] and label != "capped"
    assert capped > 0


def test_J9_moves_count_past_the_int16_range():
    state = position(["KC", "QD"], foundations="A A A A")
    jokers.split_set_nb(state, jokers.MOVES_LO, jokers.MOVES_HI, 999_998)
    play(state, "c2>c1", "c1>c2")
    assert jokers.moves_nb(state) == 1_000_000
    assert result(state)["moves"] == 1_000_000


def test_notation_reads_back_every_action():
    for action in range(10 * jokers.ACTION_STRIDE):
        kind = action % jokers.ACTION_STRIDE
        if kind > jokers.KIND_FOUNDATION or (
            kind != jokers.KIND_FOUNDATION
            and kind % jokers.KIND_JOKERS == action // jokers.ACTION_STRIDE
        ):
            continue
        assert jokers.parse_action(jokers.action_notation(action)) == action
    assert jokers.action_notation(2 * 32 + 16) == "c3>c7+1"
    assert jokers.action_notation(2 * 32 + 26) == "c3>c7+2"
    assert jokers.action_notation(2 * 32 + 30) == "c3>f"
    assert parse_card("JK") == JOKER
