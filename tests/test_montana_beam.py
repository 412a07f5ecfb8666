"""The Montana beam search: its wins are wins, and its stuck grids are real ones."""

import random

import numpy as np
import pytest
from montana_helpers import action, position
from test_montana_solver import exhaustive, replay, rule_moves, rule_score, small_variant

from sim.engine import montana
from sim.policies import montana_beam, montana_solver
from sim.policies.montana_kernels import KEEP_SCORE


def beam(state, width, budget=10_000_000):
    line = np.zeros(montana.PLAN_CAP, np.int16)
    length, worth, nodes, won = montana_beam.beam_line_nb(state, width, budget, KEEP_SCORE, line)
    return line[:length], worth, won


def test_M6_a_beam_one_wide_follows_the_best_looking_move_to_the_win():
    # Rows 1-3 are complete runs; row 4 lacks its 9S, and the only move fills it:
    #   r1  2H 3H .. KH ..      r4  2S 3S 4S 5S 6S 7S 8S .. TS JS QS KS 9S
    # then the gap left at r4c13 is dead (right of a K): won.
    state = position(
        "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH ..",
        "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD ..",
        "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC ..",
        "2S 3S 4S 5S 6S 7S 8S .. TS JS QS KS 9S",
        redeals=0,
    )
    line, _, won = beam(state, 1)
    assert won
    assert list(line) == [action("9S>r4c8")]


def test_M5_the_position_value_counts_runs_cards_in_their_final_cell_and_dead_gaps():
    #   r1  2H 3H .. 5H 9D ...      run of 2; 5H in its final cell (column 4)
    #   r2  .. 3D 2D 6H ...         no 2 in column 1: no suit, nothing counts
    #   r3  2C QC ... 3C KC 6S      run of 1; KC in its final cell (column 12)
    #   r4  2S 3S 4S KS .. 7S 8S 9S TS JS QS .. 5S
    #                               run of 3; 7S..QS in their final cells (6); the
    #                               gap at r4c5 is dead (right of a K), r4c12 is not
    state = position(
        "2H 3H .. 5H 9D TD JD QD 8D 7D 6D 5D 4D",
        ".. 3D 2D 6H 7H 8H 9H TH JH QH KH 4H KD",
        "2C QC JC TC 9C 8C 7C 6C 5C 4C 3C KC 6S",
        "2S 3S 4S KS .. 7S 8S 9S TS JS QS .. 5S",
        redeals=0,
    )
    runs, in_place, dead_gaps = 2 + 1 + 3, 1 + 1 + 6, 1
    assert montana.score_nb(state) == runs
    expected = (
        montana_beam.RUN_VALUE * runs
        + montana_beam.IN_PLACE_VALUE * in_place
        - montana_beam.DEAD_GAP_VALUE * dead_gaps
        + montana_beam.VALUE_OFFSET
    )
    assert montana_beam.position_value_nb(state) == expected


@pytest.mark.parametrize("free_ranks, free_low", [(3, False), (4, False), (2, True), (3, True)])
def test_a_beam_wide_enough_to_keep_every_position_matches_an_exhaustive_search(
    free_ranks, free_low
):
    # With a width no level can fill, the beam drops nothing: it wins exactly the
    # grids the rules win, by a line the rules allow, and otherwise ends on the best
    # stuck grid there is (M5, M6).
    rng = random.Random(7000 + 10 * free_ranks + free_low)
    checked = won = 0
    while checked < 20:
        grid = small_variant(rng, free_ranks, free_low)
        truth = exhaustive(grid, 20_000)
        if truth is None:
            continue
        checked += 1
        state = np.zeros(montana.STATE_SIZE, np.int16)
        montana.set_grid_nb(state, np.array(grid, np.int16), 0)
        line, worth, beam_won = beam(state, 20_000)
        end = replay(grid, line)
        assert beam_won == truth[0], grid
        won += beam_won
        assert not rule_moves(end)
        assert rule_score(end) == (48 if beam_won else worth) == truth[1], grid
    assert 0 < won < checked or free_ranks == 2


def test_a_narrow_beam_s_line_is_legal_and_ends_on_the_stuck_grid_it_reports():
    # On real deals a width of 50 prunes nearly everything: whatever it reports,
    # its line plays by the rules and ends stuck on the score it claims (M2-M5).
    for deal in range(20):
        state = np.zeros(montana.STATE_SIZE, np.int16)
        montana.deal_nb(99, deal, 0, state)
        grid = [int(c) for c in state[:52]]
        line, worth, won = beam(state, 50)
        end = replay(grid, line)
        assert not rule_moves(end)
        assert rule_score(end) == (48 if won else worth)


def test_the_solver_keeps_the_beam_s_stuck_grid_when_it_is_the_better_one():
    # The phase's line leads to a stuck grid at least as good as the beam's own.
    for deal in range(6):
        state = np.zeros(montana.STATE_SIZE, np.int16)
        montana.deal_nb(99, deal, 2, state)
        beam_budget = montana_solver.BEAM_BUDGET_SHARE * 200_000  # the solver's own beam
        _, worth, won = beam(state, montana_solver.beam_width_nb(beam_budget), beam_budget)
        line = np.zeros(montana.PLAN_CAP, np.int16)
        verdict, _, length = montana_solver.decide_nb(state, 200_000, KEEP_SCORE, line)
        end = replay([int(c) for c in state[:52]], line[:length])
        assert not rule_moves(end)
        if won:
            assert verdict == montana.OUTCOME_WON
        else:
            assert rule_score(end) >= worth


def test_a_line_is_traced_through_parent_slots_beyond_sixteen_bits():
    # Level 1 holds 40,000 positions and the line goes through its slot 39,999: each
    # kept position's parent and move are packed into one int32 of the trail.
    width, moves = 40_000, (action("9S>r4c8"), action("TS>r4c9"))
    trail = np.zeros(2 * width, np.int32)
    trail_start = np.zeros(montana_beam.BEAM_DEPTH + 2, np.int64)
    trail_start[2], trail_start[3] = width, 2 * width
    trail[39_999] = 0 * montana_beam.TRAIL_MOVES + moves[0]
    trail[width + 35_000] = 39_999 * montana_beam.TRAIL_MOVES + moves[1]
    line = np.zeros(8, np.int16)
    assert montana_beam._trace_line_nb(trail, trail_start, 2, 35_000, line) == 2
    assert tuple(line[:2]) == moves


def test_a_beam_wider_than_sixteen_bits_of_slots_wins_by_a_legal_line():
    # Deal 11 of seed 99 without redeals: the solver's default beam (20,000 wide) does
    # not win it, a beam 64,000 wide does; its line plays by the rules to the win.
    state = np.zeros(montana.STATE_SIZE, np.int16)
    montana.deal_nb(99, 11, 0, state)
    line, _, won = beam(state, 64_000, 6_400_000)
    assert won
    end = replay(list(state[: montana.CELLS]), line)
    assert rule_score(end) == 48 and not rule_moves(end)
    assert not beam(state, 20_000, 2_000_000)[2]
