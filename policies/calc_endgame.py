"""Exact play of Calculation's last cards, for a player who does not see the stock.

With few cards unseen, the chance of winning under best play can be computed outright
by expectimax over the board of calc_oracle (ranks only):

- a *decision* position (the turned card known, or the stock done) is worth the most
  of its actions' worths: waste tops onto foundations (and so holding them back),
  the turned card onto each foundation that needs it, or onto each pile of distinct
  content. A provably safe foundation move (calc_oracle.safe_foundation_move_nb: the
  card must end there in every winning line, whatever the order) is the only one
  tried; a won board is worth 1, a board whose piles already lock is worth 0;
- a *turn* position (a card just played from the turn, the next not yet seen) is worth
  the mean over the ranks still unseen of the decision position with that rank
  turned, each weighted by its copies unseen.

The unseen ranks are those of the stock from the turned card's slot on; their order
there is never read: a turn position tries the ranks in rank order, swapping each into
the turned card's slot, so the worths do not depend on it. Worths are kept in a
stamped table (policies.search) keyed by calc_oracle.position_key_nb, which knows a
position up to the order of the waste piles and the kings at their bottoms, neither of
which changes a worth; the unseen ranks follow from the key. A search that passes its
node budget gives up (-1), and the caller decides some other way.
"""

import numpy as np
from numba import njit

from sim.engine.calc import ACT_FROM_WASTE, MAX_WASTES, POS, STOCK, STOCK_SIZE
from sim.engine.kernel import njit_no_refcounts
from sim.policies import calc_oracle
from sim.policies.search import (
    new_stamped_table_nb,
    stamped_claim_nb,
    stamped_find_nb,
    zobrist_keys,
)

# What sets a position's key apart from calc_oracle.position_key_nb: the rank turned
# (0: the stock is done), or TURN_PENDING for a turn position.
TURN_PENDING = 14
_TURN_KEY = zobrist_keys(20261206, 15)
OUT_OF_BUDGET = -1.0
MAX_TABLE_BITS = 14


@njit(cache=True)
def new_worth_table_nb(budget):
    """(keys, stamps, worths): a stamped table with a worth beside each key, 2**12
    entries, or up to 2**MAX_TABLE_BITS for a larger `budget`. A search of the default
    budget that outgrows it only searches some positions twice; a larger table, cleared
    at every decision, cost more than it saved (at 2**17, which the system maps afresh
    at each allocation, 2,000 deals took 34 s of system time beside 196 s of user
    time, against 2 s at 2**14)."""
    bits = 12
    while bits < MAX_TABLE_BITS and (1 << bits) < 4 * budget:
        bits += 1
    keys, stamps = new_stamped_table_nb(bits)
    return keys, stamps, np.empty(1 << bits)


@njit_no_refcounts
def _recall_nb(table, key):
    keys, stamps, worths = table
    slot = stamped_find_nb(keys, stamps, 1, key)
    return worths[slot] if slot >= 0 else -1.0


@njit_no_refcounts
def _remember_nb(table, key, worth):
    keys, stamps, worths = table
    worths[stamped_claim_nb(keys, stamps, 1, key)] = worth


# A search keeps one frame per depth: the position reached by the frames above it.
# ints[d]: KIND (DECISION or TURN), COUNT (its actions), NEXT (the next action's
# index, or the rank turned now), SLOT (where that rank came from, _turn_rank_nb);
# keys[d] its key; sums[d] the best worth so far (decision) or the sum of copies x
# worth so far (turn); actions[d] its actions; copies[d] the unseen copies of each rank.
DECISION, TURN = 0, 1
KIND, COUNT, NEXT, SLOT = range(4)
MAX_FRAMES = 2 * calc_oracle.MAX_DEPTH  # a line of at most 96 actions and 48 turns
OPEN = -2.0  # _open_nb: the position needs a frame
NO_WORTH = -3.0  # the search loop: no child has just been decided


@njit(cache=True)
def new_frames_nb():
    """The frames of worth_nb, and room for calc_oracle.deadlocked_in_nb."""
    ints = np.empty((MAX_FRAMES, 4), np.int64)
    keys = np.empty(MAX_FRAMES, np.int64)
    sums = np.empty(MAX_FRAMES)
    actions = np.empty((MAX_FRAMES, calc_oracle.MAX_BRANCH), np.int16)
    copies = np.empty((MAX_FRAMES, 14), np.int64)
    return ints, keys, sums, actions, copies, np.empty(14 + 4 + MAX_WASTES, np.int64)


@njit_no_refcounts
def worth_nb(board, turn, table, spent, budget, frames):
    """Chance of winning board under best play: a turn position when `turn` is 1 (its
    turned card not yet seen), else a decision position. spent[0] counts the decision
    positions expanded; past `budget` the result is OUT_OF_BUDGET and board is left
    mid-line. frames: from new_frames_nb. (Depth first with an explicit stack of
    frames: numba cannot cache a recursive function.)"""
    ints, _, sums, actions, copies, _ = frames
    worth = _open_nb(board, turn, table, spent, budget, frames, 0, 0)
    if worth != OPEN:
        return worth
    depth = 0
    worth = NO_WORTH
    while True:
        # Frame `depth` takes the worth of the child just decided, if any, and opens
        # its next child, or closes.
        if ints[depth, KIND] == DECISION:
            if worth >= 0:
                calc_oracle.undo_nb(board, actions[depth, ints[depth, NEXT] - 1])
                sums[depth] = max(sums[depth], worth)
            closing = sums[depth] == 1.0 or ints[depth, NEXT] == ints[depth, COUNT]
            if not closing:
                action = actions[depth, ints[depth, NEXT]]
                ints[depth, NEXT] += 1
                calc_oracle.apply_nb(board, action)
                child_turn = np.int64(action < ACT_FROM_WASTE)  # the turned card played
        else:
            if worth >= 0:
                rank = ints[depth, NEXT]
                _untake_nb(board, rank, ints[depth, SLOT])
                sums[depth] += copies[depth, rank] * worth
            rank = ints[depth, NEXT] + 1
            while rank < 14 and copies[depth, rank] == 0:
                rank += 1
            closing = rank == 14
            if not closing:
                ints[depth, NEXT] = rank
                ints[depth, SLOT] = _turn_rank_nb(board, rank)
                child_turn = np.int64(0)
        if closing:
            worth = _close_nb(board, table, frames, depth)
            if depth == 0:
                return worth
            depth -= 1
            continue
        drawn = ints[depth, KIND]  # TURN: the child is a rank just turned
        worth = _open_nb(board, child_turn, table, spent, budget, frames, depth + 1, drawn)
        if worth == OUT_OF_BUDGET:
            return OUT_OF_BUDGET
        if worth == OPEN:
            depth += 1
            worth = NO_WORTH


@njit_no_refcounts
def _close_nb(board, table, frames, depth):
    """The worth of the frame at depth, all its children decided; remembered."""
    ints, keys, sums, _, _, _ = frames
    worth = sums[depth]
    if ints[depth, KIND] == TURN:
        worth /= STOCK_SIZE - board[POS]
    _remember_nb(table, keys[depth], worth)
    return worth


@njit_no_refcounts
def _open_nb(board, turn, table, spent, budget, frames, depth, drawn):
    """The worth of board if known at once (won, locked, in the table), OUT_OF_BUDGET,
    or OPEN with frame `depth` set up to search it. drawn: 1 when board is a rank just
    turned by the turn frame above (which has checked the lock and holds the key)."""
    ints, keys, sums, actions, copies, lock = frames
    pos = board[POS]
    if turn == 1 and pos < STOCK_SIZE:
        key = calc_oracle.position_key_nb(board) ^ _TURN_KEY[TURN_PENDING]
        known = _recall_nb(table, key)
        if known >= 0:
            return known
        if calc_oracle.deadlocked_in_nb(board, lock):  # for every rank turned
            return 0.0
        ints[depth, KIND] = TURN
        ints[depth, NEXT] = 0
        copies[depth, :] = 0
        for i in range(pos, STOCK_SIZE):
            copies[depth, board[STOCK + i]] += 1
    else:
        turned = board[STOCK + pos] if pos < STOCK_SIZE else 0
        if drawn == 1:
            key = keys[depth - 1] ^ _TURN_KEY[TURN_PENDING] ^ _TURN_KEY[turned]
        else:
            if calc_oracle.score_nb(board) == 52:
                return 1.0
            if calc_oracle.deadlocked_in_nb(board, lock):
                return 0.0
            key = calc_oracle.position_key_nb(board) ^ _TURN_KEY[turned]
        known = _recall_nb(table, key)
        if known >= 0:
            return known
        spent[0] += 1
        if spent[0] > budget:
            return OUT_OF_BUDGET
        ints[depth, KIND] = DECISION
        ints[depth, COUNT] = _decision_actions_nb(board, actions[depth])
        ints[depth, NEXT] = 0
    keys[depth] = key
    sums[depth] = 0.0
    return OPEN


@njit_no_refcounts
def _decision_actions_nb(board, actions):
    safe = calc_oracle.safe_foundation_move_nb(board)
    if safe >= 0:
        actions[0] = safe
        return 1
    return calc_oracle.solver_actions_nb(board, actions)


@njit_no_refcounts
def _turn_rank_nb(board, rank):
    """Swap a card of `rank` from the unseen stock into the turned card's slot; return
    the slot it came from (for _untake_nb)."""
    pos = board[POS]
    slot = pos
    while board[STOCK + slot] != rank:
        slot += 1
    board[STOCK + slot] = board[STOCK + pos]
    board[STOCK + pos] = rank
    return slot


@njit_no_refcounts
def _untake_nb(board, rank, slot):
    pos = board[POS]
    board[STOCK + pos] = board[STOCK + slot]
    board[STOCK + slot] = rank


@njit_no_refcounts
def action_worth_nb(board, action, table, spent, budget, frames):
    """worth_nb of the position after `action` (board is left as it was, unless the
    search ran out of budget)."""
    calc_oracle.apply_nb(board, action)
    worth = worth_nb(board, np.int64(action < ACT_FROM_WASTE), table, spent, budget, frames)
    if worth != OUT_OF_BUDGET:
        calc_oracle.undo_nb(board, action)
    return worth


@njit(cache=True)
def endgame_choice_nb(board, legal, n_legal, budget, worths):
    """Index in legal of an action of greatest chance to win under best play, its
    worth in worths[i] for each action tried; -1 when the search passes `budget`
    decision positions or no action can win (so that another rule picks among
    equally lost actions). A provably safe foundation move is taken unweighed."""
    safe = calc_oracle.safe_choice_nb(board, legal, n_legal)
    if safe >= 0:
        return safe
    table = new_worth_table_nb(budget)
    spent = np.zeros(1, np.int64)
    frames = new_frames_nb()
    trial = board.copy()  # the search's board; board stays as given
    best = -1
    for i in range(n_legal):
        worths[i] = action_worth_nb(trial, legal[i], table, spent, budget, frames)
        if worths[i] == OUT_OF_BUDGET:
            return -1
        if worths[i] > 0 and (best < 0 or worths[i] > worths[best]):
            best = i
            if worths[i] == 1.0:
                break
    return best
