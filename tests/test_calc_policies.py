"""Each built-in Calculation policy plays by the idea its description states."""

import numpy as np
import pytest
from calc_helpers import position

from sim.engine import calc, rng
from sim.engine.games import CALC
from sim.engine.run.job import play_chunk_python
from sim.policies.calc_kernels import steps_until_needed_nb
from sim.policies.registry import resolve


def choose(name, state, **params):
    policy = resolve("calc", name)
    legal = np.empty(calc.N_ACTIONS, np.int16)
    n = calc.legal_actions_nb(state, legal)
    values = policy.settings([f"{k}={v}" for k, v in params.items()])
    index = policy.choose(state, legal, n, policy.param_vector(values), rng.new_stream(1, 2, 3))
    return calc.action_notation(int(legal[index]))


def decisions(name, deals=60):
    """(state before, legal actions, chosen action) for every decision of some deals."""
    policy = resolve("calc", name)
    inner = policy.choose.py_func
    seen = []

    def watching(state, legal, n, params, stream):
        index = inner(state, legal, n, params, stream)
        seen.append((state.copy(), [int(a) for a in legal[:n]], int(legal[index])))
        return index

    rows = np.zeros((deals, len(calc.COLUMNS)), np.int32)
    play_chunk_python(
        calc,
        watching,
        3,
        0,
        CALC.rules_vector({"wastes": 4}),
        policy.param_vector(policy.settings()),
        rows,
        np.zeros((deals, 0), np.int16),
    )
    return seen


def is_foundation_move(action):
    return action < calc.ACT_TO_WASTE or action >= calc.ACT_FROM_WASTE


def turned_rank(state):
    return state[calc.STOCK + state[calc.POS]] // 4 + 1


def test_random_spreads_its_choices_evenly_over_the_legal_actions():
    policy = resolve("calc", "random")
    state = position(stock=["4D"])  # s>f2 and four wastes: five choices
    legal = np.empty(calc.N_ACTIONS, np.int16)
    n = calc.legal_actions_nb(state, legal)
    stream = rng.new_stream(5, 0, rng.STREAM_POLICY)
    counts = np.bincount(
        [policy.choose(state, legal, n, np.zeros(0), stream) for _ in range(5000)], minlength=n
    )
    assert n == 5 and ((counts - 1000) ** 2 / 1000).sum() < 20  # chi-square, 4 d.f.


def test_greedy_makes_a_foundation_move_whenever_one_exists():
    for _, legal, chosen in decisions("greedy"):
        assert is_foundation_move(chosen) == any(is_foundation_move(a) for a in legal)


def test_greedy_otherwise_uses_the_lowest_waste_pile():
    #   W1: 9C 9D   W2: 9H   W3: 9S TC   W4: JC JD    turned: KS (no foundation wants it)
    state = position(stock=["KS"], wastes=[["9C", "9D"], ["9H"], ["9S", "TC"], ["JC", "JD"]])
    assert choose("greedy", state) == "s>w2"


def test_kings_bottom_puts_a_king_only_on_an_empty_pile_when_there_is_one():
    kings = 0
    for state, _, chosen in decisions("kings-bottom"):
        empty = [w for w in range(4) if state[calc.HEIGHT + w] == 0]
        if not is_foundation_move(chosen) and turned_rank(state) == 13 and empty:
            kings += 1
            assert chosen - calc.ACT_TO_WASTE in empty
    assert kings > 20


def test_kings_bottom_covers_a_card_needed_after_the_turned_one():
    #   F1 needs 2, F2 needs 4, F3 needs 6, F4 needs 8.  Turned: 7C, wanted in 3 cards.
    #   W1: 3D (wanted in 1: must not be covered)  W2: JD (in 4)  W3: KC (in 11)  W4: -
    state = position(stock=["7C"], wastes=[["3D"], ["JD"], ["KC"], []])
    soon = [steps_until_needed_nb(state, r) for r in (3, 7, 11, 13)]
    assert soon == [1, 3, 4, 11]
    assert choose("kings-bottom", state) == "s>w2"  # the closest later need


def test_planner_keeps_the_last_pile_for_kings():
    for state, _, chosen in decisions("planner"):
        if is_foundation_move(chosen):
            continue
        onto_king_pile = chosen - calc.ACT_TO_WASTE == 3
        if turned_rank(state) == 13:
            assert onto_king_pile
        else:
            assert not onto_king_pile


def test_planner_sends_a_card_to_the_foundation_furthest_behind():
    #   F1 needs 5 (4 cards), F2 needs 5 (9 cards): a turned 5 goes to F1
    state = position(stock=["5S"], foundations=[(5, 4), (5, 9), (6, 2), (8, 2)])
    assert choose("planner", state) == "s>f1"


@pytest.mark.parametrize("weight, expected", [("0", "s>w1"), ("100", "s>w2")])
def test_planner_weighs_how_deep_a_pile_would_bury(weight, expected):
    #   turned 9C, wanted in 1 card.  W1: a tall pile topped by 5D (wanted in 3),
    #   W2: JH alone (in 4), W3: QD (in 1: covering it is bad), W4: the kings' pile.
    #   With no weight on depth the nearer fit (W1) wins; a heavy weight prefers W2.
    tall = ["KC", "KD", "KH", "KS", "JC", "JD", "QS", "5D"]
    state = position(stock=["9C"], wastes=[tall, ["JH"], ["QD"], []])
    assert choose("planner", state, depth_weight=weight) == expected
