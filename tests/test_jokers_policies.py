"""Jokers policies: each plays by its idea; properties on many random deals; the
compiled and pure-Python paths agree."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT
from jokers_helpers import ACTIONS, cards_in_play, legal_notation, position

from sim.engine import jokers, rng
from sim.engine.cards import JOKER
from sim.engine.games import JOKERS
from sim.engine.referee import check_line
from sim.engine.run.job import LOG_END, play_deal_python
from sim.policies import jokers as jokers_policies
from sim.policies.registry import builtin_policies

POLICIES = builtin_policies("jokers")
QUICK = {"solver": ["nodes=3000"]}  # a small budget keeps the solver quick in tests


def choice(policy, state, pairs=()):
    """The move (notation) the policy picks in a hand-built position."""
    buf = np.empty(jokers.N_ACTIONS, np.int16)
    n = jokers.legal_actions_nb(state, buf)
    params = policy.param_vector(policy.settings(pairs))
    index = policy.choose(state, buf, n, params, rng.new_stream(1, 0, rng.STREAM_POLICY))
    return None if index < 0 else jokers.action_notation(int(buf[index]))


def play_logged(policy, seed, n, pairs=(), max_moves=2000):
    rows = np.zeros((n, len(jokers.COLUMNS)), np.int32)
    logs = np.full((n, max_moves), LOG_END, np.int16)
    params = policy.param_vector(policy.settings(pairs))
    rules = np.array([max_moves], np.int64)
    jokers.play_chunk_nb(policy.choose, seed, 0, rules, params, rows, logs)
    return rows, logs


def test_random_is_uniform_among_the_legal_moves():
    # c1: 5C   c2: 6D   c3: 6H   c4..c10: KC KD KH KS QC QD QH: two legal moves
    state = position(["5C", "6D", "6H", "KC", "KD", "KH", "KS", "QC", "QD", "QH"])
    buf = np.empty(jokers.N_ACTIONS, np.int16)
    n = jokers.legal_actions_nb(state, buf)
    params = np.array([200.0])
    stream = rng.new_stream(5, 0, rng.STREAM_POLICY)
    picks = [jokers_policies.random.choose(state, buf, n, params, stream) for _ in range(4000)]
    counts = np.bincount(picks, minlength=n)
    assert n == len(legal_notation(state)) and len(counts) == n
    assert all(abs(c - 4000 / n) < 5 * np.sqrt(4000 / n) for c in counts)


def test_random_resigns_after_patience_moves_without_a_foundation_move():
    rows, _ = play_logged(jokers_policies.random, 3, 300, ["patience=10"])
    state = np.zeros(jokers.STATE_SIZE, np.int16)
    resigned = 0
    for deal in range(300):
        jokers.play_nb(
            3,
            deal,
            np.array([2000], np.int64),
            jokers_policies.random.choose,
            np.array([10.0]),
            state,
            np.zeros(0, np.int16),
        )
        if state[jokers.ENDED] == jokers.ENDED_RESIGNED:
            resigned += 1
            assert state[jokers.STALL] == 10
    assert resigned > 0
    assert (rows[:, 0] != jokers.OUTCOMES.index("capped")).all()


def test_greedy_plays_a_foundation_move_first():
    # c1: 9S 2H   c2: TD 5C   c3: 6D   c4..c10: KC KD KH KS QC QD QH
    state = position(["9S 2H", "TD 5C", "6D", "KC", "KD", "KH", "KS", "QC", "QD", "QH"])
    assert "c2>c3" in legal_notation(state)
    assert choice(jokers_policies.greedy, state) == "c1>f"


def test_greedy_digs_where_the_wanted_card_lies_shallowest():
    # c1: 2H 8C 7D   (the wanted 2H two cards down)
    # c2: 2S 4C      (the wanted 2S one card down)
    # c3: 5D   c4: 9S   c5: 8S   c6..c10: 9C JS JC 3C 3S
    state = position(["2H 8C 7D", "2S 4C", "5D", "9S", "8S", "9C", "JS", "JC", "3C", "3S"])
    assert {"c1>c5", "c2>c3"} <= set(legal_notation(state))
    assert choice(jokers_policies.greedy, state) == "c2>c3"


def test_greedy_leaves_a_card_on_its_natural_predecessor_when_nothing_is_wanted_below():
    # c1: KD QS JD   (a run, nothing wanted under it)   c2: QC
    # c3..c10: 9C 9S 7C 7S 5C 5S 3C 3S
    state = position(["KD QS JD", "QC", "9C", "9S", "7C", "7S", "5C", "5S", "3C", "3S"])
    assert legal_notation(state) == ["c1>c2"]  # JD could go onto QC: a sibling swap
    assert choice(jokers_policies.greedy, state) is None  # nothing worth doing: resign


def test_greedy_spends_a_joker_only_to_reach_a_wanted_card():
    # c1: 2D 6C   (6C hides the wanted 2D)   c2: 8C   c3: JH 7S 5S   c4: 7C
    # c5..c10: 9C JS JC 3C 3S KS   reserve: 1 joker
    columns = ["2D 6C", "8C", "JH 7S 5S", "7C", "9C", "JS", "JC", "3C", "3S", "KS"]
    state = position(columns, reserve=1)
    assert {"c1>c2+1", "c3>c4+1"} <= set(legal_notation(state))
    assert choice(jokers_policies.greedy, state) == "c1>c2+1"


def test_greedy_resigns_instead_of_looping():
    rows, _ = play_logged(jokers_policies.greedy, 11, 2000)
    assert (rows[:, 0] != jokers.OUTCOMES.index("capped")).all()
    assert rows[:, 3].max() < 2000


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.name)
def test_every_move_is_legal_for_the_independent_referee(policy):
    n = 60 if policy.name == "solver" else 300
    rows, logs = play_logged(policy, 2024, n, QUICK.get(policy.name, ()))
    for deal, (row, actions) in enumerate(zip(rows, logs, strict=True)):
        played = [int(a) for a in actions if a != LOG_END]
        line = jokers.move_log(2024, deal, JOKERS.default_rules(), played)
        assert line["score"] == row[2] and len(played) == row[3]
        label = jokers.OUTCOMES[row[0]]
        if label in ("unknown", "unwinnable"):  # the solver's verdict, beyond the moves
            assert line["outcome"] == "lost"
            line["outcome"] = label
        assert line["outcome"] == label
        verdict = check_line(line | {"game": "jokers"})
        assert verdict.ok, (policy.name, deal, str(verdict))


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.name)
def test_cards_are_conserved_and_every_deal_ends(policy):
    seen = []
    choose = policy.choose.py_func

    def watching(state, legal, n_legal, params, stream):
        cards = cards_in_play(state)
        assert sorted(cards) == sorted(list(range(52)) + [JOKER, JOKER])
        assert state[jokers.HEIGHT : jokers.HEIGHT + 10].max() <= jokers.MAX_HEIGHT
        seen.append(n_legal)
        return choose(state, legal, n_legal, params, stream)

    params = policy.param_vector(policy.settings(QUICK.get(policy.name, ())))
    state = np.zeros(jokers.STATE_SIZE, np.int16)
    rules = JOKERS.rules_vector(JOKERS.default_rules())
    for deal in range(5 if policy.name == "solver" else 40):
        play_deal_python(jokers, 7, deal, rules, watching, params, state, np.zeros(0, np.int16))
        assert jokers.moves_nb(state) <= 2000
        assert state[jokers.ENDED] != jokers.ENDED_NO_MOVE or legal_notation(state) == []
    assert seen


def test_columns_never_outgrow_their_slots_on_long_random_play():
    rows, logs = play_logged(jokers_policies.random, 5, 300, ["patience=2000"])
    state = np.zeros(jokers.STATE_SIZE, np.int16)
    tallest = 0
    for deal in range(300):
        jokers.deal_nb(5, deal, 2000, state)
        for action in logs[deal]:
            if action == LOG_END:
                break
            jokers.apply_action_nb(state, action)
            tallest = max(tallest, int(state[jokers.HEIGHT : jokers.HEIGHT + 10].max()))
    assert 5 < tallest <= jokers.MAX_HEIGHT


PURE_PYTHON = """
import json, numpy as np
from sim.engine import jokers
from sim.policies.registry import builtin_policies
out = {}
for policy in builtin_policies("jokers"):
    n = 10 if policy.name == "solver" else 150
    pairs = ["nodes=3000"] if policy.name == "solver" else []
    rows = np.zeros((n, len(jokers.COLUMNS)), np.int32)
    logs = np.zeros((n, 0), np.int16)
    params = policy.param_vector(policy.settings(pairs))
    jokers.play_chunk_nb(policy.choose, 99, 0, np.array([2000], np.int64), params, rows, logs)
    out[policy.name] = rows.tolist()
print(json.dumps(out))
"""


@pytest.mark.slow
def test_compiled_and_pure_python_paths_give_the_same_rows():
    outputs = []
    for disable in ("0", "1"):
        env = os.environ | {"NUMBA_DISABLE_JIT": disable}
        done = subprocess.run(
            [sys.executable, "-W", "ignore", "-c", PURE_PYTHON],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1]
    assert set(outputs[0]) == {p.name for p in POLICIES}


def test_action_table_covers_the_legal_moves():
    state = position(["5C", "6D"], reserve=2)
    assert set(legal_notation(state)) <= set(ACTIONS)
