"""Calculation (rules C1-C9 of RULES.md): state, legal actions, apply action, play.

The whole position is one int16 array, so it is cheap to copy, compare and hand to a
policy:

    index        name      meaning
    0 .. 47      STOCK     the 48 stock cards, turned in this order (C3)
    48           POS       index in STOCK of the turned card; 48 = stock empty
    49           NWASTE    number of waste piles W, 1..8 (C4)
    50 .. 53     NEED      rank F1..F4 needs next (C2); 0 = foundation complete
    54 .. 57     FCOUNT    cards on F1..F4, bases included (1..13)
    58 .. 65     HEIGHT    cards on waste 1..8
    66 .. 449    WASTE     card h (0 = bottom) of waste w at WASTE + 48 * w + h
    450 .. 453   BASE      the base cards of F1..F4, kept for logs
    454          MOVES     actions applied so far
    455          LASTFOUND turn (POS) of the last move onto a foundation
    456          MAXHEIGHT highest waste pile so far
    ---- POLICY_SCRATCH = 457: from here on, the policy's scratch block ----
    457 .. 554   SCRATCH_* the policy's own (engine.kernel), laid out below

The scratch block, state[POLICY_SCRATCH:], as the oracle (policies.calc_oracle) uses
it; dealing sets its verdict to VERDICT_PENDING and its plan length to 0, and the
result row reads its verdict:

    offset       name              meaning
    0            SCRATCH_VERDICT   the search's verdict on the deal: VERDICT_PENDING, or
                                   an outcome code (engine.kernel); a deal not won whose
                                   verdict is OUTCOME_UNKNOWN is recorded as `unknown`
    1            SCRATCH_PLAN_LEN  moves of the deal the plan covers (0: no plan)
    2 .. 97      SCRATCH_PLAN      the plan: the action of move i at SCRATCH_PLAN + i

Cards are codes of engine.cards (rank = code // 4 + 1). The card turned and waiting to
be placed is always STOCK[POS] (C5): placing it turns the next one.

Actions are small integers:

    0 .. 3            s>f1 .. s>f4   turned card to a foundation
    4 .. 11           s>w1 .. s>w8   turned card to a waste pile
    12 + 4 * w + k    w(w+1)>f(k+1)  top of waste w to foundation k (C6)
"""

import numpy as np
from numba import njit

from sim.engine import outcomes, rng
from sim.engine.cards import card_name, deck_problem, parse_card
from sim.engine.games import CALC as GAME
from sim.engine.kernel import (  # noqa: F401 (signatures and outcome codes re-exported)
    DONE,
    FAULT,
    FAULT_NONE,
    IN_PLAY,
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

STOCK = 0
POS = 48
NWASTE = 49
NEED = 50
FCOUNT = 54
HEIGHT = 58
WASTE = 66
BASE = 450
MOVES = 454
LASTFOUND = 455
MAXHEIGHT = 456
POLICY_SCRATCH = 457  # from here on a policy may write; the rest only play changes

# split_deck_nb writes a card above 4 through the slot after the four foundations'
# counts and bases, and the deck's 49th stock card one past the stock: those slots must
# be ones set_start_nb resets.
assert (FCOUNT + 4, BASE + 4, STOCK + 48) == (HEIGHT, MOVES, POS)

STOCK_SIZE = 48
MAX_WASTES = 8
PILE_CAP = 48
ACT_TO_WASTE = 4
ACT_FROM_WASTE = 12
N_ACTIONS = 12 + 4 * MAX_WASTES
MAX_MOVES = 96  # 48 placements and at most 48 waste-to-foundation moves

# The scratch block (drawn above): each slot at its offset from POLICY_SCRATCH.
SCRATCH_VERDICT = POLICY_SCRATCH + 0
SCRATCH_PLAN_LEN = POLICY_SCRATCH + 1
SCRATCH_PLAN = POLICY_SCRATCH + 2
PLAN_CAP = MAX_MOVES  # a plan holds a whole deal
STATE_SIZE = SCRATCH_PLAN + PLAN_CAP

# Where write_result_nb puts each result column: the order the game's record declares.
COLUMNS = GAME.column_names
ROW_WON, ROW_SCORE, ROW_MOVES, ROW_LAST_FOUNDATION_TURN, ROW_MAX_WASTE_HEIGHT, ROW_OUTCOME = (
    GAME.column_slots(
        "won", "score", "moves", "last_foundation_turn", "max_waste_height", "outcome"
    )
)
OUTCOMES = outcomes.LABELS


@njit(cache=True)
def rank_nb(card):
    return card // 4 + 1


@njit(cache=True)
def next_rank_nb(rank, step):
    """The rank after `rank` on the foundation built by `step` (C2, wraps after K)."""
    return (rank + step - 1) % 13 + 1


@njit(cache=True)
def deal_nb(seed, deal, wastes, state):
    """Deal (seed, deal) into state: bases by C3, the other 48 cards as the stock."""
    deal_into_nb(seed, deal, wastes, state, np.empty(1, np.uint64), np.empty(52, np.int16))


@njit(cache=True)
def deal_into_nb(seed, deal, wastes, state, stream, deck):
    """deal_nb with its working arrays given (a stream state, 52 int16 cards), so that a
    chunk's deals reuse one set instead of allocating their own."""
    rng.stream_state_nb(seed, deal, rng.STREAM_DEAL, stream)
    for i in range(52):
        deck[i] = i
    rng.shuffle_nb(stream, deck)
    state[:] = 0
    split_deck_nb(state, deck)
    set_start_nb(state, wastes)


@njit(cache=True)
def split_deck_nb(state, deck):
    """The first A, 2, 3 and 4 of deck to the bases (C3), the other cards to the stock.

    Written without branches: whether a card is an A..4 is a coin toss the processor
    cannot predict, and the branchy loop took a quarter of a greedy deal. Every card
    goes through slot k = min(rank - 1, 4), so a card above 4 lands in the slots after
    FCOUNT and BASE, HEIGHT and MOVES, and the 49th stock write in POS: set_start_nb
    resets all three. HEIGHT = 1 marks that fifth "foundation" as taken."""
    state[HEIGHT] = 1
    n_stock = 0
    for i in range(52):
        card = deck[i]
        k = min(np.intp(card >> 2), 4)
        is_base = state[FCOUNT + k] == 0
        state[FCOUNT + k] = 1
        state[BASE + k] = card if is_base else state[BASE + k]
        state[STOCK + n_stock] = card
        n_stock += 1 - is_base


@njit(cache=True)
def set_start_nb(state, wastes):
    """Everything but the cards: bases on the foundations, empty wastes (C2, C4)."""
    state[POS] = 0
    state[NWASTE] = wastes
    for k in range(4):
        state[NEED + k] = next_rank_nb(k + 1, k + 1)
        state[FCOUNT + k] = 1
    state[HEIGHT : HEIGHT + MAX_WASTES] = 0
    state[MOVES] = 0
    state[LASTFOUND] = 0
    state[MAXHEIGHT] = 0
    clear_scratch_nb(state)


@njit(cache=True)
def clear_scratch_nb(state):
    """A new deal for the policy: no verdict yet, no plan."""
    state[SCRATCH_VERDICT] = VERDICT_PENDING
    state[SCRATCH_PLAN_LEN] = 0


@njit(cache=True)
def score_nb(state):
    return state[FCOUNT] + state[FCOUNT + 1] + state[FCOUNT + 2] + state[FCOUNT + 3]


@njit(cache=True)
def waste_top_nb(state, w):
    h = state[HEIGHT + w]
    if h == 0:
        return -1
    return state[WASTE + PILE_CAP * w + h - 1]


@njit(cache=True)
def legal_actions_nb(state, out):
    """Write the legal actions into out; return how many (0 = game over, C8)."""
    n = 0
    if state[POS] < STOCK_SIZE:
        r = rank_nb(state[STOCK + state[POS]])
        for k in range(4):
            if state[NEED + k] == r:
                out[n] = k
                n += 1
        for w in range(state[NWASTE]):
            out[n] = ACT_TO_WASTE + w
            n += 1
    for w in range(state[NWASTE]):
        top = waste_top_nb(state, w)
        if top >= 0:
            r = rank_nb(top)
            for k in range(4):
                if state[NEED + k] == r:
                    out[n] = ACT_FROM_WASTE + 4 * w + k
                    n += 1
    return n


@njit(cache=True)
def is_legal_nb(state, action):
    buf = np.empty(N_ACTIONS, np.int16)
    n = legal_actions_nb(state, buf)
    for i in range(n):  # noqa: SIM110 (a plain loop compiles to the tightest code)
        if buf[i] == action:
            return True
    return False


@njit(cache=True)
def _to_foundation_nb(state, k):
    count = state[FCOUNT + k] + 1
    state[FCOUNT + k] = count
    if count == 13:
        state[NEED + k] = 0
    else:
        # next_rank_nb without its modulo: the rank is 1..13 and the step 1..4.
        need = state[NEED + k] + k + 1
        state[NEED + k] = need - 13 if need > 13 else need
    state[LASTFOUND] = state[POS]


@njit(cache=True)
def apply_action_nb(state, action):
    """Apply a legal action (the caller checks legality)."""
    if action < ACT_TO_WASTE:
        _to_foundation_nb(state, action)
        state[POS] += 1
    elif action < ACT_FROM_WASTE:
        w = action - ACT_TO_WASTE
        h = state[HEIGHT + w]
        state[WASTE + PILE_CAP * w + h] = state[STOCK + state[POS]]
        state[HEIGHT + w] = h + 1
        if h + 1 > state[MAXHEIGHT]:
            state[MAXHEIGHT] = h + 1
        state[POS] += 1
    else:
        w = (action - ACT_FROM_WASTE) // 4
        k = (action - ACT_FROM_WASTE) % 4
        state[HEIGHT + w] -= 1
        _to_foundation_nb(state, k)
    state[MOVES] += 1


@njit(cache=True)
def write_result_nb(state, row):
    score = score_nb(state)
    row[ROW_WON] = score == 52
    row[ROW_SCORE] = score
    row[ROW_MOVES] = state[MOVES]
    row[ROW_LAST_FOUNDATION_TURN] = state[LASTFOUND]
    row[ROW_MAX_WASTE_HEIGHT] = state[MAXHEIGHT]
    # A search that ran out of budget leaves the deal undecided, whatever play then did.
    if score == 52:
        row[ROW_OUTCOME] = OUTCOME_WON
    else:
        row[ROW_OUTCOME] = lost_outcome_nb(state[SCRATCH_VERDICT])


@njit(cache=True)
def lost_outcome_nb(verdict):
    """A deal not won: undecided when a search gave up, unwinnable when the oracle
    proved it (it searches once, from the deal as dealt), else lost."""
    if verdict == OUTCOME_UNKNOWN:
        return OUTCOME_UNKNOWN
    return OUTCOME_UNWINNABLE if verdict == OUTCOME_LOST else OUTCOME_LOST


@njit(cache=True)
def start_nb(seed, deal, rules, state):
    """Deal (seed, deal) under the rule options into state."""
    start_into_nb(seed, deal, rules, state, np.empty(1, np.uint64), np.empty(52, np.int16))


@njit(cache=True)
def start_into_nb(seed, deal, rules, state, stream, deck):
    """start_nb with its working arrays given, as deal_into_nb takes them."""
    deal_into_nb(seed, deal, rules[0], state, stream, deck)


@njit(cache=True)
def play_nb(seed, deal, rules, policy, params, state, log):
    """Deal (seed, deal) and play it out with policy; log actions where log has room."""
    stream, deck = np.empty(1, np.uint64), np.empty(52, np.int16)
    legal = np.empty(N_ACTIONS, np.int16)
    return play_into_nb(seed, deal, rules, policy, params, state, log, stream, deck, legal)


@njit(cache=True)
def play_into_nb(seed, deal, rules, policy, params, state, log, stream, deck, legal):
    """play_nb with its working arrays given, as deal_into_nb takes them, and a buffer
    for the legal actions."""
    start_into_nb(seed, deal, rules, state, stream, deck)
    rng.stream_state_nb(seed, deal, rng.STREAM_POLICY, stream)
    return play_out_nb(seed, deal, rules, state, policy, params, stream, log, legal)


@njit(cache=True)
def play_out_nb(seed, deal, rules, state, policy, params, stream, log, legal=None):
    """Play a position to the end with policy (drawing on its stream).

    Returns FAULT_NONE, or the policy fault (engine.kernel) that stopped play. Seed,
    deal and rules are unused here: games with chance events during play use them.
    legal, room for N_ACTIONS, lets a chunk's deals share one buffer; without it (as
    the interpreted twin in engine.run.job calls it) play allocates its own."""
    if legal is None:
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


@njit(PLAY_DEALS_SIG, cache=True)
def play_deals_nb(policy, seed, start, rules, params, rows, logs, status):
    """Play deals start .. start + len(rows) - 1: one result row (and log) per deal.

    Stops at the first policy fault, with the faulty deal in status (engine.kernel)."""
    state = np.empty(STATE_SIZE, np.int16)
    stream, deck = np.empty(1, np.uint64), np.empty(52, np.int16)  # one set for all deals
    legal = np.empty(N_ACTIONS, np.int16)
    status[DONE] = 0
    status[FAULT] = FAULT_NONE
    for i in range(rows.shape[0]):
        status[IN_PLAY] = start + i
        fault = play_into_nb(
            seed, start + i, rules, policy, params, state, logs[i], stream, deck, legal
        )
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
    """The rule book's notation of an action: `s>f2`, `s>w3`, `w3>f2`."""
    if action < ACT_TO_WASTE:
        return f"s>f{action + 1}"
    if action < ACT_FROM_WASTE:
        return f"s>w{action - ACT_TO_WASTE + 1}"
    w, k = divmod(action - ACT_FROM_WASTE, 4)
    return f"w{w + 1}>f{k + 1}"


def state_from_layout(layout, rules):
    """The starting state of a layout in move-log form: {"bases": [...], "stock": [...]}."""
    bases = [parse_card(card) for card in layout["bases"]]
    stock = [parse_card(card) for card in layout["stock"]]
    if len(bases) != 4 or len(stock) != STOCK_SIZE:
        raise ValueError(
            f"a Calculation layout has 4 bases and {STOCK_SIZE} stock cards, "
            f"not {len(bases)} and {len(stock)}"
        )
    problem = deck_problem(bases + stock, range(52))
    if problem:
        raise ValueError(f"a Calculation layout holds the 52 cards once each: {problem}")
    if [rank_nb(card) for card in bases] != [1, 2, 3, 4]:
        raise ValueError("the bases must be an A, a 2, a 3 and a 4, in that order")
    state = np.zeros(STATE_SIZE, np.int16)
    state[BASE : BASE + 4] = bases
    state[STOCK : STOCK + STOCK_SIZE] = stock
    set_start_nb(state, rules["wastes"])
    return state


def move_log(seed, deal, rules, actions, start=None, layout=None):
    """The move-log object of one deal (format at the end of RULES.md), from its actions.

    The deal is (seed, deal), or the given start state for a layout from elsewhere."""
    if start is None:
        state = np.empty(STATE_SIZE, np.int16)
        deal_nb(seed, deal, rules["wastes"], state)
    else:
        state = start.copy()
    for action in actions:
        apply_action_nb(state, action)
    score = int(score_nb(state))
    return {
        "layout": {
            "bases": [card_name(c) for c in state[BASE : BASE + 4]],
            "stock": [card_name(c) for c in state[STOCK : STOCK + STOCK_SIZE]],
        },
        "moves": [action_notation(int(a)) for a in actions],
        "outcome": "won" if score == 52 else "lost",
        "score": score,
    }
