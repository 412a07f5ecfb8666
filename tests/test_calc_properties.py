"""Properties of Calculation on many random deals, for every built-in policy."""

import numpy as np
import pytest

from sim.engine import calc, rng
from sim.engine.games import CALC
from sim.engine.referee import check_line
from sim.engine.run.job import LOG_END, play_chunk_python
from sim.policies.registry import builtin_policies

# The heuristics; the search policies, thousands of times slower, have their own tests.
POLICIES = [
    p for p in builtin_policies("calc") if p.name in ("random", "greedy", "kings-bottom", "planner")
]


def play_logged(policy, seed, n, wastes=4):
    rows = np.zeros((n, len(calc.COLUMNS)), np.int32)
    logs = np.full((n, calc.MAX_MOVES), LOG_END, np.int16)
    params = policy.param_vector(policy.settings())
    calc.play_chunk_nb(policy.choose, seed, 0, np.array([wastes], np.int64), params, rows, logs)
    return rows, logs


@pytest.mark.parametrize("wastes", [4, 3])
@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.name)
def test_every_move_is_legal_for_an_independent_referee(policy, wastes):
    rows, logs = play_logged(policy, seed=2024, n=300, wastes=wastes)
    for deal, (row, actions) in enumerate(zip(rows, logs, strict=True)):
        line = calc.move_log(2024, deal, {"wastes": wastes}, [a for a in actions if a != LOG_END])
        line |= {"game": "calc", "wastes": wastes}
        verdict = check_line(line)
        assert verdict.ok, (policy.name, deal, str(verdict))
        assert line["score"] == row[1] and (line["outcome"] == "won") == bool(row[0])


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.name)
def test_cards_are_conserved_and_every_deal_ends(policy):
    checked = []
    choose = policy.choose.py_func

    def watching(state, legal, n_legal, params, stream):
        pos = state[calc.POS]
        cards = list(state[calc.STOCK + pos : calc.STOCK + 48])
        for w in range(state[calc.NWASTE]):
            base = calc.WASTE + calc.PILE_CAP * w
            cards += list(state[base : base + state[calc.HEIGHT + w]])
        on_foundations = int(calc.score_nb(state))
        assert len(cards) + on_foundations == 52
        assert len(set(cards)) == len(cards)
        checked.append(n_legal)
        return choose(state, legal, n_legal, params, stream)

    params = policy.param_vector(policy.settings())
    rules = CALC.rules_vector(CALC.default_rules())
    rows = np.zeros((40, len(calc.COLUMNS)), np.int32)
    play_chunk_python(calc, watching, 7, 0, rules, params, rows, np.zeros((40, 0), np.int16))
    assert checked
    assert (rows[:, 2] >= 48).all() and (rows[:, 2] <= calc.MAX_MOVES).all()  # all 48 turned


def test_score_is_the_count_of_foundation_cards_and_wins_are_52():
    for policy in POLICIES:
        rows, _ = play_logged(policy, seed=5, n=2000)
        won, score = rows[:, 0], rows[:, 1]
        assert score.min() >= 4 and score.max() <= 52
        assert np.array_equal(won == 1, score == 52)


def test_deals_are_fair_shuffles():
    # Where each card lands in the 52-card shuffle is uniform: chi-square per position.
    n = 20000
    counts = np.zeros((52, 52), np.int64)
    for deal in range(n):
        deck = np.arange(52).astype(np.int16)
        rng.shuffle_nb(rng.new_stream(99, deal, rng.STREAM_DEAL), deck)
        counts[np.arange(52), deck] += 1
    expected = n / 52
    chi2 = ((counts - expected) ** 2 / expected).sum()
    # 51 * 51 = 2601 degrees of freedom: mean 2601, sd about 72; 5 sd is a clear failure.
    assert abs(chi2 - 2601) < 5 * 72
