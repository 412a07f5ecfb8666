"""Montana solver: decides a deal phase exactly, and plays each phase with it.

Every card of a Montana grid is face up; only the shuffles of the redeals are unknown.
So the phase between two redeals is an open puzzle, and the solver decides it: it
explores every position reachable by card moves (M2-M4) until it finds a won grid
(M6), or until none is left, which proves that no line wins the phase.

Four stages (decide_nb), the first win ending them, and in the last phase four more:

- `beam_line_nb` (policies.montana_beam), a beam search of twice the budget of
  positions, 1 a level per 100 of them (at most BEAM_WIDTH_CAP): it finds wins
  sooner than the depth-first stages near the default budget, and better stuck grids
  for the redeal. It proves nothing. The three stages below share the budget again.
- `lds_line_nb`, the search policy's limited-discrepancy look (the greedy line, then
  lines that leave it once, twice, ...), at most LDS_NODES_CAP positions: at small
  budgets it finds wins soonest. It proves nothing.
- `restricted_solve_nb`, depth first with a table of positions seen, plays the game
  in which a 2 in column 1 never moves again, and in which a move that extends a
  kept run is the only one tried where there is one.
  That game is far smaller (a 2 that may hop between column-1 gaps multiplies the
  positions by up to 4! = 24; trying only a run's extension cuts it further) and
  holds most wins: on the first 100 deals of seed 99 without redeals it won 64
  within 8M positions and saw the whole of its game on all but one of the others.
  A win there is a win; a loss there proves nothing, since some grids are won only
  by moving a 2 again, or by some other move before a run's extension.
- `solve_nb`, depth first with a table of classes seen, plays the whole game over
  *classes* of positions, with all the budget left. While column 1 holds a
  gap, the 2s in column 1 can be put in any order among the rows whose column 1 holds
  a 2 or a gap, by 2-moves alone (M3), and each such order can be undone: all of them
  are one class, mutually reachable, so all are won or all are lost. The table keys a
  class by where the other cards lie and which 2s are in column 1, not in which row.
  A class's moves are those of every order: into a column-2 gap of such a row, the 3
  of any 2 in column 1 (its 2 brought there first); a 2 from outside column 1 into a
  column-1 gap; and, when that fills the last column-1 gap, every order of the 2s in
  column 1, each then a position of its own. Every other move is the same in every
  order. The line of a class search is written out as legal moves: the 2-moves that
  bring column 1 into the order each step used, then the step.

Why `solve_nb` is exact:
- It is a plain graph search over classes: when it ends without a win, every class
  reachable from the root has been expanded with every move of every position in it,
  because a class is skipped only if it was entered before. A table that forgets a
  class (it is full) costs a second visit, never a wrong answer, so the table has a
  fixed largest size; only the node budget can stop the search early (`unknown`).
- Dead gaps (right of a K or of another gap, M4) offer no move, and a grid whose four
  gaps are dead is stuck. A column-1 gap always has a move (the four 2s are in play),
  so every stuck grid, the won ones included, is a position of its own, not a class.
- Nothing else is pruned, not even the extension of a kept run, which looks always
  safe but is not: a whole run can move to another row (its 2 into another column-1
  gap, then each card after it), and some grids are won only that way; even with
  the 2s fixed, the next card may be needed where it lies (safe_extension_nb).
- Two keys that collide would skip a class wrongly: with 64-bit keys and at most a few
  tens of millions of classes per search, that chance is below one in ten thousand
  million.

In the last phase, where no redeal follows and the verdict is the deal's, a phase
these stages leave undecided is searched again with the `final` budget, `final` times
`nodes` (final_decide_nb): the restricted game with an eighth of it, a beam up to
FINAL_BEAM_WIDTH_CAP wide, then `solve_nb` over all
of that budget, skipping every class in which some card can never reach a cell where a
won grid holds it (home_unreachable_nb), which proves the class lost, and playing a
run's extension alone where it provably loses no win (safe_extension_nb). Both keep
the search exact; they only miss stuck grids, which matter to a redeal. When that
search runs out, the same game with every run's extension played first, where there
is one, is searched for a win with a third of `final`: a far smaller game that
holds many of the wins left (class_solve_nb's extend_first), but whose loss proves
nothing, since extending a run can lose a win.

Every stage records the best stuck position it meets (M5: what a redeal keeps), by
`keep_value_nb`, with the line to it: when a phase cannot be won, the policy plays to
that position and lets the redeal come.
"""

import numpy as np
from numba import njit

from sim.engine.montana import (
    CELLS,
    COLS,
    FIRST_TWO,
    GAP,
    GAPS,
    GRID,
    KING,
    MAX_LEGAL,
    MAX_REDEALS,
    OUTCOME_LOST,
    OUTCOME_UNKNOWN,
    OUTCOME_WON,
    PLAN_CAP,
    REDEALS,
    ROWS,
    RUN,
    SCRATCH_PLAN,
    SCRATCH_PLAN_DEAL,
    SCRATCH_PLAN_LEN,
    SCRATCH_PLAN_POS,
    SCRATCH_VERDICT,
    VERDICT_PENDING,
    WHERE,
    WIN_SCORE,
    legal_actions_nb,
    move_card_nb,
    score_nb,
)
from sim.policies.montana import SOLVER_PARAMS
from sim.policies.montana_beam import beam_line_nb
from sim.policies.montana_kernels import (
    KEEP_NONE,
    KEEP_RUNS,  # noqa: F401 (the keep choices are read from here)
    KEEP_SCORE,  # noqa: F401
    ZOBRIST,
    _planned_index_nb,
    best_greedy_nb,
    grid_key_nb,
    keep_value_nb,
    move_value_nb,
    ordered_moves_nb,
    search_plan_nb,
)
from sim.policies.registry import param_slots
from sim.policies.search import (
    new_seen_set_nb,
    seen_grown_nb,
    seen_insert_nb,
    zobrist_keys,
)

# The seen set of positions (policies.search): from 2**TABLE_MIN_BITS slots, doubled
# when half full, up to 2**TABLE_MAX_BITS (8 bytes a slot: 2 GB at most, reached only
# by searches of more than 64M positions, the last phase's at large `final` budgets).
# A key that finds no free slot within PROBE_LIMIT steps replaces the one at its home
# slot. A smaller largest table forgets more: at nodes=16M, 2**22 slots decided 132 of
# 200 deals, 2**25 142.
TABLE_MIN_BITS = 12
TABLE_MAX_BITS = 28
PROBE_LIMIT = 32

# Deepest line a search follows; a line cut here makes the verdict `unknown`.
DEPTH_CAP = 16384

# The shares of the budget, in eighths, of the look for a win and of the restricted
# game (staged_decide_nb); the whole game gets the rest, with whatever those left
# unused. The look finds wins soonest at small budgets and is capped above them (its
# table takes twice its budget, 10 bytes a slot). Measured on the first 100 deals of
# seed 99 without redeals, won (proved lost) at nodes=1M and 4M:
# - these shares and cap: 49 (1) and 65 (2);
# - no look, 5 eighths to the restricted game: 51 (1) and 65 (2), but at nodes=50,000
#   on the first 200 deals 26 (4), where these shares won 41 (4);
# - 4 eighths to the restricted game, then 2 to one in which a 2 may leave column 1
#   once: 46 (1) and 69 (2);
# - the shares before, the look uncapped and the restricted game without extending
#   runs first (4 and 2 eighths): 47 (1) and 59 (2).
LDS_EIGHTHS = 4
RESTRICTED_EIGHTHS = 4
LDS_NODES_CAP = 250_000

# The beam search's budget: BEAM_BUDGET_SHARE times the budget of the stages after it,
# and its width one position a level per BEAM_NODES_PER_WIDTH positions of that, at
# most BEAM_WIDTH_CAP (its level arrays take 4 bytes a position a level for 1,024
# levels: 82 MB at the cap). Measured on deals 100 to 299 of seed 99 without redeals,
# the beam alone won 122 at width 10,000 and 1M positions, 133 at 20,000 and 2M.
BEAM_BUDGET_SHARE = 2
BEAM_NODES_PER_WIDTH = 100
BEAM_WIDTH_CAP = 20_000
# The wider beam of a phase no redeal follows (final_decide_nb): its level arrays take
# about 300 bytes a position of its width (77 MB) and its trail 4 bytes a position
# expanded (105 MB at most).
FINAL_BEAM_WIDTH_CAP = 2**18
# The restricted game's share of the last phase's `final` budget (an eighth: 3.75M
# positions at the defaults). That game is small: on the 62 of the first 1,000 deals
# of seed 99 without redeals that the searches without this stage left undecided, it
# won 5, within 0.6M to 1.6M positions (more than the first search's share, 0.5M), and
# saw the whole of its game, lost, within 4M positions in 48 others and within 20M in
# the last 9.
FINAL_RESTRICTED_SHARE = 8
# The share of `final` of the last stage, the game with runs extended first (a third:
# 33M positions at the defaults). At 30M it won 8 of 31 deals the exact search left
# undecided at 30M, after 9.7M to 27.6M classes; the exact search before it gets all
# of `final`, since a proof of loss needs every class it reaches.
FINAL_EXTENDED_SHARE = 3

# A class's key counts each 2 lying in column 1 by this key instead of its cell's.
TOKEN = zobrist_keys(20261201, (FIRST_TWO + 4,))

# Moves of a class at most: 3 gaps outside column 1, one card each or (in column 2)
# one 3 for each 2 in column 1, and 24 orders of column 1 when a 2 fills its last gap.
CLASS_MOVES = 48

# An order of column 1, packed 4 bits a row (row 0 lowest): the suit of the 2 there
# (0..3), ORDER_GAP for a gap, ORDER_FIXED for a card that is not a 2 (it stays).
ORDER_GAP = 4
ORDER_FIXED = 15
SAME_ORDER = 0xFFFF  # a move made in column 1's order as it is


def _orders():
    """ORDERS[e, p, :e]: the p-th permutation of range(e); N_ORDERS[e] of them."""
    import itertools

    table = np.zeros((ROWS + 1, 24, ROWS), np.int8)
    for e in range(1, ROWS + 1):
        for p, perm in enumerate(itertools.permutations(range(e))):
            table[e, p, :e] = perm
    return table


ORDERS = _orders()
N_ORDERS = np.array([1, 1, 2, 6, 24], np.int64)


@njit(cache=True)
def restricted_solve_nb(state, budget, keep, line, extend_first):
    """The restricted game from state, in which a 2 in column 1 never moves and, if
    extend_first, a move that extends a kept run is the only one tried where there is
    one: (verdict, nodes, line length, worth of the stuck position the line leads to,
    -1 if none).

    OUTCOME_WON: the line wins, in the real game too. OUTCOME_LOST: the restricted
    game is lost, which proves nothing of the real one; the line leads to the best
    stuck position seen by keep_value_nb. OUTCOME_UNKNOWN: the budget of `budget`
    positions ran out first. Lines longer than `line` are cut to its length.

    Search stack, one entry per depth d (0 = the root):
        moves[d, :count[d]]   the moves of the position at depth d, best first
        nxt[d]                the next of them to try
        path[d], source[d]    the move that led to depth d and the cell it came from
    """
    scratch = state.copy()
    moves = np.empty((DEPTH_CAP + 1, MAX_LEGAL), np.int16)
    count = np.zeros(DEPTH_CAP + 1, np.int64)
    nxt = np.zeros(DEPTH_CAP + 1, np.int64)
    path = np.zeros(DEPTH_CAP + 1, np.int16)
    source = np.zeros(DEPTH_CAP + 1, np.int16)
    values = np.empty(MAX_LEGAL, np.int64)
    keys = new_seen_set_nb(TABLE_MIN_BITS)
    stored = 0
    key = grid_key_nb(scratch) | 1  # never 0, the empty slot
    seen_insert_nb(keys, key, PROBE_LIMIT)
    count[0] = _restricted_moves_nb(scratch, moves[0], values, extend_first)
    best_value, best_len, best_depth = np.int64(-1), 0, DEPTH_CAP + 1
    if count[0] == 0:
        if score_nb(scratch) == WIN_SCORE:
            return OUTCOME_WON, 1, 0, np.int64(-1)
        return OUTCOME_LOST, 1, 0, keep_value_nb(scratch, keep)
    nodes, depth, cut = 1, 0, False
    while True:
        if nxt[depth] >= count[depth]:
            if depth == 0:
                break
            _undo_nb(scratch, path[depth], source[depth])
            key = _moved_key_nb(key, path[depth], source[depth])
            depth -= 1
            continue
        if nodes >= budget:
            cut = True
            break
        action = moves[depth, nxt[depth]]
        nxt[depth] += 1
        card, target = action // CELLS, action % CELLS
        from_cell = scratch[WHERE + card]
        new_key = key ^ ZOBRIST[card, from_cell] ^ ZOBRIST[card, target]
        if stored >= keys.shape[0] // 2 and keys.shape[0] < (1 << TABLE_MAX_BITS):
            keys = seen_grown_nb(keys)
        if not seen_insert_nb(keys, new_key, PROBE_LIMIT):
            continue
        stored += 1
        nodes += 1
        move_card_nb(scratch, card, target)
        key = new_key
        depth += 1
        path[depth] = action
        source[depth] = from_cell
        nxt[depth] = 0
        count[depth] = 0
        if depth == DEPTH_CAP:
            cut = True  # a line this long is left unexplored: no verdict any more
            continue
        count[depth] = _restricted_moves_nb(scratch, moves[depth], values, extend_first)
        if count[depth] == 0:
            if score_nb(scratch) == WIN_SCORE:
                return OUTCOME_WON, nodes, _copy_line_nb(path, depth, line), np.int64(-1)
            # Only lines the plan can hold, and the shorter among equals, so that the
            # policy reaches the grid it aims for with few moves (the cap of M7).
            value = keep_value_nb(scratch, keep)
            better = value > best_value or (value == best_value and depth < best_depth)
            if better and depth <= line.shape[0]:
                best_value, best_depth = value, depth
                best_len = _copy_line_nb(path, depth, line)
    return (OUTCOME_UNKNOWN if cut else OUTCOME_LOST), nodes, best_len, best_value


@njit(cache=True)
def _restricted_moves_nb(state, out, values, extend_first):
    """ordered_moves_nb without the moves of a 2 out of column 1, and only a run's
    extension where extend_first finds one; how many."""
    n = ordered_moves_nb(state, out, values, True)
    kept = 0
    for i in range(n):
        card = out[i] // CELLS
        if card < FIRST_TWO + 4 and state[WHERE + card] % COLS == 0:
            continue
        out[kept] = out[i]
        kept += 1
    if extend_first:
        for i in range(kept):
            if extends_run_nb(state, out[i] % CELLS):
                out[0] = out[i]
                return 1
    return kept


@njit(cache=True, inline="always")
def extends_run_nb(state, target):
    """Whether a card moved into the gap at target extends its row's kept run."""
    run = state[RUN + target // COLS]
    return run > 0 and target == COLS * (target // COLS) + run


@njit(cache=True, inline="always")
def _undo_nb(scratch, action, from_cell):
    move_card_nb(scratch, action // CELLS, from_cell)


@njit(cache=True, inline="always")
def _moved_key_nb(key, action, from_cell):
    card = action // CELLS
    return key ^ ZOBRIST[card, action % CELLS] ^ ZOBRIST[card, from_cell]


@njit(cache=True)
def _copy_line_nb(path, depth, line):
    length = min(depth, line.shape[0])
    line[:length] = path[1 : length + 1]
    return length


# --- classes of positions: column 1 in any order while it holds a gap -------------


@njit(cache=True, inline="always")
def is_token_nb(card):
    """A gap or a 2: what a column-1 cell of a row in the class's reorderable set holds."""
    return card == GAP or (card >= FIRST_TWO and card < FIRST_TWO + 4)


@njit(cache=True, inline="always")
def column_one_gaps_nb(state):
    n = 0
    for row in range(ROWS):
        n += state[GRID + COLS * row] == GAP
    return n


@njit(cache=True, inline="always")
def class_key_nb(state, key):
    """The key of state's class, from key, the Zobrist key of the grid (never 0)."""
    if column_one_gaps_nb(state) == 0:
        return key | 1
    for row in range(ROWS):
        card = state[GRID + COLS * row]
        if card != GAP and card < FIRST_TWO + 4:
            key ^= ZOBRIST[card, COLS * row] ^ TOKEN[card]
    return key | 1


@njit(cache=True)
def column_one_order_nb(state):
    """Column 1 of state, packed (ORDER_GAP, ORDER_FIXED above)."""
    return _order_of_nb(state[GRID : GRID + CELLS : COLS])


@njit(cache=True, inline="always")
def _order_nibble_nb(card):
    if card == GAP:
        return ORDER_GAP
    if card < FIRST_TWO + 4:
        return card - FIRST_TWO
    return ORDER_FIXED


@njit(cache=True, inline="always")
def _with_card_nb(order, row, card):
    """order with card (a 2 or GAP) in column 1 of row."""
    shift = 4 * row
    return (order & ~(np.int64(15) << shift)) | (np.int64(_order_nibble_nb(card)) << shift)


@njit(cache=True)
def _order_of_nb(cards):
    """cards[row], the column-1 card of each row, packed as an order."""
    code = 0
    for row in range(ROWS):
        code |= np.int64(_order_nibble_nb(cards[row])) << (4 * row)
    return code


@njit(cache=True)
def reorder_nb(state, order, key, out, n_out):
    """Bring column 1 into `order` by legal 2-moves (M3), the grid's key kept up to
    date: (moves made so far, new key). Each move is written into out[n_out] while it
    fits (out may be empty). Needs a column-1 gap unless order is already there."""
    if order == SAME_ORDER:
        return n_out, key
    for _ in range(4 * ROWS):
        # fill a gap that the order wants filled, else make one where a 2 is misplaced
        card, target = _next_reorder_move_nb(state, order)
        if card < 0:
            break
        if n_out < out.shape[0]:
            out[n_out] = card * CELLS + target
        n_out += 1
        key ^= ZOBRIST[card, state[WHERE + card]] ^ ZOBRIST[card, target]
        move_card_nb(state, card, target)
    return n_out, key


@njit(cache=True)
def _next_reorder_move_nb(state, order):
    """(card, target) of the next 2-move towards order, (-1, -1) once there."""
    for row in range(ROWS):
        nibble = (order >> (4 * row)) & 15
        if state[GRID + COLS * row] == GAP and nibble < ORDER_GAP:
            return FIRST_TWO + nibble, COLS * row
    for row in range(ROWS):
        nibble = (order >> (4 * row)) & 15
        card = state[GRID + COLS * row]
        if nibble == ORDER_FIXED or card == GAP or card == FIRST_TWO + nibble:
            continue
        for gap_row in range(ROWS):
            if state[GRID + COLS * gap_row] == GAP:
                return card, COLS * gap_row
    return -1, -1


@njit(cache=True, inline="always")
def run_from_two_nb(state, row, two):
    """Cards of two's suit in sequence from column 2 of row."""
    length = 0
    nxt = two + 4
    while length + 1 < COLS and state[GRID + COLS * row + length + 1] == nxt:
        length += 1
        nxt += 4
    return length


@njit(cache=True, inline="always")
def _insert_move_nb(actions, orders, values, n, action, order, value):
    """Insert (action, order) into the first n moves, kept in decreasing value."""
    j = n
    while j > 0 and values[j - 1] < value:
        values[j] = values[j - 1]
        actions[j] = actions[j - 1]
        orders[j] = orders[j - 1]
        j -= 1
    values[j] = value
    actions[j] = action
    orders[j] = order
    return n + 1


@njit(cache=True)
def class_moves_nb(state, actions, orders, values, legal, column):
    """The moves of state's class, best-looking first: (action, column-1 order to make
    first) pairs; how many. legal and column are scratch (MAX_LEGAL, 3 * ROWS)."""
    if column_one_gaps_nb(state) == 0:
        n = 0
        for i in range(legal_actions_nb(state, legal)):
            action = legal[i]
            value = move_value_nb(state, action)
            n = _insert_move_nb(actions, orders, values, n, action, SAME_ORDER, value)
        return n
    for row in range(ROWS):
        column[row] = state[GRID + COLS * row]
    n = _gap_moves_nb(state, actions, orders, values, column)
    rows, twos = column[ROWS : 2 * ROWS], column[2 * ROWS :]
    return _twos_in_nb(state, actions, orders, values, n, column, rows, twos)


@njit(cache=True)
def _gap_moves_nb(state, actions, orders, values, column):
    """Moves into the gaps outside column 1 (M4); into column 2 of a reorderable row,
    the 3 of each 2 in column 1, that 2 brought to the row first."""
    n = 0
    base = _order_of_nb(column)
    for k in range(4):
        gap = state[GAPS + k]
        col, row = gap % COLS, gap // COLS
        if col == 0:
            continue
        if col == 1 and is_token_nb(column[row]):
            for other in range(ROWS):
                two = column[other]
                if two == GAP or not is_token_nb(two):
                    continue
                order = SAME_ORDER
                if other != row:
                    order = _with_card_nb(_with_card_nb(base, other, column[row]), row, two)
                value = 992 + 16 * run_from_two_nb(state, row, two)
                n = _insert_move_nb(
                    actions, orders, values, n, (two + 4) * CELLS + gap, order, value
                )
            continue
        left = state[GRID + gap - 1]
        if left != GAP and left < KING:
            action = (left + 4) * CELLS + gap
            n = _insert_move_nb(
                actions, orders, values, n, action, SAME_ORDER, move_value_nb(state, action)
            )
    return n


@njit(cache=True)
def _twos_in_nb(state, actions, orders, values, n, column, rows, twos):
    """Moves of a 2 from outside column 1 into a column-1 gap (M3). While another gap
    stays, one gap stands for all; into the last, every order of column 1 is a move.
    rows and twos are scratch (ROWS each)."""
    gaps, first_gap = 0, -1
    base = _order_of_nb(column)
    reorderable, placed = 0, 0
    for row in range(ROWS):
        card = column[row]
        if card == GAP:
            gaps += 1
            first_gap = row if first_gap < 0 else first_gap
        if is_token_nb(card):
            rows[reorderable] = row
            reorderable += 1
            if card != GAP:
                twos[placed] = card
                placed += 1
    for two in range(FIRST_TWO, FIRST_TWO + 4):
        if state[WHERE + two] % COLS == 0:
            continue
        if gaps > 1:
            value = 16 * (1 + run_from_two_nb(state, first_gap, two))
            n = _insert_move_nb(
                actions, orders, values, n, two * CELLS + COLS * first_gap, SAME_ORDER, value
            )
            continue
        twos[placed] = two
        for p in range(N_ORDERS[reorderable]):
            order, value, target = base, 0, -1
            for j in range(reorderable):
                card, row = twos[ORDERS[reorderable, p, j]], rows[j]
                value += 16 * (1 + run_from_two_nb(state, row, card))
                order = _with_card_nb(order, row, GAP if card == two else card)
                target = COLS * row if card == two else target
            n = _insert_move_nb(actions, orders, values, n, two * CELLS + target, order, value)
    return n


@njit(cache=True)
def class_line_nb(root, path, order, depth, line):
    """The legal moves of a class line from root: before each step d its column-1
    order[d] is made by 2-moves, then path[d]. Written into line while it fits;
    returns the length of the whole line."""
    scratch = root.copy()
    n, key = 0, np.int64(0)
    for d in range(1, depth + 1):
        n, key = reorder_nb(scratch, order[d], key, line, n)
        if n < line.shape[0]:
            line[n] = path[d]
        n += 1
        move_card_nb(scratch, path[d] // CELLS, path[d] % CELLS)
    return n


@njit(cache=True)
def solve_nb(state, budget, keep, line):
    """Decide the phase from state exactly, over classes; write a line into `line`.

    Returns (verdict, nodes, line length), the verdict an outcome code (engine.kernel).
    OUTCOME_WON: the line wins. OUTCOME_LOST: every reachable class was seen and none
    is won; the line leads to the best stuck position by keep_value_nb.
    OUTCOME_UNKNOWN: the budget of `budget` classes ran out (or a line reached
    DEPTH_CAP); the line leads to the best stuck position seen, length 0 if none was
    seen. A winning line longer than `line` is cut to its length.
    """
    verdict, nodes, length, _ = class_solve_nb(state, budget, keep, line)
    return verdict, nodes, length


# Where a card may ever lie (home_unreachable_nb). A card x moves only into a gap right
# of x - 4, a 2 only into a column-1 gap (M3, M4). So every line of play keeps each
# card within the cells it "may hold", and each gap within the cells that "may be
# gaps", where, from the cards where they lie and the gaps as they are:
# - x may hold any cell right of a cell x - 4 may hold (not past column 13), if that
#   cell may be a gap; a 2 may hold any column-1 cell that may be a gap;
# - a cell may be a gap if a card that may hold it may also hold another (it may
#   leave: a move from c into g needs c and g both among the card's cells).
# The rules feed each other and are applied until nothing grows (a least fixpoint, so
# a cycle of cards waiting for each other never starts). A won grid holds each card
# in the column of its rank, in the row whose column 1 holds the 2 of its suit (M6):
# when for some card no cell it may hold is such a cell of a row whose column 1 its 2
# may hold, no line wins. For example:
#
#   r1  2H 3H 4H 5H 9C 7H 8H .. TH JH QH KH ..     6H may go only right of 5H, where
#   r2  2C 3C 4C 5C 6C 7C 8C 6H 9H TC JC QC KC     9C lies; 9C only right of 8C, where
#   r3  2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD ..     6H lies: neither cell may ever be a
#   r4  2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS ..     gap, and neither card may go home.
#
# The test is run only where no redeal is left (a redeal lifts every card again).
# Cells are bits of an int64, cell c = bit c.

COLUMN_ONE = np.int64(sum(1 << (COLS * row) for row in range(ROWS)))
RIGHT_OF_A_CELL = np.int64(((1 << CELLS) - 1) & ~COLUMN_ONE)  # cells with one left of them


@njit(cache=True)
def home_unreachable_nb(state, reach=None):
    """True when some card can never reach a cell where a won grid holds it: lost (M6).
    reach: CELLS int64s to work in, left holding the cells each card may hold (the
    class search passes its own, so that a position judged costs no allocation)."""
    if reach is None:
        reach = np.empty(CELLS, np.int64)
    gaps = np.int64(0)
    for k in range(4):
        gaps |= np.int64(1) << state[GAPS + k]
    for card in range(FIRST_TWO, CELLS):
        reach[card] = np.int64(1) << state[WHERE + card]
    grew = True
    while grew:
        grew = False
        for card in range(FIRST_TWO, CELLS):  # x - 4 before x: a suit's chain in one sweep
            if card < FIRST_TWO + 4:
                cells = reach[card] | (gaps & COLUMN_ONE)
            else:
                cells = reach[card] | ((reach[card - 4] << 1) & RIGHT_OF_A_CELL & gaps)
            if cells != reach[card]:
                reach[card] = cells
                grew = True
            if _several_nb(cells) and (gaps | cells) != gaps:
                gaps |= cells
                grew = True
    for two in range(FIRST_TWO, FIRST_TWO + 4):
        if reach[two] & COLUMN_ONE == 0:
            return True
    for card in range(FIRST_TWO + 4, CELLS):
        rows = reach[FIRST_TWO + card % 4] & COLUMN_ONE
        if reach[card] & (rows << (card // 4 - 1)) == 0:
            return True
    return False


@njit(cache=True, inline="always")
def _several_nb(cells):
    return (cells & (cells - 1)) != 0


# A run's extension that loses no win. Once column 1 holds the four 2s, no column-1
# gap can come back, so every kept run stays for good, and the gap at a run's end can
# only ever take the run's next card x, which can only ever move there. Take a line
# that wins: x moves once, into that gap, at some step; before it, x lies where it is,
# and the only use of x there is as the card left of a gap, for x + 4. If that can
# never happen (x is a K, or lies in column 13, or right of it lies x + 4, which can
# only follow x, or a card that may hold no other cell: home_unreachable_nb), every
# move of the line before that step is also legal with x already home, and after it
# the two lines meet: the position after the extension wins exactly when the position
# does, so the search plays that move alone.
# Without that condition it may not (tests/test_montana_solver.py has a grid where a
# run's extension loses the win). It keeps verdicts, not stuck grids: last phase only.


@njit(cache=True)
def safe_extension_nb(state, reach):
    """A move that extends a kept run and loses no win, -1 if none (see above).
    reach: as home_unreachable_nb left it for this state."""
    for row in range(ROWS):
        first = state[GRID + COLS * row]
        if first == GAP or first >= FIRST_TWO + 4:
            return -1
    for row in range(ROWS):
        length = state[RUN + row]
        if length >= COLS - 1:
            continue
        end = COLS * row + length
        if state[GRID + end] != GAP:
            continue
        card = state[GRID + end - 1] + 4
        cell = state[WHERE + card]
        if card >= KING or cell % COLS == COLS - 1:
            return card * CELLS + end
        right = state[GRID + cell + 1]
        if right == card + 4 or (right != GAP and not _several_nb(reach[right])):
            return card * CELLS + end
    return -1


@njit(cache=True)
def class_solve_nb(state, budget, keep, line, prune=False, extend_first=False):
    """solve_nb, also returning the worth of the stuck position its line leads to.
    prune: a class in which a card can never reach home (home_unreachable_nb) is lost
    and not searched further, and where a run's extension is safe (safe_extension_nb) it is
    the only move tried; stuck grids are then missed, so the line may lead to a
    worse one. Only for a phase no redeal follows.
    extend_first: any extension of a kept run is the only move tried where there is
    one. That game is far smaller and holds many wins, but extending a run can lose a
    win, so only OUTCOME_WON means anything then: lost or unknown, nothing is proved.

    Search stack, one entry per depth d (0 = the root):
        actions[d, :count[d]], orders[d, :count[d]]   the class's moves, best first
        nxt[d]                      the next of them to try
        path[d], source[d]          the move that led to depth d, the cell it left
        order[d], before[d]         column 1 as that move was made, and as it was
                                    before the 2-moves that brought it there
                                    (SAME_ORDER: there were none)
    """
    scratch = state.copy()
    actions = np.empty((DEPTH_CAP + 1, CLASS_MOVES), np.int16)
    orders = np.empty((DEPTH_CAP + 1, CLASS_MOVES), np.int32)
    count = np.zeros(DEPTH_CAP + 1, np.int64)
    nxt = np.zeros(DEPTH_CAP + 1, np.int64)
    path = np.zeros(DEPTH_CAP + 1, np.int16)
    source = np.zeros(DEPTH_CAP + 1, np.int16)
    order = np.zeros(DEPTH_CAP + 1, np.int32)
    before = np.zeros(DEPTH_CAP + 1, np.int32)
    best_path = np.zeros(DEPTH_CAP + 1, np.int16)
    best_order = np.zeros(DEPTH_CAP + 1, np.int32)
    trial = np.empty(line.shape[0], np.int16)
    values = np.empty(CLASS_MOVES, np.int64)
    legal = np.empty(MAX_LEGAL, np.int16)
    column = np.empty(3 * ROWS, np.int64)
    no_line = np.empty(0, np.int16)
    reach = np.empty(CELLS, np.int64)
    keys = new_seen_set_nb(TABLE_MIN_BITS)
    stored = 0
    key = grid_key_nb(scratch)
    seen_insert_nb(keys, class_key_nb(scratch, key), PROBE_LIMIT)
    count[0] = class_moves_nb(scratch, actions[0], orders[0], values, legal, column)
    if count[0] == 0:
        if score_nb(scratch) == WIN_SCORE:
            return OUTCOME_WON, 1, 0, np.int64(-1)
        return OUTCOME_LOST, 1, 0, keep_value_nb(scratch, keep)
    best_value, best_depth = np.int64(-1), DEPTH_CAP + 1
    nodes, depth, cut = 1, 0, False
    while True:
        if nxt[depth] >= count[depth]:
            if depth == 0:
                break
            key = _step_back_nb(scratch, key, path[depth], source[depth], before[depth], no_line)
            depth -= 1
            continue
        if nodes >= budget:
            cut = True
            break
        i = nxt[depth]
        nxt[depth] += 1
        was = column_one_order_nb(scratch)
        now = was
        if orders[depth, i] != SAME_ORDER:
            _, key = reorder_nb(scratch, orders[depth, i], key, no_line, 0)
            now = column_one_order_nb(scratch)
        restore = SAME_ORDER if now == was else was
        action = actions[depth, i]
        card, target = action // CELLS, action % CELLS
        from_cell = scratch[WHERE + card]
        key ^= ZOBRIST[card, from_cell] ^ ZOBRIST[card, target]
        move_card_nb(scratch, card, target)
        if stored >= keys.shape[0] // 2 and keys.shape[0] < (1 << TABLE_MAX_BITS):
            keys = seen_grown_nb(keys)
        if not seen_insert_nb(keys, class_key_nb(scratch, key), PROBE_LIMIT):
            key = _step_back_nb(scratch, key, action, from_cell, restore, no_line)
            continue
        stored += 1
        nodes += 1
        depth += 1
        path[depth], source[depth] = action, from_cell
        order[depth], before[depth] = now, restore
        nxt[depth] = 0
        count[depth] = 0
        if depth == DEPTH_CAP:
            cut = True  # a line this long is left unexplored: no proof any more
            continue
        if prune and home_unreachable_nb(scratch, reach):
            continue
        count[depth] = class_moves_nb(scratch, actions[depth], orders[depth], values, legal, column)
        if count[depth] > 1:
            alone = -1
            if extend_first:
                alone = run_extension_nb(scratch, actions[depth], orders[depth], count[depth])
            if alone < 0 and prune:
                alone = safe_extension_nb(scratch, reach)
            if alone >= 0:
                actions[depth, 0] = alone
                orders[depth, 0] = SAME_ORDER
                count[depth] = 1
        if count[depth] == 0:
            if score_nb(scratch) == WIN_SCORE:
                length = class_line_nb(state, path, order, depth, line)
                return OUTCOME_WON, nodes, min(length, line.shape[0]), np.int64(-1)
            value = keep_value_nb(scratch, keep)
            better = value > best_value or (value == best_value and depth < best_depth)
            # only lines the plan can hold, the shorter among equals (the cap of M7)
            if better and class_line_nb(state, path, order, depth, trial) <= line.shape[0]:
                best_value, best_depth = value, depth
                best_path[: depth + 1] = path[: depth + 1]
                best_order[: depth + 1] = order[: depth + 1]
    best_len = 0
    if best_value >= 0:
        best_len = class_line_nb(state, best_path, best_order, best_depth, line)
    return (OUTCOME_UNKNOWN if cut else OUTCOME_LOST), nodes, best_len, best_value


@njit(cache=True)
def run_extension_nb(state, actions, orders, n):
    """The first of the n class moves that extends a kept run, -1 if none."""
    for i in range(n):
        if orders[i] == SAME_ORDER and extends_run_nb(state, actions[i] % CELLS):
            return actions[i]
    return -1


@njit(cache=True, inline="always")
def _step_back_nb(scratch, key, action, from_cell, was, no_line):
    """Take back action (it came from from_cell), then restore column 1's order was."""
    card = action // CELLS
    key ^= ZOBRIST[card, action % CELLS] ^ ZOBRIST[card, from_cell]
    move_card_nb(scratch, card, from_cell)
    _, key = reorder_nb(scratch, was, key, no_line, 0)
    return key


@njit(cache=True)
def lds_line_nb(state, budget, line):
    """The line of the search policy's limited-discrepancy search within budget
    positions, written into line: (its length, the score where it ends).

    That search tries the greedy line and its near variants first, which finds many
    wins sooner than a depth-first search; it proves nothing."""
    trial = state.copy()
    trial[SCRATCH_PLAN_DEAL] = trial[REDEALS]
    search_plan_nb(trial, budget)
    length = min(trial[SCRATCH_PLAN_LEN], line.shape[0])
    line[:length] = trial[SCRATCH_PLAN : SCRATCH_PLAN + length]
    return length, _end_score_nb(state, line, length)


@njit(cache=True)
def _end_score_nb(state, line, length):
    return score_nb(_line_end_nb(state, line, length))


@njit(cache=True)
def _end_value_nb(state, line, length, keep):
    return keep_value_nb(_line_end_nb(state, line, length), keep)


@njit(cache=True)
def _line_end_nb(state, line, length):
    trial = state.copy()
    for step in range(length):
        move_card_nb(trial, line[step] // CELLS, line[step] % CELLS)
    return trial


@njit(cache=True)
def decide_nb(state, budget, keep, line, beam_width=-1):
    """Decide the phase: (verdict, nodes, line length), the line written into line.

    staged_decide_nb with the shares of the budget that measured best (above), and a
    beam of BEAM_BUDGET_SHARE times the budget, beam_width positions a level (-1: by
    its budget, beam_width_nb)."""
    beam_budget = BEAM_BUDGET_SHARE * budget
    if beam_width < 0:
        beam_width = beam_width_nb(beam_budget)
    return staged_decide_nb(
        state, budget, keep, line, LDS_EIGHTHS, RESTRICTED_EIGHTHS, beam_width, beam_budget
    )


@njit(cache=True)
def beam_width_nb(beam_budget):
    return max(1, min(BEAM_WIDTH_CAP, beam_budget // BEAM_NODES_PER_WIDTH))


@njit(cache=True)
def staged_decide_nb(
    state, budget, keep, line, lds_eighths, restricted_eighths, beam_width=0, beam_budget=0
):
    """Decide the phase in up to four stages: a beam search (beam_line_nb) of
    beam_width positions a level and at most beam_budget positions (0: budget), unless
    beam_width is 0;
    then, sharing the budget by eighths, the limited-discrepancy look for a win
    (lds_line_nb), the restricted game with runs extended first
    (restricted_solve_nb), and the whole game over classes (solve_nb) with all that
    is left, which proves losses and finds the wins that need a 2 to move again. A
    win ends the search. When none wins, the line is the one to the best end."""
    beam_len, beam_worth, beam_nodes = 0, np.int64(-1), 0
    if beam_width > 0:
        beam_budget = beam_budget if beam_budget > 0 else budget
        beam_len, beam_worth, beam_nodes, won = beam_line_nb(
            state, beam_width, beam_budget, keep, line
        )
        if won:
            return OUTCOME_WON, beam_nodes, beam_len
    beam_line = line[:beam_len].copy()
    verdict, used, length = _exact_stages_nb(
        state, budget, keep, line, lds_eighths, restricted_eighths
    )
    if verdict == OUTCOME_WON:
        return verdict, used + beam_nodes, length
    if keep != KEEP_NONE and beam_worth > _end_value_nb(state, line, length, keep):
        line[:beam_len] = beam_line
        length = beam_len
    return verdict, used + beam_nodes, length


@njit(cache=True)
def _exact_stages_nb(state, budget, keep, line, lds_eighths, restricted_eighths):
    used = 0
    quick_len, quick_score = 0, -1
    if lds_eighths > 0:
        quick = max(1, min(budget * lds_eighths // 8, LDS_NODES_CAP))
        quick_len, quick_score = lds_line_nb(state, quick, line)
        if quick_score == WIN_SCORE:
            return OUTCOME_WON, quick, quick_len
        used = quick
    quick_line = line[:quick_len].copy()
    share = max(1, budget * restricted_eighths // 8)
    verdict, nodes, length, value = restricted_solve_nb(state, share, keep, line, True)
    used += nodes
    if verdict == OUTCOME_WON:
        return OUTCOME_WON, used, length
    restricted_line = line[:length].copy()
    restricted_value = value
    verdict, nodes, length, value = class_solve_nb(state, max(1, budget - used), keep, line)
    used += nodes
    if verdict == OUTCOME_WON:
        return OUTCOME_WON, used, length
    if restricted_value > value:
        length = restricted_line.shape[0]
        line[:length] = restricted_line
    if keep != KEEP_NONE and quick_score > _end_score_nb(state, line, length):
        line[:quick_len] = quick_line
        length = quick_len
    return verdict, used, length


@njit(cache=True)
def final_decide_nb(state, budget, final, keep, line):
    """decide_nb for a phase no redeal follows, where a verdict is the deal's: when
    the search of `budget` positions leaves it undecided and `final` is larger, the
    restricted game with runs extended first is searched again with a share of `final`
    (FINAL_RESTRICTED_SHARE), a beam as wide as `final` allows (FINAL_BEAM_WIDTH_CAP at
    most) looks for a win, then the whole game over classes is searched with `final`
    positions, skipping classes in which a card can never reach home. If that runs
    out, the same game with every run's extension played first, a smaller game that
    holds many wins but proves nothing, is searched for a win with a share of `final`
    (FINAL_EXTENDED_SHARE). The line kept is the one to the best end."""
    verdict, nodes, length = decide_nb(state, budget, keep, line)
    if verdict != OUTCOME_UNKNOWN or final <= budget:
        return verdict, nodes, length
    worth = _end_value_nb(state, line, length, keep)
    kept = line[:length].copy()
    restricted = max(1, final // FINAL_RESTRICTED_SHARE)
    verdict, used, length, value = restricted_solve_nb(state, restricted, keep, line, True)
    nodes += used
    if verdict == OUTCOME_WON:
        return OUTCOME_WON, nodes, length
    if value > worth:
        worth, kept = value, line[:length].copy()
    beam_budget = min(BEAM_BUDGET_SHARE * final, FINAL_BEAM_WIDTH_CAP * BEAM_NODES_PER_WIDTH)
    width = max(1, beam_budget // BEAM_NODES_PER_WIDTH)
    beam_len, beam_worth, beam_nodes, won = beam_line_nb(state, width, beam_budget, keep, line)
    nodes += beam_nodes
    if won:
        return OUTCOME_WON, nodes, beam_len
    if beam_worth > worth:
        worth, kept = beam_worth, line[:beam_len].copy()
    verdict, used, length, value = class_solve_nb(state, final, keep, line, True)
    nodes += used
    if verdict == OUTCOME_UNKNOWN:
        if value > worth:
            worth, kept = value, line[:length].copy()
        extended_budget = max(1, final // FINAL_EXTENDED_SHARE)
        extended, used, length, value = class_solve_nb(
            state, extended_budget, keep, line, True, True
        )
        nodes += used
        if extended == OUTCOME_WON:
            return OUTCOME_WON, nodes, length
    if verdict == OUTCOME_WON or value > worth:
        return verdict, nodes, length
    line[: kept.shape[0]] = kept
    return verdict, nodes, kept.shape[0]


@njit(cache=True)
def plan_phase_nb(state, budget, keep, final=0):
    """Decide the phase from state and store the line as the plan (engine.montana).

    The verdict slot keeps the verdict of the phase's first search, the one made
    from the grid as dealt: a later search starts further down a line, so it can
    only add that the phase is won."""
    line = state[SCRATCH_PLAN : SCRATCH_PLAN + PLAN_CAP]
    if state[REDEALS] >= state[MAX_REDEALS]:
        verdict, nodes, length = final_decide_nb(state, budget, final, keep, line)
    else:
        verdict, nodes, length = decide_nb(state, budget, keep, line)
    if state[SCRATCH_VERDICT] == VERDICT_PENDING or verdict == OUTCOME_WON:
        state[SCRATCH_VERDICT] = verdict
    state[SCRATCH_PLAN_DEAL] = state[REDEALS]
    state[SCRATCH_PLAN_POS] = 0
    state[SCRATCH_PLAN_LEN] = length
    return nodes


NODES, KEEP, FINAL = param_slots(SOLVER_PARAMS, "nodes", "keep", "final")


@njit(cache=True)
def solver_nb(state, legal, n_legal, params, stream):
    """The kernel of policy `solver` (sim.policies.montana)."""
    planned = _planned_index_nb(state, legal, n_legal)
    if planned >= 0:
        return planned
    budget = max(1, np.int64(params[NODES]))
    plan_phase_nb(state, budget, np.int64(params[KEEP]), budget * np.int64(params[FINAL]))
    planned = _planned_index_nb(state, legal, n_legal)
    if planned >= 0:
        return planned
    return best_greedy_nb(state, legal, n_legal)
