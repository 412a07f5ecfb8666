"""Jokers (rules J1-J9 of RULES.md): state, legal actions, apply action, play.

The whole position is one int16 array. Its first CORE_SIZE entries are the cards
alone (columns, foundations, reserve): that is all the rules read, and all a search
needs to copy. Then come bookkeeping for results, and the policy's scratch block.

    index          name        meaning
    0 .. 159       COLS        card h (0 = the covered-most) of column c at COLS + 16 * c + h
    160 .. 169     HEIGHT      cards in column 1..10
    170 .. 173     FOUND       rank on top of the foundation of suit C D H S (1 = the ace)
    174            RESERVE     jokers in the reserve, 0..2 (J6)
    ---- CORE_SIZE = 175: the position; everything below is bookkeeping ----
    175, 176       MOVES_LO/HI moves made = HI * 32768 + LO (the cap goes up to 10**6)
    177            STALL       moves since the last foundation move, saturating at 32767
    178            JOKERS_USED jokers placed from the reserve (J7), saturating at 32767
    179            CAP         the move cap of J9, clipped to 32767 (a search's depth bound)
    180            ENDED       how play stopped: 0 no legal move left, 1 resigned, 2 capped
    ---- POLICY_SCRATCH = 181: from here on, the policy's scratch block ----
    181 .. 2185    SCRATCH_*   the policy's own (engine.kernel), laid out below

The scratch block, state[POLICY_SCRATCH:], as the solver (policies.jokers_kernels) uses it;
dealing sets its verdict to VERDICT_PENDING and its counts to 0, and the result row
reads its verdict and node count:

    offset         name                 meaning
    0              SCRATCH_VERDICT      the solver's verdict: VERDICT_PENDING, or an
                                        outcome code (engine.kernel); a deal not won
                                        whose verdict is OUTCOME_UNKNOWN is recorded
                                        as `unknown`
    1, 2           SCRATCH_NODES_LO/HI  nodes the solver searched = HI * 32768 + LO
    3              SCRATCH_PLAN_LEN     moves in the solver's plan
    4              SCRATCH_PLAN_POS     plan moves played so far
    5 .. 2004      SCRATCH_PLAN         the solver's line, PLAN_CAP actions

Cards are codes of engine.cards (rank = code // 4 + 1, suit = code % 4); jokers are 52
and 53 as dealt, and a joker placed from the reserve is written as 52: the two are alike.

Column height. Below its free card a column keeps a prefix of its dealt cards (at most
4 covered ones) or, once emptied, nothing. On the free card every build (J4, J7) puts a
card exactly one rank lower, a joker standing for one rank. So above the deepest dealt
card still in place, ranks fall by one per card from at most K down to at least 2
(aces never leave the foundations, and a joker is never free, J6): at most 12 cards.
A column holds at most 4 + 12 = 16 cards, hence MAX_HEIGHT = 16.

Deal (J1): the 48 cards other than the aces and the two jokers, in code order, are
shuffled with the stream (seed, deal, STREAM_DEAL) and dealt row by row: card i of the
shuffled deck goes to column i % 10, row i // 10, so column c holds cards c, c + 10,
..., c + 40 from the covered card to the free one. Then every free joker goes to the
reserve, again while the card it covered is a joker (J6).

Actions are small integers, source column i (0..9) and a kind:

    32 * i + j           ci>cj      free card of column i onto (or into) column j (J4, J5)
    32 * i + 10 + j      ci>cj+1    onto column j over one reserve joker (J7)
    32 * i + 20 + j      ci>cj+2    onto column j over two reserve jokers (J7)
    32 * i + 30          ci>f       onto the foundation of its suit (J3)
"""

import numpy as np
from numba import njit

from sim.engine import outcomes, rng
from sim.engine.cards import JOKER, card_name, deck_problem, parse_card
from sim.engine.games import JOKERS as GAME
from sim.engine.kernel import (  # noqa: F401 (signatures and outcome codes re-exported)
    DONE,
    FAULT,
    FAULT_NONE,
    IN_PLAY,
    OUTCOME_CAPPED,
    OUTCOME_LOST,
    OUTCOME_UNKNOWN,
    OUTCOME_UNWINNABLE,
    OUTCOME_WON,
    PLAY_CHUNK_SIG,
    PLAY_DEALS_SIG,
    POLICY_SIG,
    POLICY_TYPE,
    STATUS_SIZE,
    VERDICT_PENDING,
    choice_fault_nb,
)

N_COLUMNS = 10
MAX_HEIGHT = 16
DEAL_ROWS = 5

COLS = 0
HEIGHT = 160
FOUND = 170
RESERVE = 174
CORE_SIZE = 175
MOVES_LO = 175
MOVES_HI = 176
STALL = 177
JOKERS_USED = 178
CAP = 179
ENDED = 180
POLICY_SCRATCH = 181  # from here on a policy may write; the rest only play changes

# The scratch block (drawn above): each slot at its offset from POLICY_SCRATCH.
SCRATCH_VERDICT = POLICY_SCRATCH + 0
SCRATCH_NODES_LO = POLICY_SCRATCH + 1
SCRATCH_NODES_HI = POLICY_SCRATCH + 2
SCRATCH_PLAN_LEN = POLICY_SCRATCH + 3
SCRATCH_PLAN_POS = POLICY_SCRATCH + 4
SCRATCH_PLAN = POLICY_SCRATCH + 5
PLAN_CAP = 2000
STATE_SIZE = SCRATCH_PLAN + PLAN_CAP

SATURATE = 32767
LOW_BITS = 32768

ENDED_NO_MOVE = 0
ENDED_RESIGNED = 1
ENDED_CAPPED = 2

ACTION_STRIDE = 32
KIND_JOKERS = 10  # kind // KIND_JOKERS = jokers placed, kind % KIND_JOKERS = target
KIND_FOUNDATION = 30
N_ACTIONS = N_COLUMNS * N_COLUMNS  # per source: its foundation and 9 other columns
DEFAULT_MAX_MOVES = 2000

OUTCOMES = outcomes.LABELS

# Per-deal result columns, in the order play_chunk_nb writes them.
# Where write_result_nb puts each result column: the order the game's record declares.
COLUMNS = GAME.column_names
ROW_OUTCOME, ROW_WON, ROW_SCORE, ROW_MOVES, ROW_JOKERS_USED, ROW_NODES = GAME.column_slots(
    "outcome", "won", "score", "moves", "jokers_used", "nodes"
)


@njit(cache=True)
def rank_nb(card):
    return card // 4 + 1


@njit(cache=True)
def is_red_nb(card):
    suit = card % 4
    return suit == 1 or suit == 2


@njit(cache=True)
def top_card_nb(state, column):
    """The free card of a column, -1 if it is empty."""
    height = state[HEIGHT + column]
    if height == 0:
        return -1
    return state[COLS + MAX_HEIGHT * column + height - 1]


@njit(cache=True)
def score_nb(state):
    return state[FOUND] + state[FOUND + 1] + state[FOUND + 2] + state[FOUND + 3]


@njit(cache=True)
def split_get_nb(state, low_slot, high_slot):
    return np.int64(state[high_slot]) * LOW_BITS + np.int64(state[low_slot])


@njit(cache=True)
def split_set_nb(state, low_slot, high_slot, value):
    state[high_slot] = value // LOW_BITS
    state[low_slot] = value % LOW_BITS


@njit(cache=True)
def moves_nb(state):
    return split_get_nb(state, MOVES_LO, MOVES_HI)


@njit(cache=True)
def nodes_nb(state):
    return split_get_nb(state, SCRATCH_NODES_LO, SCRATCH_NODES_HI)


@njit(cache=True)
def set_aside_jokers_nb(state, column):
    """J6: while the free card of the column is a joker, it goes to the reserve."""
    height = state[HEIGHT + column]
    while height > 0 and state[COLS + MAX_HEIGHT * column + height - 1] >= JOKER:
        height -= 1
        state[RESERVE] += 1
    state[HEIGHT + column] = height


@njit(cache=True)
def deal_nb(seed, deal, max_moves, state):
    """Deal (seed, deal) into state by J1 and J6; bookkeeping for a cap of max_moves."""
    stream = np.zeros(1, np.uint64)
    rng.stream_state_nb(seed, deal, rng.STREAM_DEAL, stream)
    deck = np.arange(4, JOKER + 2).astype(np.int16)  # all but the aces, then 2 jokers
    rng.shuffle_nb(stream, deck)
    state[:] = 0
    for i in range(deck.shape[0]):
        column = i % N_COLUMNS
        state[COLS + MAX_HEIGHT * column + i // N_COLUMNS] = deck[i]
    for column in range(N_COLUMNS):
        state[HEIGHT + column] = DEAL_ROWS
        set_aside_jokers_nb(state, column)
    for suit in range(4):
        state[FOUND + suit] = 1
    state[CAP] = min(max_moves, SATURATE)
    clear_scratch_nb(state)


@njit(cache=True)
def clear_scratch_nb(state):
    """A new deal for the policy: no verdict yet, no nodes searched, no plan."""
    state[SCRATCH_VERDICT] = VERDICT_PENDING
    split_set_nb(state, SCRATCH_NODES_LO, SCRATCH_NODES_HI, 0)
    state[SCRATCH_PLAN_LEN] = 0
    state[SCRATCH_PLAN_POS] = 0


@njit(cache=True)
def legal_actions_nb(state, out):
    """Write the legal actions into out (room for N_ACTIONS); return how many."""
    # Per column: its free card's rank and colour folded into one number, once.
    tops = np.empty(N_COLUMNS, np.int64)
    for j in range(N_COLUMNS):
        card = top_card_nb(state, j)
        tops[j] = -1 if card < 0 else 2 * rank_nb(card) + is_red_nb(card)
    reserve = state[RESERVE]
    n = 0
    for i in range(N_COLUMNS):
        if tops[i] < 0:
            continue
        card_rank = tops[i] >> 1
        card_red = tops[i] & 1
        base = ACTION_STRIDE * i
        if state[FOUND + top_card_nb(state, i) % 4] == card_rank - 1:
            out[n] = base + KIND_FOUNDATION
            n += 1
        for j in range(N_COLUMNS):
            if j == i:
                continue
            if tops[j] < 0:
                out[n] = base + j  # J5
                n += 1
                continue
            gap = (tops[j] >> 1) - card_rank
            same_colour = (tops[j] & 1) == card_red
            if gap == 1 and not same_colour:
                out[n] = base + j  # J4
                n += 1
            elif gap == 2 and same_colour and reserve >= 1:
                out[n] = base + KIND_JOKERS + j  # J7, one joker
                n += 1
            elif gap == 3 and not same_colour and reserve >= 2:
                out[n] = base + 2 * KIND_JOKERS + j  # J7, two jokers
                n += 1
    return n


@njit(cache=True)
def move_cards_nb(state, action):
    """Move the cards of a legal action (core slots only); return jokers placed, -1 if
    the card went to a foundation."""
    source = action // ACTION_STRIDE
    kind = action % ACTION_STRIDE
    height = state[HEIGHT + source] - 1
    card = state[COLS + MAX_HEIGHT * source + height]
    state[HEIGHT + source] = height
    jokers = -1
    if kind == KIND_FOUNDATION:
        state[FOUND + card % 4] += 1
    else:
        target = kind % KIND_JOKERS
        jokers = kind // KIND_JOKERS
        slot = COLS + MAX_HEIGHT * target + state[HEIGHT + target]
        for k in range(jokers):
            state[slot + k] = JOKER
        state[slot + jokers] = card
        state[HEIGHT + target] += jokers + 1
        state[RESERVE] -= jokers
    set_aside_jokers_nb(state, source)
    return jokers


@njit(cache=True)
def apply_action_nb(state, action):
    """Apply a legal action (the caller checks legality) and keep the books."""
    jokers = move_cards_nb(state, action)
    split_set_nb(state, MOVES_LO, MOVES_HI, moves_nb(state) + 1)
    if jokers < 0:
        state[STALL] = 0
    elif state[STALL] < SATURATE:
        state[STALL] += 1
    if jokers > 0:
        state[JOKERS_USED] = min(SATURATE, state[JOKERS_USED] + jokers)


@njit(cache=True)
def outcome_nb(state):
    if score_nb(state) == 52:
        return OUTCOME_WON
    if state[SCRATCH_VERDICT] == OUTCOME_UNKNOWN:
        return OUTCOME_UNKNOWN
    if state[SCRATCH_VERDICT] == OUTCOME_LOST:  # the solver searched once, from the deal
        return OUTCOME_UNWINNABLE
    if state[ENDED] == ENDED_CAPPED:
        return OUTCOME_CAPPED
    return OUTCOME_LOST


@njit(cache=True)
def write_result_nb(state, row):
    outcome = outcome_nb(state)
    row[ROW_OUTCOME] = outcome
    row[ROW_WON] = outcome == OUTCOME_WON
    row[ROW_SCORE] = score_nb(state)
    row[ROW_MOVES] = moves_nb(state)
    row[ROW_JOKERS_USED] = state[JOKERS_USED]
    row[ROW_NODES] = nodes_nb(state)


@njit(cache=True)
def start_nb(seed, deal, rules, state):
    """Deal (seed, deal) under the rule options into state."""
    deal_nb(seed, deal, rules[0], state)


@njit(cache=True)
def play_nb(seed, deal, rules, policy, params, state, log):
    """Deal (seed, deal) and play it out with policy; log actions where log has room."""
    start_nb(seed, deal, rules, state)
    stream = np.zeros(1, np.uint64)
    rng.stream_state_nb(seed, deal, rng.STREAM_POLICY, stream)
    return play_out_nb(seed, deal, rules, state, policy, params, stream, log)


@njit(cache=True)
def play_out_nb(seed, deal, rules, state, policy, params, stream, log):
    """Play a position to the end with policy (drawing on its stream).

    The policy returns an index into the legal actions, or -1 to resign (J8). Returns
    FAULT_NONE, or the policy fault (engine.kernel) that stopped play.
    """
    max_moves = rules[0]
    legal = np.empty(N_ACTIONS, np.int16)
    moves = 0
    while True:
        if moves >= max_moves:
            state[ENDED] = ENDED_CAPPED
            return FAULT_NONE
        n = legal_actions_nb(state, legal)
        if n == 0:
            return FAULT_NONE
        choice = policy(state, legal, n, params, stream)
        if choice == -1:
            state[ENDED] = ENDED_RESIGNED
            return FAULT_NONE
        fault = choice_fault_nb(choice, n)
        if fault != FAULT_NONE:
            return fault
        if log.shape[0] > moves:
            log[moves] = legal[choice]
        apply_action_nb(state, legal[choice])
        moves += 1


@njit(PLAY_DEALS_SIG, cache=True)
def play_deals_nb(policy, seed, start, rules, params, rows, logs, status):
    """Play deals start .. start + len(rows) - 1: one result row (and log) per deal.

    Stops at the first policy fault, with the faulty deal in status (engine.kernel)."""
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
    """play_deals_nb for callers that want an exception at a policy fault."""
    status = np.zeros(STATUS_SIZE, np.int64)
    play_deals_nb(policy, seed, start, rules, params, rows, logs, status)
    if status[FAULT] != FAULT_NONE:
        raise ValueError("the policy returned an invalid action index or wrote into the state")


def action_notation(action):
    """The rule book's notation of an action: `c3>f`, `c3>c7`, `c3>c7+1`, `c3>c7+2`."""
    source, kind = divmod(int(action), ACTION_STRIDE)
    if kind == KIND_FOUNDATION:
        return f"c{source + 1}>f"
    jokers, target = divmod(kind, KIND_JOKERS)
    suffix = f"+{jokers}" if jokers else ""
    return f"c{source + 1}>c{target + 1}{suffix}"


def parse_action(text):
    """The action of a move in the rule book's notation (inverse of action_notation)."""
    source_text, _, target_text = text.partition(">")
    source = int(source_text.removeprefix("c")) - 1
    if target_text == "f":
        return ACTION_STRIDE * source + KIND_FOUNDATION
    target_text, _, jokers_text = target_text.partition("+")
    target = int(target_text.removeprefix("c")) - 1
    return ACTION_STRIDE * source + KIND_JOKERS * int(jokers_text or 0) + target


def dealt_columns(seed, deal):
    """The ten columns as dealt (before J6), each from the covered card to the free one."""
    stream = rng.new_stream(seed, deal, rng.STREAM_DEAL)
    deck = np.arange(4, JOKER + 2).astype(np.int16)
    rng.shuffle_nb(stream, deck)
    return [[int(deck[c + N_COLUMNS * r]) for r in range(DEAL_ROWS)] for c in range(N_COLUMNS)]


def state_from_layout(layout, rules):
    """The starting state of a layout in move-log form: {"columns": [[cards] x 10]}."""
    columns = [[parse_card(card) for card in column] for column in layout["columns"]]
    if len(columns) != N_COLUMNS:
        raise ValueError(f"a Jokers layout has {N_COLUMNS} columns, not {len(columns)}")
    cards = [card for column in columns for card in column]
    jokers = cards.count(JOKER)
    problem = deck_problem([card for card in cards if card != JOKER], range(4, JOKER))
    if problem or jokers != 2:
        wrong = [problem] if problem else []
        wrong += [] if jokers == 2 else [f"{jokers} JK, not 2"]
        raise ValueError(
            "a Jokers layout holds the 48 cards without aces, and 2 JK, once each: "
            + "; ".join(wrong)
        )
    if any(len(column) != DEAL_ROWS for column in columns):
        raise ValueError(f"a Jokers layout has {DEAL_ROWS} cards in each column (J1)")
    state = np.zeros(STATE_SIZE, np.int16)
    joker = JOKER
    for c, column in enumerate(columns):
        for h, card in enumerate(column):
            if card == JOKER:  # the two jokers are alike; the state numbers them
                card, joker = joker, joker + 1
            state[COLS + MAX_HEIGHT * c + h] = card
        state[HEIGHT + c] = len(column)
        set_aside_jokers_nb(state, c)
    for suit in range(4):
        state[FOUND + suit] = 1
    state[CAP] = min(rules["max_moves"], SATURATE)
    clear_scratch_nb(state)
    return state


def move_log(seed, deal, rules, actions, start=None, layout=None):
    """The move-log object of one deal (format at the end of RULES.md).

    The deal is (seed, deal), or the start state of a given layout. The outcome is read
    from the moves: `won`, `capped` when the cap stopped the deal, otherwise `lost`; a
    solver's `unknown` is in its result row, not in its moves.
    """
    max_moves = rules.get("max_moves", DEFAULT_MAX_MOVES)
    if start is None:
        state = np.empty(STATE_SIZE, np.int16)
        deal_nb(seed, deal, max_moves, state)
        columns = dealt_columns(seed, deal)
        layout = {"columns": [[card_name(c) for c in column] for column in columns]}
    else:
        state = start.copy()
    for action in actions:
        apply_action_nb(state, action)
    score = int(score_nb(state))
    if score == 52:
        outcome = "won"
    elif len(actions) >= max_moves:
        outcome = "capped"
    else:
        outcome = "lost"
    return {
        "layout": layout,
        "moves": [action_notation(int(a)) for a in actions],
        "outcome": outcome,
        "score": score,
    }
