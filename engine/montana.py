"""Montana (rules M1-M7 of RULES.md): state, legal actions, apply action, redeal, play.

The whole position is one int16 array. The grid is 4 rows of 13 cells, cell = 13 * row
+ column (row and column from 0 here, from 1 in everything a person reads):

    cell:   0  1  2 ... 12        a cell holds a card code, or GAP (-1)
           13 14 15 ... 25
           26 27 28 ... 38
           39 40 41 ... 51

    index        name        meaning
    0 .. 51      GRID        card code in each cell, GAP = -1 (4 gaps, 48 cards; M1, M2)
    52 .. 103    WHERE       cell of each card code; -1 for the aces, which are out (M1)
    104 .. 107   GAPS        the cells of the 4 gaps, in cell order
    108 .. 111   RUN         kept-run length of each row (M5): 2, 3, ... of one suit from
                             column 1; the score is their sum (M6)
    112          REDEALS     redeals used so far (M5)
    113          MAX_REDEALS redeals allowed (rule option `redeals`)
    114, 115     MOVES_LO/HI card moves so far, across redeals: LO + MOVES_BASE * HI
    116          OUTCOME     PLAYING while the deal is played, then its outcome code
                             (engine.kernel): OUTCOME_LOST, OUTCOME_WON, OUTCOME_CAPPED
    117 .. 119   SCORE_DEAL  score when the first deal and redeals 1, 2 ended; -1 = not reached
    ---- POLICY_SCRATCH = 120: from here on, the policy's scratch block ----
    120 .. 1147  SCRATCH_*   the policy's own (engine.kernel), laid out below

The scratch block, state[POLICY_SCRATCH:], as the search and solver policies
(policies.montana_kernels, policies.montana_solver) use it; dealing and each redeal (a new
phase) set its verdict to VERDICT_PENDING and its plan length to 0, and the result
row reads its verdict:

    offset       name               meaning
    0            SCRATCH_VERDICT    the solver's verdict on the phase being played:
                                    VERDICT_PENDING, or an outcome code (engine.kernel);
                                    a deal lost while it is OUTCOME_UNKNOWN is recorded
                                    as `unknown`, not `lost`
    1            SCRATCH_PLAN_LEN   actions in the plan (0: no plan)
    2            SCRATCH_PLAN_POS   plan actions played so far
    3            SCRATCH_PLAN_DEAL  the redeal the plan was made in (REDEALS then)
    4 .. 1027    SCRATCH_PLAN       the planned actions, PLAN_CAP of them

Cards are codes of engine.cards (rank = code // 4 + 1, suit = code % 4), so the card
after `c` in its suit is `c + 4`; the 2s are codes 4..7, the kings 48..51.

An action is `card * 52 + target cell`: the card moves into the gap at the target cell
and its old cell becomes a gap (M2). REDEAL_ACTION, which no policy plays, marks a
redeal in move logs: redeals are chance events that play_out_nb makes when no move
is possible and a redeal remains.
"""

import functools

import numpy as np
from numba import njit

from sim.engine import outcomes, rng
from sim.engine.cards import card_name, deck_problem, parse_card
from sim.engine.games import MONTANA as GAME
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

ROWS = 4
COLS = 13
CELLS = 52
GAP = -1
KING = 48  # codes 48..51 are the kings
FIRST_TWO = 4  # codes 4..7 are the 2s
WIN_SCORE = 48

GRID = 0
WHERE = 52
GAPS = 104
RUN = 108
REDEALS = 112
MAX_REDEALS = 113
MOVES_LO = 114
MOVES_HI = 115
OUTCOME = 116
SCORE_DEAL = 117
POLICY_SCRATCH = 120  # from here on a policy may write; the rest only play changes

# The scratch block (drawn above): each slot at its offset from POLICY_SCRATCH.
SCRATCH_VERDICT = POLICY_SCRATCH + 0
SCRATCH_PLAN_LEN = POLICY_SCRATCH + 1
SCRATCH_PLAN_POS = POLICY_SCRATCH + 2
SCRATCH_PLAN_DEAL = POLICY_SCRATCH + 3
SCRATCH_PLAN = POLICY_SCRATCH + 4
PLAN_CAP = 1024
STATE_SIZE = SCRATCH_PLAN + PLAN_CAP

MOVES_BASE = 1 << 14
# 4 gaps; a column-1 gap takes one of the four 2s, any other gap one card: 16 moves at
# most, and one spare entry that legal_actions_nb may write without counting it.
MAX_LEGAL = 17
REDEAL_ACTION = CELLS * CELLS
SCORED_DEALS = 3  # the first deal and two redeals have a score column each

PLAYING = -1  # in OUTCOME while the deal goes on: not an outcome code
OUTCOMES = outcomes.LABELS

# Where write_result_nb puts each result column: the order the game's record declares.
COLUMNS = GAME.column_names
ROW_OUTCOME, ROW_WON, ROW_SCORE, ROW_REDEALS, ROW_MOVES, ROW_SCORE_DEAL1 = GAME.column_slots(
    "outcome", "won", "score", "redeals", "moves", "score_deal1"
)
# score_deal1 .. score_deal3 follow each other, one per deal phase
assert GAME.column_slots("score_deal2", "score_deal3") == (ROW_SCORE_DEAL1 + 1, ROW_SCORE_DEAL1 + 2)


@njit(cache=True)
def action_nb(card, target):
    return card * CELLS + target


@njit(cache=True, inline="always")
def moves_nb(state):
    return np.int64(state[MOVES_LO]) + MOVES_BASE * np.int64(state[MOVES_HI])


@njit(cache=True, inline="always")
def _count_move_nb(state):
    lo = state[MOVES_LO] + 1
    if lo == MOVES_BASE:
        state[MOVES_HI] += 1
        lo = 0
    state[MOVES_LO] = lo


@njit(cache=True, inline="always")
def score_nb(state):
    """Cards in kept runs, summed over the rows (M5, M6)."""
    return state[RUN] + state[RUN + 1] + state[RUN + 2] + state[RUN + 3]


@njit(cache=True, inline="always")
def row_run_nb(state, row):
    """Length of the kept run of row (M5): 2, 3, 4, ... of one suit from column 1."""
    base = GRID + COLS * row
    card = state[base]
    if card < FIRST_TWO or card >= FIRST_TWO + 4:
        return 0
    length = 1
    while length < COLS and state[base + length] == card + 4:
        card += 4
        length += 1
    return length


@njit(cache=True, inline="always")
def _extend_run_nb(state, row):
    base = GRID + COLS * row
    length = state[RUN + row]
    if length == 0:
        state[RUN + row] = row_run_nb(state, row)
        return
    card = state[base + length - 1]
    while length < COLS and state[base + length] == card + 4:
        card += 4
        length += 1
    state[RUN + row] = length


@njit(cache=True, inline="always")
def move_card_nb(state, card, target):
    """Put card into the gap at target; its old cell becomes a gap (M2).

    Keeps WHERE, GAPS and RUN up to date. It does not check the rules, so a search
    can also use it to take a move back.
    """
    source = state[WHERE + card]
    state[GRID + target] = card
    state[GRID + source] = GAP
    state[WHERE + card] = target
    _replace_gap_nb(state, target, source)
    source_row = source // COLS
    if source % COLS < state[RUN + source_row]:
        state[RUN + source_row] = source % COLS
    target_row = target // COLS
    if target % COLS == state[RUN + target_row]:
        _extend_run_nb(state, target_row)


@njit(cache=True, inline="always")
def _replace_gap_nb(state, old, new):
    """Replace gap cell old by new in GAPS, keeping GAPS in cell order."""
    # Branch-free (a sorting network of selects): where old and new fall among the
    # gaps is unpredictable, and mispredicted jumps would cost more than this.
    a, b, c, d = state[GAPS], state[GAPS + 1], state[GAPS + 2], state[GAPS + 3]
    a = new if a == old else a
    b = new if b == old else b
    c = new if c == old else c
    d = new if d == old else d
    a, b = min(a, b), max(a, b)
    c, d = min(c, d), max(c, d)
    a, c = min(a, c), max(a, c)
    b, d = min(b, d), max(b, d)
    b, c = min(b, c), max(b, c)
    state[GAPS], state[GAPS + 1], state[GAPS + 2], state[GAPS + 3] = a, b, c, d


@njit(cache=True, inline="always")
def legal_actions_nb(state, out):
    """Write the legal moves into out; return how many (0 = stuck: redeal or game over).

    Scan order: gaps by cell; into a column-1 gap, first the 2s lying outside column 1,
    then those in another row's column 1 (M3), each group by suit.
    """
    n = 0
    for k in range(4):
        gap = state[GAPS + k]
        if gap % COLS == 0:
            # Branch-free: a move is written at out[n] always, counted only if it is one.
            for card in range(FIRST_TWO, FIRST_TWO + 4):
                out[n] = card * CELLS + gap
                n += state[WHERE + card] % COLS != 0
            for card in range(FIRST_TWO, FIRST_TWO + 4):
                out[n] = card * CELLS + gap
                n += state[WHERE + card] % COLS == 0
        else:
            left = state[GRID + gap - 1]
            out[n] = (left + 4) * CELLS + gap
            n += (left != GAP) & (left < KING)
    return n


@njit(cache=True)
def is_legal_nb(state, action):
    buf = np.empty(MAX_LEGAL, np.int16)
    n = legal_actions_nb(state, buf)
    return (buf[:n] == action).any()


@njit(cache=True, inline="always")
def apply_action_nb(state, action):
    """Apply a legal move (the caller checks legality) and count it (M7)."""
    move_card_nb(state, action // CELLS, action % CELLS)
    _count_move_nb(state)


@njit(cache=True)
def _index_grid_nb(state):
    """Fill WHERE, GAPS and RUN from GRID."""
    state[WHERE : WHERE + CELLS] = -1
    n_gaps = 0
    for cell in range(CELLS):
        card = state[GRID + cell]
        if card == GAP:
            state[GAPS + n_gaps] = cell
            n_gaps += 1
        else:
            state[WHERE + card] = cell
    for row in range(ROWS):
        state[RUN + row] = row_run_nb(state, row)


@njit(cache=True)
def set_grid_nb(state, grid, redeals):
    """Start a deal from a given grid of 52 cells (48 cards, 4 gaps)."""
    state[:] = 0
    state[GRID : GRID + CELLS] = grid
    _start_grid_nb(state, redeals)


@njit(cache=True)
def _start_grid_nb(state, redeals):
    _index_grid_nb(state)
    state[MAX_REDEALS] = redeals
    state[OUTCOME] = PLAYING
    state[SCORE_DEAL : SCORE_DEAL + SCORED_DEALS] = -1
    clear_scratch_nb(state)


@njit(cache=True)
def clear_scratch_nb(state):
    """A new phase for the policy (a deal, or a redeal): no verdict yet, no plan."""
    state[SCRATCH_VERDICT] = VERDICT_PENDING
    state[SCRATCH_PLAN_LEN] = 0


@njit(cache=True)
def deal_nb(seed, deal, redeals, state):
    """Deal (seed, deal) by M1: 52 shuffled cards in row order, then the aces taken out."""
    stream = np.zeros(1, np.uint64)
    rng.stream_state_nb(seed, deal, rng.STREAM_DEAL, stream)
    state[:] = 0
    grid = state[GRID : GRID + CELLS]  # shuffled in place: no deck to allocate
    for cell in range(CELLS):
        grid[cell] = cell
    rng.shuffle_nb(stream, grid)
    for cell in range(CELLS):
        if grid[cell] < FIRST_TWO:
            grid[cell] = GAP
    _start_grid_nb(state, redeals)


@njit(cache=True)
def redeal_grid_nb(state, seed, deal, k):
    """Lay out redeal k (M5) from the stuck grid in state, in place.

    Each row keeps its run, then one gap; the other cards, taken in card order (so
    that where they lay does not matter), are shuffled with the stream of
    (seed, deal, STREAM_REDEAL + k) and dealt into the remaining cells in row order.
    """
    _redeal_grid_nb(state, seed, deal, k, np.zeros(1, np.uint64), np.empty(CELLS, np.int16))


@njit(cache=True)
def _redeal_grid_nb(state, seed, deal, k, stream, gathered):
    """redeal_grid_nb with scratch space: a stream and CELLS card slots."""
    n = 0
    for card in range(FIRST_TWO, CELLS):
        cell = state[WHERE + card]
        if cell % COLS >= state[RUN + cell // COLS]:
            gathered[n] = card
            n += 1
    rng.stream_state_nb(seed, deal, rng.STREAM_REDEAL + k, stream)
    rng.shuffle_nb(stream, gathered[:n])
    dealt = 0
    for row in range(ROWS):
        kept = state[RUN + row]
        base = GRID + COLS * row
        state[base + kept] = GAP
        for col in range(kept + 1, COLS):
            state[base + col] = gathered[dealt]
            dealt += 1
    _index_grid_nb(state)


@njit(cache=True)
def redeal_nb(state, seed, deal):
    """The next redeal of this deal (M5): count it and lay it out; the policy's verdict
    and plan start afresh (clear_scratch_nb)."""
    _redeal_nb(state, seed, deal, np.zeros(1, np.uint64), np.empty(CELLS, np.int16))


@njit(cache=True)
def _redeal_nb(state, seed, deal, stream, gathered):
    state[REDEALS] += 1
    _redeal_grid_nb(state, seed, deal, state[REDEALS], stream, gathered)
    clear_scratch_nb(state)


@njit(cache=True)
def _record_deal_score_nb(state):
    if state[REDEALS] < SCORED_DEALS:
        state[SCORE_DEAL + state[REDEALS]] = score_nb(state)


@njit(cache=True)
def _finish_nb(state, outcome):
    state[OUTCOME] = outcome
    _record_deal_score_nb(state)


@njit(cache=True)
def end_of_play_nb(state, max_moves):
    """When no move is possible: the outcome code if the deal is over (won, lost, or
    capped), else PLAYING (M5-M7)."""
    if score_nb(state) == WIN_SCORE:
        return OUTCOME_WON
    if moves_nb(state) >= max_moves:  # M7: a deal that reached the cap is capped, stuck or not
        return OUTCOME_CAPPED
    if state[REDEALS] >= state[MAX_REDEALS]:
        return OUTCOME_LOST
    return PLAYING


@njit(cache=True)
def outcome_nb(state):
    """The recorded outcome: a loss the solver could not prove is OUTCOME_UNKNOWN; one it
    proved is OUTCOME_UNWINNABLE only without redeals, where the phase it decided from the
    grid as dealt is the whole deal (a redeal's shuffle could have gone otherwise)."""
    if state[OUTCOME] != OUTCOME_LOST:
        return state[OUTCOME]
    if state[SCRATCH_VERDICT] == OUTCOME_UNKNOWN:
        return OUTCOME_UNKNOWN
    if state[SCRATCH_VERDICT] == OUTCOME_LOST and state[MAX_REDEALS] == 0:
        return OUTCOME_UNWINNABLE
    return OUTCOME_LOST


@njit(cache=True)
def write_result_nb(state, row):
    row[ROW_OUTCOME] = outcome_nb(state)
    row[ROW_WON] = state[OUTCOME] == OUTCOME_WON
    row[ROW_SCORE] = score_nb(state)
    row[ROW_REDEALS] = state[REDEALS]
    row[ROW_MOVES] = moves_nb(state)
    for k in range(SCORED_DEALS):
        row[ROW_SCORE_DEAL1 + k] = state[SCORE_DEAL + k]


@njit(cache=True)
def start_nb(seed, deal, rules, state):
    """Deal (seed, deal) under the rule options (redeals, max_moves) into state."""
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

    A redeal is made as soon as no move is possible and one remains (M5), from the
    stream of (seed, deal, redeal number), and logged as REDEAL_ACTION. Play stops
    at a win, at a loss, or when rules[1] (max_moves) card moves are made (M7).
    Returns FAULT_NONE, or the policy fault (engine.kernel) that stopped play.
    """
    max_moves = rules[1]
    legal = np.empty(MAX_LEGAL, np.int16)
    redeal_stream = np.zeros(1, np.uint64)
    gathered = np.empty(CELLS, np.int16)
    logged = moves_nb(state) + state[REDEALS]
    while True:
        n = legal_actions_nb(state, legal)
        if n == 0:
            outcome = end_of_play_nb(state, max_moves)
            if outcome != PLAYING:
                _finish_nb(state, outcome)
                return FAULT_NONE
            _record_deal_score_nb(state)
            _redeal_nb(state, seed, deal, redeal_stream, gathered)
            action = REDEAL_ACTION
        else:
            if moves_nb(state) >= max_moves:
                _finish_nb(state, OUTCOME_CAPPED)
                return FAULT_NONE
            choice = policy(state, legal, n, params, stream)
            fault = choice_fault_nb(choice, n)
            if fault != FAULT_NONE:
                return fault
            action = legal[choice]
            apply_action_nb(state, action)
        if logged < log.shape[0]:
            log[logged] = action
        logged += 1


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


def cell_name(cell):
    return f"r{cell // COLS + 1}c{cell % COLS + 1}"


def action_notation(action):
    """The rule book's notation of a move, `6H>r2c5`; a redeal marker is `redeal`."""
    if action == REDEAL_ACTION:
        return "redeal"
    return _move_names()[int(action)]


@functools.cache
def _move_names():
    """Every move's notation, by action: a move log names a deal's hundreds of moves."""
    cells = [cell_name(cell) for cell in range(CELLS)]
    return [f"{card_name(card)}>{cell}" for card in range(CELLS) for cell in cells]


def grid_notation(grid):
    """Rows separated by `/`, cells by spaces, a gap `..` (M7)."""
    names = [".." if card == GAP else card_name(card) for card in grid[:CELLS]]
    return "/".join(" ".join(names[COLS * r : COLS * (r + 1)]) for r in range(ROWS))


def parse_grid(text):
    """The 52 cell codes of a grid in grid notation; ValueError if it is not 4 x 13."""
    rows = text.strip().split("/")
    sizes = [len(row.split()) for row in rows]
    if sizes != [COLS] * ROWS:
        shown = ", ".join(map(str, sizes))
        raise ValueError(f"a grid has 4 rows of 13 cells, not {len(rows)} of {shown}")
    cells = [c for row in rows for c in row.split()]
    return np.array([GAP if c == ".." else parse_card(c) for c in cells], np.int16)


def state_from_layout(layout, rules):
    """The starting state of a layout in move-log form: {"grid": "<grid>"}."""
    grid = parse_grid(layout["grid"])
    problem = deck_problem([int(c) for c in grid if c != GAP], range(FIRST_TWO, CELLS))
    if problem:
        raise ValueError(f"a Montana layout holds the 48 cards from 2 to K once each: {problem}")
    state = np.zeros(STATE_SIZE, np.int16)
    set_grid_nb(state, grid, rules["redeals"])
    return state


def move_log(seed, deal, rules, actions, start=None, layout=None):
    """The move-log object of one deal (format at the end of RULES.md), from its actions.

    The deal is (seed, deal), or the given start state for a layout from elsewhere
    (whose grid is the layout written; `layout` itself adds nothing here). Redeals are
    laid out again from the streams of (seed, deal, redeal number)."""
    if start is None:
        state = np.empty(STATE_SIZE, np.int16)
        deal_nb(seed, deal, rules["redeals"], state)
    else:
        state = start.copy()
    layout = {"grid": grid_notation(state)}
    moves = []
    for action in actions:
        if action == REDEAL_ACTION:
            redeal_nb(state, seed, deal)
            moves.append("redeal:" + grid_notation(state))
        else:
            apply_action_nb(state, action)
            moves.append(action_notation(action))
    return {
        "layout": layout,
        "moves": moves,
        "outcome": OUTCOMES[_replayed_outcome(state, rules["max_moves"])],
        "score": int(score_nb(state)),
    }


def _replayed_outcome(state, max_moves):
    if is_stuck(state):
        outcome = end_of_play_nb(state, max_moves)
        if outcome != PLAYING:
            return outcome
    return OUTCOME_CAPPED


def is_stuck(state):
    return legal_actions_nb(state, np.empty(MAX_LEGAL, np.int16)) == 0
