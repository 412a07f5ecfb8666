"""Built-in Montana policies (compiled; see engine.montana for state and actions).

Why none of them is ever capped (M7): a legal move can take a card out of a kept run
only by moving the 2 of column 1 into another row's column 1, since the card after c
goes only right of c. The policies here make such a move only when it raises the
score, and `first` never makes it (a column-1 gap always has a 2 from outside
column 1 to take, listed first). Between two such moves a 2 moves at most once (into
column 1, where it stays), and a card of rank r only when the cell right of the card
before it is free, so at most once more than that card: a few hundred moves a deal.
`random` can move 2s between column-1 cells back and forth, but each time a column-1
gap is filled, a 2 from outside column 1 has a fair chance, so it ends too.
"""

import numpy as np
from numba import njit

from sim.engine import rng
from sim.engine.montana import (
    CELLS,
    COLS,
    GAP,
    GRID,
    KING,
    MAX_LEGAL,
    PLAN_CAP,
    REDEALS,
    ROWS,
    RUN,
    SCRATCH_PLAN,
    SCRATCH_PLAN_DEAL,
    SCRATCH_PLAN_LEN,
    SCRATCH_PLAN_POS,
    WHERE,
    WIN_SCORE,
    legal_actions_nb,
    move_card_nb,
    score_nb,
)
from sim.policies.montana import SEARCH_PARAMS
from sim.policies.registry import param_slots
from sim.policies.search import insert_by_value_nb, seen_visit_nb, zobrist_keys

NEVER = -1_000_000  # the value of a move a policy must not make


@njit(cache=True)
def random_nb(state, legal, n_legal, params, stream):
    """The kernel of policy `random` (sim.policies.montana)."""
    return rng.below_nb(stream, n_legal)


@njit(cache=True)
def first_nb(state, legal, n_legal, params, stream):
    """The kernel of policy `first` (sim.policies.montana)."""
    return 0


# Column and row of a cell (and of the cell just past the grid), looked up rather than
# divided: the greedy policy evaluates nearly every move of a deal.
COL_OF = np.arange(CELLS + 1, dtype=np.int64) % COLS
ROW_OF = np.arange(CELLS + 1, dtype=np.int64) // COLS
# The card, target cell, target column and target row's RUN slot of each action
# (card * CELLS + cell), looked up rather than divided for the same reason.
ACTION_CARD = np.repeat(np.arange(CELLS, dtype=np.int16), CELLS)
ACTION_TARGET = np.tile(np.arange(CELLS, dtype=np.int16), CELLS)
TARGET_COL = (ACTION_TARGET % COLS).astype(np.int16)
TARGET_RUN = (RUN + ACTION_TARGET // COLS).astype(np.int16)


@njit(cache=True, inline="always")
def chain_after_nb(state, card, cell):
    """Cards of card's suit already lying in sequence right of cell, in its row."""
    length = 0
    nxt = card + 4
    col = COL_OF[cell] + 1
    while col < COLS and state[GRID + cell - COL_OF[cell] + col] == nxt:
        length += 1
        nxt += 4
        col += 1
    return length


@njit(cache=True, inline="always")
def greedy_value_nb(state, card, target):
    """The lore's value of moving card into the gap at target (higher is better).

    Putting a card at the end of its row's kept run counts most (1000), less on a
    longer run, to keep rows even. Then the cell it empties: best the next cell of a
    kept run (+8), never a gap right of a K or of a gap (-4); filling a gap left of
    another gap unblocks that one (+2). Moves of 2s get more in two_value_nb.
    """
    # Straight-line arithmetic on table lookups: this runs for nearly every move of a
    # deal. Reads past the end of a row land in the next row or in WHERE and are
    # masked by the column.
    source = state[WHERE + card]
    col = COL_OF[source]
    target_col = COL_OF[target]
    run = state[RUN + ROW_OF[target]]
    # The card left of the emptied cell: the moved card itself if it moves one left.
    left = card if source == target + 1 else state[GRID + source - 1]
    dead = (col != 0) & ((left == GAP) | (left >= KING))
    feeds_run = col == state[RUN + ROW_OF[source]]
    unblocks = (target_col < COLS - 1) & (state[GRID + target + 1] == GAP) & (card < KING)
    return (
        (target_col == run) * (1000 - 8 * run)
        + 8 * np.int64(feeds_run)
        - 4 * np.int64(dead)
        + 2 * np.int64(unblocks)
    )


@njit(cache=True, inline="always")
def two_value_nb(state, card, target):
    """greedy_value_nb of a 2 moving into column 1, plus what the 2 brings.

    16 for each card of its suit already in sequence after the target; minus the run
    it leaves if it comes from another row's column 1, and NEVER if that leaves the
    score no higher (a 2 between column-1 cells for nothing could loop).
    """
    gain = 1 + chain_after_nb(state, card, target)
    source = state[WHERE + card]
    if COL_OF[source] == 0:
        gain -= state[RUN + ROW_OF[source]]
        if gain <= 0:
            return NEVER
    return greedy_value_nb(state, card, target) + 16 * gain


@njit(cache=True, inline="always")
def _best_two_nb(state, legal, n_legal):
    """Index of the best move of a 2 into column 1 (it beats any other move, if any
    is worth playing at all: it starts a run), or of the best other move."""
    # two_value_nb written out (its extension term is the same for every 2), with
    # value and index packed together so that the best is a max.
    best = np.int64(NEVER) * 32
    for i in range(n_legal):
        card = legal[i] // CELLS
        target = legal[i] - card * CELLS
        if COL_OF[target] != 0:
            continue
        source = state[WHERE + card]
        col = COL_OF[source]
        source_run = state[RUN + ROW_OF[source]]
        gain = 1 - (col == 0) * source_run
        if state[GRID + target + 1] == card + 4:
            gain += chain_after_nb(state, card, target)
        left = card if source == target + 1 else state[GRID + source - 1]
        dead = (col != 0) & ((left == GAP) | (left >= KING))
        value = 16 * gain + 8 * np.int64(col == source_run) - 4 * np.int64(dead)
        if gain > 0:
            best = max(best, value * 32 + 31 - i)
    if best > np.int64(NEVER) * 32:
        return 31 - (best & 31)
    best_value, best_index = NEVER - 1, 0
    for i in range(n_legal):
        card = legal[i] // CELLS
        value = greedy_value_nb(state, card, legal[i] - card * CELLS)
        if value > best_value:
            best_index, best_value = i, value
    return best_index


@njit(cache=True, inline="always")
def best_greedy_nb(state, legal, n_legal):
    """Index of the legal move of highest greedy value, the first on ties."""
    if n_legal == 1:
        return 0
    if n_legal > 4 or TARGET_COL[legal[0]] == 0:
        return _best_two_nb(state, legal, n_legal)
    # No column-1 gap (it would bring 4 moves, and be the only gap with moves if
    # there are no more than 4): at most 4 moves, one a gap. The first that extends a
    # kept run is played; otherwise the best is found by a max of value and index
    # packed together, a branch-free step.
    for i in range(n_legal):
        if TARGET_COL[legal[i]] == state[TARGET_RUN[legal[i]]]:
            return i
    best = np.int64(NEVER) * 32
    for i in range(n_legal):
        action = legal[i]
        value = greedy_value_nb(state, ACTION_CARD[action], ACTION_TARGET[action])
        best = max(best, value * 32 + 31 - i)
    return 31 - (best & 31)


@njit(cache=True)
def greedy_nb(state, legal, n_legal, params, stream):
    """The kernel of policy `greedy` (sim.policies.montana)."""
    return best_greedy_nb(state, legal, n_legal)


# Zobrist keys of (card, cell) for the search's transposition table.
ZOBRIST = zobrist_keys(20240604, (CELLS, CELLS))


@njit(cache=True)
def grid_key_nb(state):
    key = np.int64(0)
    for card in range(4, CELLS):
        key ^= ZOBRIST[card, state[WHERE + card]]
    return key


@njit(cache=True, inline="always")
def move_value_nb(state, action):
    """The lore's value of a legal move: two_value_nb for a 2 into column 1,
    greedy_value_nb for any other."""
    card, target = action // CELLS, action % CELLS
    if COL_OF[target] == 0:
        return two_value_nb(state, card, target)
    return greedy_value_nb(state, card, target)


@njit(cache=True)
def ordered_moves_nb(state, out, values, keep_loops):
    """Legal moves, best-looking first by move_value_nb; how many.

    A move valued NEVER (a 2 between column-1 cells for nothing, which could loop) is
    dropped unless keep_loops: a search that must see every position keeps it.
    values is scratch space for MAX_LEGAL values."""
    n = legal_actions_nb(state, out)
    kept = 0
    for i in range(n):
        action = out[i]
        value = move_value_nb(state, action)
        if keep_loops or value != NEVER:
            kept = insert_by_value_nb(out, values, kept, action, value)
    return kept


@njit(cache=True)
def search_plan_nb(state, budget):
    """Search the current deal; write the best line found into the plan slots.

    A limited-discrepancy search: the moves of each position are ordered by the
    greedy values, taking any but the best is a discrepancy, and pass L explores
    every line of at most L discrepancies, depth first, for L = 0, 1, 2, ... So the
    greedy line comes first, then the lines that leave it once, and so on, at any
    depth (a plain depth-first search spends its budget near the end of the greedy
    line instead: at 50,000 positions it won 69.5% of 2,000 deals, this 73%). A
    transposition table of grid hashes skips a position already explored with as
    much leeway. At most `budget` positions are explored in all. A stuck position is
    worth its score; the search stops at a win. Returns True when a pass met no
    limit, that is when every position reachable was seen.
    """
    scratch = state.copy()
    size = 1024
    while size < 2 * budget:
        size *= 2
    keys = np.zeros(size, np.int64)
    allowances = np.zeros(size, np.int16)
    depth_cap = PLAN_CAP
    moves = np.empty((depth_cap + 1, MAX_LEGAL), np.int16)
    count = np.zeros(depth_cap + 1, np.int64)
    nxt = np.zeros(depth_cap + 1, np.int64)
    spent = np.zeros(depth_cap + 1, np.int64)
    source = np.zeros(depth_cap + 1, np.int16)
    path = np.zeros(depth_cap + 1, np.int16)
    best_path = np.zeros(depth_cap, np.int16)
    values = np.empty(MAX_LEGAL, np.int64)
    root_key = grid_key_nb(scratch) | 1
    count[0] = ordered_moves_nb(scratch, moves[0], values, False)
    best_value, best_len = _node_value_nb(scratch, count[0] == 0), 0
    nodes, complete, won = 1, False, False
    limit = 0
    while not complete and not won and nodes < budget:
        limited = False
        seen_visit_nb(keys, allowances, root_key, limit + 1)
        key = root_key
        depth = 0
        nxt[0] = 0
        spent[0] = 0
        while True:
            deviates = min(nxt[depth], 1)
            if nxt[depth] >= count[depth] or spent[depth] + deviates > limit:
                if nxt[depth] < count[depth]:
                    limited = True
                if depth == 0:
                    break
                card = path[depth] // CELLS
                key ^= ZOBRIST[card, path[depth] % CELLS] ^ ZOBRIST[card, source[depth]]
                move_card_nb(scratch, card, source[depth])
                depth -= 1
                continue
            if nodes >= budget:
                break
            action = moves[depth, nxt[depth]]
            child_spent = spent[depth] + deviates
            nxt[depth] += 1
            card, target = action // CELLS, action % CELLS
            from_cell = scratch[WHERE + card]
            new_key = key ^ ZOBRIST[card, from_cell] ^ ZOBRIST[card, target]
            if not seen_visit_nb(keys, allowances, new_key, limit + 1 - child_spent):
                continue
            nodes += 1
            move_card_nb(scratch, card, target)
            key = new_key
            depth += 1
            path[depth] = action
            source[depth] = from_cell
            spent[depth] = child_spent
            nxt[depth] = 0
            count[depth] = (
                0 if depth == depth_cap else ordered_moves_nb(scratch, moves[depth], values, False)
            )
            value = _node_value_nb(scratch, count[depth] == 0)
            if value > best_value:
                best_value, best_len = value, depth
                best_path[:depth] = path[1 : depth + 1]
                if score_nb(scratch) == WIN_SCORE:
                    won = True
                    break
        # unwind to the root for the next pass
        while depth > 0:
            card = path[depth] // CELLS
            move_card_nb(scratch, card, source[depth])
            depth -= 1
        complete = not limited and nodes < budget
        limit += 1
    state[SCRATCH_PLAN_DEAL] = state[REDEALS]
    state[SCRATCH_PLAN_POS] = 0
    state[SCRATCH_PLAN_LEN] = best_len
    state[SCRATCH_PLAN : SCRATCH_PLAN + best_len] = best_path[:best_len]
    return complete


@njit(cache=True)
def _node_value_nb(state, stuck):
    """A stuck position is worth its score; one with moves left a little more."""
    return 4 * score_nb(state) + (0 if stuck else 1)


@njit(cache=True)
def _planned_index_nb(state, legal, n_legal):
    """Index in legal of the plan's next move, or -1 if there is no plan to follow."""
    if (
        state[SCRATCH_PLAN_DEAL] != state[REDEALS]
        or state[SCRATCH_PLAN_POS] >= state[SCRATCH_PLAN_LEN]
    ):
        return -1
    action = state[SCRATCH_PLAN + state[SCRATCH_PLAN_POS]]
    for i in range(n_legal):
        if legal[i] == action:
            state[SCRATCH_PLAN_POS] += 1
            return i
    return -1


(NODES,) = param_slots(SEARCH_PARAMS, "nodes")


@njit(cache=True)
def search_nb(state, legal, n_legal, params, stream):
    """The kernel of policy `search` (sim.policies.montana)."""
    planned = _planned_index_nb(state, legal, n_legal)
    if planned >= 0:
        return planned
    search_plan_nb(state, max(1, np.int64(params[NODES])))
    planned = _planned_index_nb(state, legal, n_legal)
    if planned >= 0:
        return planned
    return best_greedy_nb(state, legal, n_legal)


# What "best position at the redeal" means (parameter `keep`):
KEEP_SCORE = 0  # most cards in kept runs (M5), the first such position found
KEEP_RUNS = 1  # the same, then most rows with a run, then the longest shortest run
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
