"""Pairs (rules P1-P5 of this package's README), compiled.

The position is one int16 array:

    index      name     meaning
    0 .. 51    DECK     the shuffled deck (P1): the row is dealt from it, then the stock
    52 .. 64   ROW      the cells of the row: a card code, or EMPTY (P2)
    65         CELLS    cells in the row, 2..13
    66         NEXT     index in DECK of the next stock card; 52 = stock empty (P4)
    67         TAKEN    cards taken, 0..52 (P3)
    68         MOVES    pairs taken
    69 .. 71   SCRATCH  the policy's own block (engine/kernel.py): play never reads it

An action is a * MAX_CELLS + b, a < b: take the cards of cells a and b (0-based).
"""

import numpy as np
from numba import njit

from sim.engine import rng
from sim.engine.cards import card_name, parse_card
from sim.engine.kernel import (  # noqa: F401 (POLICY_SIG re-exported for policies)
    DONE,
    FAULT,
    FAULT_NONE,
    IN_PLAY,
    OUTCOME_LOST,
    OUTCOME_WON,
    PLAY_CHUNK_SIG,
    PLAY_DEALS_SIG,
    POLICY_SIG,
    STATUS_SIZE,
    choice_fault_nb,
)
from sim.engine.outcomes import LABELS as OUTCOMES  # noqa: F401 (the contract's name)
from sim_pairs import PAIRS

DECK = 0
ROW = 52
CELLS = 65
NEXT = 66
TAKEN = 67
MOVES = 68
POLICY_SCRATCH = 69
STATE_SIZE = 72

# Where write_result_nb puts each result column: the order the game's record declares.
ROW_OUTCOME, ROW_WON, ROW_SCORE, ROW_MOVES = PAIRS.column_slots("outcome", "won", "score", "moves")

MAX_CELLS = 13
EMPTY = -1
N_ACTIONS = MAX_CELLS * (MAX_CELLS - 1) // 2


@njit(cache=True)
def rank_nb(card):
    return card // 4 + 1


@njit(cache=True)
def start_nb(seed, deal, rules, state):
    """Deal (seed, deal): shuffle (P1), deal the row, the rest is the stock (P2)."""
    stream = np.zeros(1, np.uint64)
    rng.stream_state_nb(seed, deal, rng.STREAM_DEAL, stream)
    deck = np.arange(52).astype(np.int16)
    rng.shuffle_nb(stream, deck)
    state[:] = 0
    state[DECK : DECK + 52] = deck
    cells = rules[0]
    state[CELLS] = cells
    state[ROW : ROW + MAX_CELLS] = EMPTY
    state[ROW : ROW + cells] = deck[:cells]
    state[NEXT] = cells


@njit(cache=True)
def legal_actions_nb(state, out):
    """The pairs of cells holding cards of one rank (P3); 0 when the game is over (P5)."""
    n = 0
    cells = state[CELLS]
    for a in range(cells):
        if state[ROW + a] == EMPTY:
            continue
        for b in range(a + 1, cells):
            if state[ROW + b] != EMPTY and rank_nb(state[ROW + a]) == rank_nb(state[ROW + b]):
                out[n] = a * MAX_CELLS + b
                n += 1
    return n


@njit(cache=True)
def apply_action_nb(state, action):
    """Take the pair, then refill the lower cell first from the stock (P3, P4)."""
    for cell in (action // MAX_CELLS, action % MAX_CELLS):
        if state[NEXT] < 52:
            state[ROW + cell] = state[DECK + state[NEXT]]
            state[NEXT] += 1
        else:
            state[ROW + cell] = EMPTY
    state[TAKEN] += 2
    state[MOVES] += 1


@njit(cache=True)
def write_result_nb(state, row):
    won = state[TAKEN] == 52
    row[ROW_OUTCOME] = OUTCOME_WON if won else OUTCOME_LOST
    row[ROW_WON] = won
    row[ROW_SCORE] = state[TAKEN]
    row[ROW_MOVES] = state[MOVES]


@njit(cache=True)
def play_out_nb(seed, deal, rules, state, policy, params, stream, log):
    """Play to the end with policy; FAULT_NONE, or the policy fault that stopped play."""
    legal = np.empty(N_ACTIONS, np.int16)
    while True:
        n = legal_actions_nb(state, legal)
        if n == 0:
            return FAULT_NONE
        choice = policy(state, legal, n, params, stream)
        fault = choice_fault_nb(choice, n)
        if fault != FAULT_NONE:
            return fault
        if log.shape[0] > state[MOVES]:
            log[state[MOVES]] = legal[choice]
        apply_action_nb(state, legal[choice])


@njit(cache=True)
def play_nb(seed, deal, rules, policy, params, state, log):
    start_nb(seed, deal, rules, state)
    stream = np.zeros(1, np.uint64)
    rng.stream_state_nb(seed, deal, rng.STREAM_POLICY, stream)
    return play_out_nb(seed, deal, rules, state, policy, params, stream, log)


@njit(PLAY_DEALS_SIG, cache=True)
def play_deals_nb(policy, seed, start, rules, params, rows, logs, status):
    """Deals start, start + 1, ...: one row (and log) each; stop at a policy fault."""
    state = np.empty(STATE_SIZE, np.int16)
    status[DONE] = 0
    status[FAULT] = FAULT_NONE
    for i in range(rows.shape[0]):
        status[IN_PLAY] = start + i
        fault = play_nb(seed, start + i, rules, policy, params, state, logs[i])
        if fault != FAULT_NONE:
            status[FAULT] = fault
            return
        write_result_nb(state, rows[i])
        status[DONE] = i + 1


@njit(PLAY_CHUNK_SIG, cache=True)
def play_chunk_nb(policy, seed, start, rules, params, rows, logs):
    status = np.zeros(STATUS_SIZE, np.int64)
    play_deals_nb(policy, seed, start, rules, params, rows, logs, status)
    if status[FAULT] != FAULT_NONE:
        raise ValueError("the policy returned an invalid action index or wrote into the state")


def state_from_layout(layout, rules):
    """The state of a layout in move-log form: {"row": [...], "stock": [...]}."""
    row = [parse_card(card) for card in layout["row"]]
    stock = [parse_card(card) for card in layout["stock"]]
    if sorted(row + stock) != list(range(52)):
        raise ValueError("a Pairs layout holds the 52 cards once each")
    if len(row) != rules["cells"]:
        raise ValueError(f"the row has {len(row)} cells, not {rules['cells']}")
    state = np.zeros(STATE_SIZE, np.int16)
    state[DECK : DECK + 52] = row + stock
    state[CELLS] = len(row)
    state[ROW : ROW + MAX_CELLS] = EMPTY
    state[ROW : ROW + len(row)] = row
    state[NEXT] = len(row)
    return state


def move_log(seed, deal, rules, actions, start=None, layout=None):
    """The move-log object of one deal, from its actions."""
    if start is None:
        state = np.empty(STATE_SIZE, np.int16)
        start_nb(seed, deal, np.array([rules["cells"]], np.int64), state)
    else:
        state = start.copy()
    cells = int(state[CELLS])
    deck = [card_name(int(c)) for c in state[DECK : DECK + 52]]
    moves = []
    for action in actions:
        a, b = divmod(int(action), MAX_CELLS)
        moves.append(f"{a + 1}+{b + 1}")
        apply_action_nb(state, action)
    taken = int(state[TAKEN])
    return {
        "layout": {"row": deck[:cells], "stock": deck[cells:]},
        "moves": moves,
        "outcome": "won" if taken == 52 else "lost",
        "score": taken,
    }
