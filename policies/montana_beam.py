"""Beam search for a Montana deal phase: wins found soon, and good stuck grids.

Level by level from the grid as dealt, it keeps the `width` positions that look best
and expands only them, never a position met before. It proves nothing, but it looks
wide where a depth-first search looks deep: its wins come sooner at budgets near the
default, and the best stuck grid it meets keeps more cards than the depth-first
searches find within the same budget. The solver (policies.montana_solver) runs it
first.

A position of the beam is the head of the engine's state (engine.montana), the slots
play keeps up to date and a move needs:

    index        name     meaning
    0 .. 51      GRID     card code in each cell, GAP = -1
    52 .. 103    WHERE    cell of each card code
    104 .. 107   GAPS     the cells of the 4 gaps, in cell order
    108 .. 111   RUN      kept-run length of each row

How good a position looks (position_value_nb), measured on the first 100 deals of
seed 99 without redeals at width 10,000: 10 a card in a kept run, 6 a card already in
its final cell beyond the run of its row (a row's suit is that of its column-1 2), and
-2 a dead gap (right of a K or of another gap). It won 53 deals; with the cards in
final cells valued 3 or 1, 51 and 53; with dead gaps valued 0 or -6, 53 and 53; with
the runs alone, 42.
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
    RUN,
    WHERE,
    move_card_nb,
    score_nb,
)
from sim.policies.montana_kernels import ZOBRIST, grid_key_nb, keep_value_nb

HEAD = RUN + 4  # the slots of the state a beam position holds (drawn above)
BEAM_DEPTH = 1024  # the longest line a beam follows: the plan's capacity
# The seen set: eight slots a position of the budget (a position adds about four
# keys) up to 2**TABLE_BITS (64 MB), then two a position up to 2**WIDE_TABLE_BITS
# (256 MB, from budgets of 16M: wide beams, which forget more); never grown, a full
# one forgets (costs time). At width 256,000, 2**24 slots won the same 28 of 62 deals
# as 2**27 (seed 99, deals 0-199 the solver left undecided at its default budget).
TABLE_BITS = 23
WIDE_TABLE_BITS = 25
PROBE_LIMIT = 32
RUN_VALUE, IN_PLACE_VALUE, DEAD_GAP_VALUE = 10, 6, 2
VALUE_OFFSET = 8  # keeps every value above 0: at most 4 dead gaps cost 8
VALUE_BINS = 10 * 48 + 8 + 1  # values lie in 0 .. VALUE_BINS - 1
MAX_MOVES = 16  # 4 gaps, and into a column-1 gap any of the four 2s
# The trail: for each position kept, its slot in the level above and the move that led
# to it, packed as parent * TRAIL_MOVES + move in one int32, the levels one after
# another (level d from trail_start[d]). It grows with the positions kept, which are
# the budget at most: 4 bytes a position of the budget.
TRAIL_MOVES = 4096  # a move is card * 52 + cell < 2,704
MAX_WIDTH = 2**31 // TRAIL_MOVES - 1  # a parent slot must fit the packed int32


@njit(cache=True, inline="always")
def position_value_nb(pos):
    """How good pos looks: its cards in kept runs, its cards in their final cells
    beyond the runs, and its dead gaps (weights above)."""
    in_place = 0
    for row in range(4):
        first = pos[GRID + COLS * row]
        if first < FIRST_TWO or first >= FIRST_TWO + 4:
            continue
        suit = first % 4
        for col in range(pos[RUN + row], COLS):
            in_place += pos[GRID + COLS * row + col] == 4 * (col + 1) + suit
    dead = 0
    for k in range(4):
        gap = pos[GAPS + k]
        if gap % COLS != 0:
            left = pos[GRID + gap - 1]
            dead += (left == GAP) | (left >= KING)
    return (
        RUN_VALUE * score_nb(pos) + IN_PLACE_VALUE * in_place - DEAD_GAP_VALUE * dead + VALUE_OFFSET
    )


@njit(cache=True, inline="always")
def _moves_nb(pos, out):
    """The legal moves of pos (M2-M4), in no particular order; how many."""
    n = 0
    for k in range(4):
        gap = pos[GAPS + k]
        if gap % COLS == 0:
            for card in range(FIRST_TWO, FIRST_TWO + 4):
                out[n] = card * CELLS + gap
                n += 1
        else:
            left = pos[GRID + gap - 1]
            if left != GAP and left < KING:
                out[n] = (left + 4) * CELLS + gap
                n += 1
    return n


@njit(cache=True, inline="always")
def _first_visit_nb(keys, key):
    """Add key to the seen set; False when it was there. Past the probe limit the
    key replaces the one at its home slot, so a full set forgets instead of failing."""
    mask = keys.shape[0] - 1
    slot = key & mask
    for _ in range(PROBE_LIMIT):
        if keys[slot] == key:
            return False
        if keys[slot] == 0:
            keys[slot] = key
            return True
        slot = (slot + 1) & mask
    keys[key & mask] = key
    return True


@njit(cache=True)
def _table_size_nb(budget):
    size = 1024
    while size < 8 * budget and size < (1 << TABLE_BITS):
        size *= 2
    while size < 2 * budget and size < (1 << WIDE_TABLE_BITS):
        size *= 2
    return size


@njit(cache=True)
def _threshold_nb(values, n, width, counts):
    """The value v and the number r such that the width best of values[:n] are all
    those above v and the first r equal to it."""
    counts[:] = 0
    for c in range(n):
        counts[values[c]] += 1
    taken, v = 0, counts.shape[0] - 1
    while v > 0 and taken + counts[v] < width:
        taken += counts[v]
        v -= 1
    return v, width - taken


@njit(cache=True)
def beam_line_nb(state, width, budget, keep, line):
    """Beam search from state's grid, expanding at most `budget` positions, `width`
    of them a level: (line length, worth of the stuck grid the line ends on, positions
    expanded, won). The line, written into line, wins when won; otherwise it leads to
    the stuck grid of highest keep_value_nb(grid, keep) met, the shallowest among
    equals. Worth -1 (and length 0): no stuck grid met."""
    width = min(width, MAX_WIDTH)
    beam = np.empty((width, HEAD), np.int16)
    beam_keys = np.empty(width, np.int64)
    nxt = np.empty((width, HEAD), np.int16)
    nxt_keys = np.empty(width, np.int64)
    cap = width * MAX_MOVES
    cand_parent = np.empty(cap, np.int32)
    cand_move = np.empty(cap, np.int16)
    cand_value = np.empty(cap, np.int32)
    cand_key = np.empty(cap, np.int64)
    trail = np.empty(max(1024, min(budget, 16 * width)), np.int32)
    trail_start = np.zeros(BEAM_DEPTH + 2, np.int64)
    keys = np.zeros(_table_size_nb(budget), np.int64)
    counts = np.empty(VALUE_BINS, np.int64)
    out = np.empty(MAX_MOVES, np.int64)
    beam[0] = state[:HEAD]
    beam_keys[0] = grid_key_nb(state) | 1
    _first_visit_nb(keys, beam_keys[0])
    size, nodes = 1, 0
    best, best_depth, best_slot = np.int64(-1), 0, 0
    won = False
    for depth in range(BEAM_DEPTH + 1):
        n_cand = 0
        for i in range(size):
            pos = beam[i]
            n = _moves_nb(pos, out)
            nodes += 1
            if n == 0:
                if score_nb(pos) == 48:
                    won, best_depth, best_slot = True, depth, i
                    break
                worth = keep_value_nb(pos, keep)
                if worth > best:
                    best, best_depth, best_slot = worth, depth, i
                continue
            if depth == BEAM_DEPTH:
                continue
            for j in range(n):
                card, target = out[j] // CELLS, out[j] % CELLS
                source = pos[WHERE + card]
                key = beam_keys[i] ^ ZOBRIST[card, source] ^ ZOBRIST[card, target]
                if not _first_visit_nb(keys, key):
                    continue
                move_card_nb(pos, card, target)
                cand_value[n_cand] = position_value_nb(pos)
                move_card_nb(pos, card, source)
                cand_parent[n_cand] = i
                cand_move[n_cand] = out[j]
                cand_key[n_cand] = key
                n_cand += 1
        if won or n_cand == 0 or nodes >= budget:
            break
        start = trail_start[depth + 1]
        if start + width > trail.shape[0]:
            trail = _grown_nb(trail, start + width)
        size = _next_level_nb(
            beam, nxt, nxt_keys, cand_parent, cand_move, cand_value, cand_key, n_cand,
            width, counts, trail[start : start + width],
        )  # fmt: skip
        trail_start[depth + 2] = start + size
        beam, nxt = nxt, beam
        beam_keys, nxt_keys = nxt_keys, beam_keys
    if not won and best < 0:
        return 0, best, nodes, False
    length = _trace_line_nb(trail, trail_start, best_depth, best_slot, line)
    return length, best, nodes, won


@njit(cache=True)
def _next_level_nb(
    beam, nxt, nxt_keys, cand_parent, cand_move, cand_value, cand_key, n_cand, width,
    counts, trail,
):  # fmt: skip
    """Write the width best candidates into nxt (their keys beside them, their parents
    and moves into trail); how many."""
    threshold, room = 0, width
    if n_cand > width:
        threshold, room = _threshold_nb(cand_value, n_cand, width, counts)
    size = 0
    for c in range(n_cand):
        value = cand_value[c]
        if value < threshold:
            continue
        if value == threshold:
            if room == 0:
                continue
            room -= 1
        nxt[size] = beam[cand_parent[c]]
        m = cand_move[c]
        move_card_nb(nxt[size], m // CELLS, m % CELLS)
        nxt_keys[size] = cand_key[c]
        trail[size] = cand_parent[c] * TRAIL_MOVES + m
        size += 1
    return size


@njit(cache=True)
def _grown_nb(trail, at_least):
    grown = np.empty(max(at_least, 2 * trail.shape[0]), np.int32)
    grown[: trail.shape[0]] = trail
    return grown


@njit(cache=True)
def _trace_line_nb(trail, trail_start, depth, slot, line):
    """Write the moves from the root to beam slot `slot` at `depth` into line."""
    length = min(depth, line.shape[0])
    for d in range(depth, 0, -1):
        packed = trail[trail_start[d] + slot]
        if d <= length:
            line[d - 1] = packed % TRAIL_MOVES
        slot = packed // TRAIL_MOVES
    return length
