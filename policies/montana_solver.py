"""Montana solver: decides a deal phase exactly, and plays each phase with it.

Every card of a Montana grid is face up; only the shuffles of the redeals are unknown.
So the phase between two redeals is an open puzzle, and the solver decides it: it
explores every position reachable by card moves (M2-M4) until it finds a won grid
(M6), or until none is left, which proves that no line wins the phase.

Why the search is exact:
- Positions are grids. Gaps carry no identity (M2), so the key of a position is a
  64-bit Zobrist hash of where the 48 cards lie, the gaps implicit: the four gaps are
  interchangeable by construction. A position met again is not explored again.
- Depth first with a set of seen positions is a plain graph search: when it ends
  without a win, every position reachable from the root has been expanded, because a
  position is skipped only if it was entered before. A table that forgets a position
  (it is full) costs a second visit, never a wrong answer, so the table has a fixed
  largest size; only the node budget can stop the search early (`unknown`).
- Dead gaps (right of a K or of another gap, M4) offer no move: legal_actions_nb
  never lists them, and a grid whose four gaps are dead is stuck.
- Nothing else is pruned: every legal move is tried (ordered_moves_nb with its loops
  kept), even after the extension of a kept run, which looks always safe but is not: a
  whole run can move to another row (its 2 into another column-1 gap, then each card
  after it), and some grids are won only that way.
- Two keys that collide would skip a position wrongly: with 64-bit keys and at most
  a few million positions per search, that chance is below one in a million million.

The search records the best stuck position it meets (M5: what a redeal keeps), by
`keep_value_nb`, with the line to it: when a phase cannot be won, the policy plays to
that position and lets the redeal come.
"""

import numpy as np
from numba import njit

from sim.engine.montana import (
    CELLS,
    COLS,
    MAX_LEGAL,
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
    move_card_nb,
    score_nb,
)
from sim.policies.montana import SOLVER_PARAMS
from sim.policies.montana_kernels import (
    ZOBRIST,
    _planned_index_nb,
    best_greedy_nb,
    grid_key_nb,
    ordered_moves_nb,
    search_plan_nb,
)
from sim.policies.registry import param_slots
from sim.policies.search import new_seen_set_nb, seen_grown_nb, seen_insert_nb

# The seen set of positions (policies.search): from 2**TABLE_MIN_BITS slots, doubled
# when half full, up to 2**TABLE_MAX_BITS (8 bytes a slot: 256 MB at most, reached only
# by budgets above 16M positions; 16 MB at the default). A key that finds no free slot
# within PROBE_LIMIT steps replaces the one at its home slot. A smaller largest table
# forgets more: at nodes=16M, 2**22 slots decided 132 of 200 deals, 2**25 142.
TABLE_MIN_BITS = 12
TABLE_MAX_BITS = 25
PROBE_LIMIT = 32

# The limited-discrepancy look for a win (lds_line_nb) sizes its table to twice its
# budget, 10 bytes a slot (pages touched only as used): its budget is capped so that the
# table stays within 160 MB (16M slots). With the table above, a search needs at most
# about 420 MB; measured, a worker's peak rose by 80 MB at nodes=16M on an undecided deal.
LDS_NODES_CAP = 8_000_000

# Deepest line the search follows; a line cut here makes the verdict `unknown`.
DEPTH_CAP = 16384

# What "best position at the redeal" means (parameter `keep`):
KEEP_SCORE = 0  # most cards in kept runs (M5), the first such position found
KEEP_RUNS = 1  # the same, then most rows with a kept run, then the longest shortest run
KEEP_NONE = 2  # no choice: the first stuck position met (the end of the greedy line)


@njit(cache=True)
def keep_value_nb(state, keep):
    """Worth of a stuck position for the redeal that follows (higher is better)."""
    if keep == KEEP_NONE:
        return np.int64(0)
    score = score_nb(state)
    if keep == KEEP_SCORE:
        return np.int64(score)
    started, shortest = 0, COLS
    for row in range(ROWS):
        run = state[RUN + row]
        started += run > 0
        shortest = min(shortest, run)
    return np.int64(score) * 1000 + started * 100 + shortest


@njit(cache=True)
def solve_nb(state, budget, keep, line):
    """Decide the phase from state; write a line into `line`.

    Returns (verdict, nodes, line length), the verdict an outcome code (engine.kernel).
    OUTCOME_WON: the line wins. OUTCOME_LOST: every reachable position was seen and none
    is won; the line leads to the best stuck position by keep_value_nb.
    OUTCOME_UNKNOWN: the budget of `budget` positions ran out (or a line reached
    DEPTH_CAP); the line leads to the best stuck position seen, length 0 if none was
    seen. Lines longer than `line` are cut to its length.

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
    count[0] = ordered_moves_nb(scratch, moves[0], values, True)
    best_value, best_len, best_depth = np.int64(-1), 0, DEPTH_CAP + 1
    if count[0] == 0:
        return (OUTCOME_WON if score_nb(scratch) == WIN_SCORE else OUTCOME_LOST), 1, 0
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
            cut = True  # a line this long is left unexplored: no proof any more
            continue
        count[depth] = ordered_moves_nb(scratch, moves[depth], values, True)
        if count[depth] == 0:
            if score_nb(scratch) == WIN_SCORE:
                return OUTCOME_WON, nodes, _copy_line_nb(path, depth, line)
            # Only lines the plan can hold, and the shorter among equals, so that the
            # policy reaches the grid it aims for with few moves (the cap of M7).
            value = keep_value_nb(scratch, keep)
            better = value > best_value or (value == best_value and depth < best_depth)
            if better and depth <= line.shape[0]:
                best_value, best_depth = value, depth
                best_len = _copy_line_nb(path, depth, line)
    return (OUTCOME_UNKNOWN if cut else OUTCOME_LOST), nodes, best_len


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


@njit(cache=True)
def lds_line_nb(state, budget, line):
    """The line of the search policy's limited-discrepancy search within budget
    positions, written into line: (its length, the score where it ends).

    That search tries the greedy line and its near variants first, which finds most
    wins far sooner than a depth-first search, and good grids to stop in; it cannot
    prove a loss, since it never plays a 2 from one column 1 to another unless that
    lengthens a kept run."""
    trial = state.copy()
    trial[SCRATCH_PLAN_DEAL] = trial[REDEALS]
    search_plan_nb(trial, budget)
    length = min(trial[SCRATCH_PLAN_LEN], line.shape[0])
    line[:length] = trial[SCRATCH_PLAN : SCRATCH_PLAN + length]
    return length, _end_score_nb(state, line, length)


@njit(cache=True)
def _end_score_nb(state, line, length):
    trial = state.copy()
    for step in range(length):
        move_card_nb(trial, line[step] // CELLS, line[step] % CELLS)
    return score_nb(trial)


@njit(cache=True)
def decide_nb(state, budget, keep, line):
    """Decide the phase: (verdict, nodes, line length), the line written into line.

    Three quarters of the budget go to lds_line_nb, which finds most wins soonest
    (on 50 deals without redeals it found 18 wins in 750,000 positions, 12 in
    250,000, where solve_nb found 5 and proved no loss); the rest to solve_nb, which
    decides small phases exactly: it proves losses and finds the wins the first
    missed. When neither decides, the line is the one that ends with more cards in
    kept runs: the policy plays it and searches again from its end."""
    quick = max(1, min(3 * (budget // 4), LDS_NODES_CAP))
    quick_len, quick_score = lds_line_nb(state, quick, line)
    if quick_score == WIN_SCORE:
        return OUTCOME_WON, quick, quick_len
    quick_line = line[:quick_len].copy()
    verdict, nodes, length = solve_nb(state, max(1, budget - quick), keep, line)
    undecided = verdict == OUTCOME_UNKNOWN and keep != KEEP_NONE
    if undecided and quick_score > _end_score_nb(state, line, length):
        line[:quick_len] = quick_line
        length = quick_len
    return verdict, nodes + quick, length


@njit(cache=True)
def plan_phase_nb(state, budget, keep):
    """Decide the phase from state and store the line as the plan (engine.montana).

    The verdict slot keeps the verdict of the phase's first search, the one made
    from the grid as dealt: a later search starts further down a line, so it can
    only add that the phase is won."""
    line = state[SCRATCH_PLAN : SCRATCH_PLAN + PLAN_CAP]
    verdict, nodes, length = decide_nb(state, budget, keep, line)
    if state[SCRATCH_VERDICT] == VERDICT_PENDING or verdict == OUTCOME_WON:
        state[SCRATCH_VERDICT] = verdict
    state[SCRATCH_PLAN_DEAL] = state[REDEALS]
    state[SCRATCH_PLAN_POS] = 0
    state[SCRATCH_PLAN_LEN] = length
    return nodes


NODES, KEEP = param_slots(SOLVER_PARAMS, "nodes", "keep")


@njit(cache=True)
def solver_nb(state, legal, n_legal, params, stream):
    """The kernel of policy `solver` (sim.policies.montana)."""
    planned = _planned_index_nb(state, legal, n_legal)
    if planned >= 0:
        return planned
    plan_phase_nb(state, max(1, np.int64(params[NODES])), np.int64(params[KEEP]))
    planned = _planned_index_nb(state, legal, n_legal)
    if planned >= 0:
        return planned
    return best_greedy_nb(state, legal, n_legal)
