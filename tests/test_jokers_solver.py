"""The Jokers solver: wins what can be won, proves lost what cannot, gives up honestly."""

import copy

import numpy as np
import pytest
from jokers_helpers import columns_of, legal_notation, play, position

from sim.engine import jokers, rng
from sim.engine.games import JOKERS
from sim.engine.referee import IllegalMove, check_line
from sim.engine.referee.jokers import Position
from sim.engine.run.job import LOG_END
from sim.policies import jokers as jokers_policies
from sim.policies import jokers_kernels

SOLVER = jokers_policies.solver


def solve(state, nodes=100_000):
    jokers_kernels.solve_into_state_nb(state, nodes, rng.new_stream(0, 0, rng.STREAM_POLICY))
    plan = state[jokers.SCRATCH_PLAN : jokers.SCRATCH_PLAN + state[jokers.SCRATCH_PLAN_LEN]]
    return int(state[jokers.SCRATCH_VERDICT]), [jokers.action_notation(int(a)) for a in plan]


def referee_moves(position_):
    """Every move the referee accepts from a position (its own rules, not the engine's)."""
    for source in range(1, 11):
        for target in ["f"] + [f"c{t}{s}" for t in range(1, 11) for s in ("", "+1", "+2")]:
            trial = copy.deepcopy(position_)
            try:
                trial.play(1, f"c{source}>{target}")
            except IllegalMove:
                continue
            yield trial


def referee_can_win(columns, foundations, reserve, limit=200_000):
    """Exhaustive search with the referee's rules alone: is any line a win?"""
    start = Position([column.split() for column in columns])
    start.foundations = dict(zip("CDHS", foundations, strict=True))
    start.reserve += reserve
    seen, frontier = set(), [start]
    while frontier:
        here = frontier.pop()
        key = (tuple(sorted(tuple(c) for c in here.columns)), here.reserve)
        if key in seen:
            continue
        seen.add(key)
        assert len(seen) < limit, "search space too big for this check"
        if sum(here.foundations.values()) == 52:
            return True
        frontier.extend(referee_moves(here))
    return False


# A hand-built deal, columns from the covered card to the free one. The high cards
# wait in order in c1-c8; the 2s and 3s are in c9 and c10, where the 3C covers the
# 2D and the 3D covers the 2H, so cards must be parked on builds before they go home:
#   c1: KC QC JC TC 9C     c6: 8D 7D 6D 5D 4D
#   c2: KD QD JD TD 9D     c7: KH QH JH TH 9H
#   c3: 8C 7C 6C 5C 4C     c8: 8H 7H 6H 5H 4H
#   c4: KS QS JS TS 9S     c9: 3H JK 2H 3D 5S
#   c5: 8S 7S 6S 4S 3S     c10: 2S JK 2D 3C 2C
WON_DEAL = [
    "KC QC JC TC 9C",
    "KD QD JD TD 9D",
    "8C 7C 6C 5C 4C",
    "KS QS JS TS 9S",
    "8S 7S 6S 4S 3S",
    "8D 7D 6D 5D 4D",
    "KH QH JH TH 9H",
    "8H 7H 6H 5H 4H",
    "3H JK 2H 3D 5S",
    "2S JK 2D 3C 2C",
]


def test_solver_wins_a_hand_built_deal_and_its_line_is_legal():
    state = position(WON_DEAL)
    assert sorted(" ".join(WON_DEAL).split()) == sorted(
        [r + s for r in "23456789TJQK" for s in "CDHS"] + ["JK", "JK"]
    )
    verdict, line = solve(state)
    assert verdict == jokers.OUTCOME_WON
    replay = position(WON_DEAL)
    play(replay, *line)
    assert jokers.score_nb(replay) == 52
    referee_line = {
        "game": "jokers",
        "layout": {"columns": [column.split() for column in WON_DEAL]},
        "moves": line,
        "outcome": "won",
        "score": 52,
    }
    assert check_line(referee_line).ok


# A hand-built position: spades all home, clubs, diamonds and hearts on their aces,
# no joker in reserve and no empty column. A few builds are possible, but every
# line jams (an exhaustive search with the referee's own rules agrees).
#   c1: 7C 3D TC          c6: 2C KH 3C 4D 6C 5C
#   c2: JK 9H 4H JD TH    c7: 5D 2D
#   c3: JK JC 4C JH       c8: 3H QD 2H QH
#   c4: KD                c9: 9C 5H
#   c5: TD 9D             c10: 8D 8C 7H 8H 6H 6D QC 7D KC
LOST_POSITION = [
    "7C 3D TC",
    "JK 9H 4H JD TH",
    "JK JC 4C JH",
    "KD",
    "TD 9D",
    "2C KH 3C 4D 6C 5C",
    "5D 2D",
    "3H QD 2H QH",
    "9C 5H",
    "8D 8C 7H 8H 6H 6D QC 7D KC",
]


def test_solver_proves_a_hand_built_position_lost_as_an_exhaustive_check_agrees():
    state = position(LOST_POSITION, foundations="A A A K")
    assert len(legal_notation(state)) >= 3
    verdict, _ = solve(state)
    assert verdict == jokers.OUTCOME_LOST
    assert jokers.nodes_nb(state) > 1
    assert not referee_can_win(LOST_POSITION, (1, 1, 1, 13), 0)


def test_solver_says_unknown_and_resigns_when_the_budget_runs_out():
    state = position(WON_DEAL)
    verdict, line = solve(state, nodes=3)
    assert verdict == jokers.OUTCOME_UNKNOWN and line == []
    assert jokers.nodes_nb(state) == 3


def test_safe_foundation_moves_are_made_alone():
    # c1: 3C   c2: 4D   foundations 2 3 3 2: the 3C can never be needed as a target
    # (red 2s home, black As home, red As home), so it is the only move searched.
    state = position(["3C", "4D", "9S", "9H"], foundations="2 3 3 2")
    out = np.empty(jokers.N_ACTIONS, np.int16)
    scratch = (
        np.empty(jokers.N_ACTIONS, np.int16),
        np.empty(jokers.N_COLUMNS, np.int64),
        np.empty(jokers.N_ACTIONS, np.int64),
    )
    stream = rng.new_stream(0, 0, 1)
    assert jokers_kernels.ordered_moves_nb(state, out, scratch, stream, 0) == 1
    assert jokers.action_notation(out[0]) == "c1>f"
    # c1: 5C on foundations 4 3 3 4: a red 4 could still go onto the 5C
    state = position(["5C", "9D", "9S", "9H"], foundations="4 3 3 4")
    assert jokers_kernels.safe_foundation_move_nb(state) == -1


def test_position_keys_ignore_column_order_and_which_joker_is_which():
    zobrist = jokers_kernels.ZOBRIST
    scratch = np.zeros(1, np.uint64)
    one = position(["8C JK 6C", "7D", "KS"], reserve=1)
    other = position(["KS", "", "7D", "8C JK 6C"], reserve=1)
    other[jokers.COLS + jokers.MAX_HEIGHT * 3 + 1] = 53
    different = position(["8C JK 6C", "7D KS"], reserve=1)
    key = jokers_kernels.position_key_nb
    assert key(one, zobrist, scratch) == key(other, zobrist, scratch)
    assert key(one, zobrist, scratch) != key(different, zobrist, scratch)


def play_solver(seed, n, nodes):
    rows = np.zeros((n, len(jokers.COLUMNS)), np.int32)
    logs = np.full((n, 2000), LOG_END, np.int16)
    params = SOLVER.param_vector(SOLVER.settings([f"nodes={nodes}"]))
    jokers.play_chunk_nb(SOLVER.choose, seed, 0, np.array([2000], np.int64), params, rows, logs)
    return rows, logs


def test_solver_wins_play_out_their_line_and_the_referee_agrees():
    rows, logs = play_solver(31, 150, 50_000)
    won = rows[:, 0] == jokers.OUTCOMES.index("won")
    assert won.sum() > 50
    for deal in np.flatnonzero(won):
        played = [int(a) for a in logs[deal] if a != LOG_END]
        line = jokers.move_log(31, deal, JOKERS.default_rules(), played)
        assert line["outcome"] == "won"
        assert check_line(line | {"game": "jokers"}).ok
    assert (rows[:, 5] > 0).all()


def test_every_deal_proved_lost_has_no_winning_line_for_the_referee():
    rows, _ = play_solver(32, 150, 50_000)
    lost = np.flatnonzero(rows[:, 0] == jokers.OUTCOMES.index("unwinnable"))
    small = [deal for deal in lost if rows[deal, 5] <= 30][:6]
    assert small
    for deal in small:
        state = np.zeros(jokers.STATE_SIZE, np.int16)
        jokers.deal_nb(32, int(deal), 2000, state)
        columns = columns_of(state)
        assert not referee_can_win(columns, (1, 1, 1, 1), int(state[jokers.RESERVE]))


@pytest.mark.slow
def test_unknown_share_is_small_at_the_default_budget():
    rows, _ = play_solver(33, 1000, jokers_policies.DEFAULT_NODES)
    assert (rows[:, 0] == jokers.OUTCOMES.index("unknown")).sum() <= 5
