"""Search for Calculation: a fast rank-only board, playouts, and an exact solver.

A *board* is an int16 array with the layout of engine.calc's state, holding ranks
(1..13) where the state holds cards: suits never matter for play (C1), and ranks alone
make positions that differ only in suits the same. `board_from_state_nb` makes one.

Four tools work on boards:

- `playout_nb` plays a board to the end with a fast placement heuristic (the `rollout`
  policy, and the order of the solver's search) and returns the score;
  `playout_line_nb` also records its actions, and `fitted_playout_nb`, the playout of
  Monte Carlo search, places the turned card by a cost fitted to that search's own
  choices instead. They work in a scratch array from
  `new_work_nb` that a caller in a loop keeps, and like the other hot kernels here
  that allocate nothing they are compiled without reference counts
  (engine.kernel.njit_no_refcounts), which made playouts 2.8 times faster;
- `solve_nb` is given the whole stock order and searches depth first for a line that
  wins: it tries every legal action (foundation moves, including the choice of
  foundation (C7) and holding a card back on its waste, and every distinct waste pile
  for the turned card), prunes positions already shown lost through a transposition
  table keyed on a hash that sees the waste piles as a multiset (their order does not
  matter) and leaves out the kings at the bottom of a pile, and positions whose waste
  piles already lock (`deadlocked_nb`), makes a foundation move without alternatives
  when it is provably safe, gives up after a node budget, and returns the winning
  line it found;
- `beam_search_nb` looks for a win wide rather than deep, a level per turned card,
  keeping the positions whose playouts score best; `oracle_search_nb` runs it between
  the rounds of `solve_nb`;
- `monte_carlo_choice_nb` races the legal actions of a real position over random
  orders of the unseen cards and returns the best.

The policies of policies.calc_strong call `monte_carlo_choice_nb`,
`rollout_choice_nb` and `oracle_choice_nb`.
"""

import numpy as np
from numba import njit

from sim.engine import rng
from sim.engine.calc import (
    ACT_FROM_WASTE,
    ACT_TO_WASTE,
    FCOUNT,
    HEIGHT,
    MAX_WASTES,
    MAXHEIGHT,
    MOVES,
    NEED,
    NWASTE,
    OUTCOME_LOST,
    OUTCOME_UNKNOWN,
    OUTCOME_WON,
    PILE_CAP,
    PLAN_CAP,
    POS,
    SCRATCH_PLAN,
    SCRATCH_PLAN_LEN,
    SCRATCH_VERDICT,
    STATE_SIZE,
    STOCK,
    STOCK_SIZE,
    VERDICT_PENDING,
    WASTE,
    deal_nb,
    next_rank_nb,
)
from sim.engine.kernel import njit_no_refcounts
from sim.policies.search import (
    insert_by_value_nb,
    new_stamped_table_nb,
    stamped_claim_nb,
    stamped_find_nb,
    stamped_has_nb,
    zobrist_keys,
)

MAX_DEPTH = 100  # a game has at most 96 actions
MAX_BRANCH = 44  # 4 foundations + 8 wastes + 8 waste tops x 4 foundations
NEVER = 99

# Zobrist keys below 2**59, so that a sum over eight waste piles stays inside int64.
_KEYS = zobrist_keys(20240607, 48 * 14 + 8 * 256 + 49 + 56, 0, 1 << 59)
_PILE_KEY = _KEYS[: 48 * 14].reshape(48, 14).copy()
_BYTE_KEY = _KEYS[48 * 14 : 48 * 14 + 8 * 256].reshape(8, 256).copy()
_POS_KEY = _KEYS[48 * 14 + 8 * 256 : 48 * 14 + 8 * 256 + 49].copy()
_COUNT_KEY = _KEYS[48 * 14 + 8 * 256 + 49 :].reshape(4, 14).copy()


@njit(cache=True)
def board_from_state_nb(state, board):
    """Copy state into board with every card replaced by its rank."""
    board[:] = state[:STATE_SIZE]
    for i in range(STOCK_SIZE):
        board[STOCK + i] = state[STOCK + i] // 4 + 1
    for w in range(state[NWASTE]):
        base = WASTE + PILE_CAP * w
        for h in range(state[HEIGHT + w]):
            board[base + h] = state[base + h] // 4 + 1


def _sequences():
    """SEQUENCE[k]: the ranks foundation k takes, its base first (C2)."""
    sequence = np.zeros((4, 13), np.int64)
    for k in range(4):
        rank = k + 1
        for i in range(13):
            sequence[k, i] = rank
            rank = next_rank_nb(rank, k + 1)
    return sequence


def _need_index(sequence):
    """NEED_INDEX[k, r]: where rank r comes in SEQUENCE[k] (0 = the base)."""
    index = np.full((4, 14), NEVER, np.int64)
    for k in range(4):
        index[k, sequence[k]] = np.arange(13)
    return index


SEQUENCE = _sequences()
NEED_INDEX = _need_index(SEQUENCE)


@njit(cache=True, inline="always")
def steps_until_needed_nb(board, rank):
    """How many cards any foundation takes before it wants `rank` (0 = now)."""
    best = NEVER
    for k in range(4):
        steps = NEED_INDEX[k, rank] - board[FCOUNT + k]
        if 0 <= steps < best:
            best = steps
    return best


@njit(cache=True)
def wanted_later_elsewhere_nb(board, rank, k):
    """True when a foundation other than k still has `rank` ahead of it."""
    for j in range(4):  # noqa: SIM110 (a plain loop compiles to the tightest code)
        if j != k and NEED_INDEX[j, rank] >= board[FCOUNT + j]:
            return True
    return False


@njit(cache=True, inline="always")
def top_rank_nb(board, w):
    h = board[HEIGHT + w]
    if h == 0:
        return 0
    return board[WASTE + PILE_CAP * w + h - 1]


@njit(cache=True, inline="always")
def score_nb(board):
    return board[FCOUNT] + board[FCOUNT + 1] + board[FCOUNT + 2] + board[FCOUNT + 3]


@njit(cache=True, inline="always")
def found_up_nb(board, k):
    count = board[FCOUNT + k] + 1
    board[FCOUNT + k] = count
    if count == 13:
        board[NEED + k] = 0
    else:
        board[NEED + k] = next_rank_nb(board[NEED + k], k + 1)


@njit_no_refcounts
def apply_nb(board, action):
    """Apply an engine action to a board (moves, heights and turn counters included)."""
    if action < ACT_TO_WASTE:
        found_up_nb(board, action)
        board[POS] += 1
    elif action < ACT_FROM_WASTE:
        w = action - ACT_TO_WASTE
        h = board[HEIGHT + w]
        board[WASTE + PILE_CAP * w + h] = board[STOCK + board[POS]]
        board[HEIGHT + w] = h + 1
        if h + 1 > board[MAXHEIGHT]:
            board[MAXHEIGHT] = h + 1
        board[POS] += 1
    else:
        w = (action - ACT_FROM_WASTE) // 4
        board[HEIGHT + w] -= 1
        found_up_nb(board, (action - ACT_FROM_WASTE) % 4)
    board[MOVES] += 1


@njit_no_refcounts
def copy_board_nb(board, into):
    """into[:] = board, in a kernel compiled without reference counts (where numba
    would need them for the slice assignment)."""
    for i in range(board.shape[0]):
        into[i] = board[i]


@njit_no_refcounts
def undo_nb(board, action):
    """Take back `action`, the last one applied to board."""
    if action < ACT_TO_WASTE:
        board[POS] -= 1
        _found_down_nb(board, action, board[STOCK + board[POS]])
    elif action < ACT_FROM_WASTE:
        board[HEIGHT + action - ACT_TO_WASTE] -= 1
        board[POS] -= 1
    else:
        # The pile slot may have been reused since: the foundation says which rank left.
        w = (action - ACT_FROM_WASTE) // 4
        k = (action - ACT_FROM_WASTE) % 4
        rank = _last_rank_nb(board, k)
        h = board[HEIGHT + w]
        board[WASTE + PILE_CAP * w + h] = rank
        board[HEIGHT + w] = h + 1
        _found_down_nb(board, k, rank)
    board[MOVES] -= 1


@njit(cache=True)
def _last_rank_nb(board, k):
    """The rank on top of foundation k."""
    if board[NEED + k] == 0:
        return 13
    return (board[NEED + k] - k - 2) % 13 + 1


@njit(cache=True)
def _found_down_nb(board, k, rank):
    board[FCOUNT + k] -= 1
    board[NEED + k] = rank


# ---------------------------------------------------------------------------------
# Playouts: the placement heuristic that Monte Carlo search plays to the end.
# Weights, in the order of PLAYOUT_DEFAULTS ("soon" = steps_until_needed_nb):
#   0 empty          cost of opening an empty pile for a card that is not a king
#   1 bury           cost per step of need when a card covers one needed sooner
#   2 bury_base      fixed cost of covering a card needed sooner
#   3 depth          cost per card already on the pile, when burying
#   4 gap            cost per step of need between the card and the top it covers
#   5 empty_soon     cost per step of need of a card opening an empty pile
#   6 last_empty     extra cost of taking the last empty pile
#   7 chain          bonus for covering the card a foundation takes right after it
#   8 king_empty     cost of a king on an empty pile
#   9 king_on_king   cost of a king on a king
#  10 bury_unseen    bonus, when burying, per copy of the buried rank still unseen
#  11 bury_tops      bonus, when burying, per other waste top of the buried rank
#  12 bury_soonest   cost of burying the card of the pile needed soonest
#  13 follow_up      where a card fits several foundations: bonus for the one whose
#                    next rank lies on a waste top
#  14 fewest         ... and cost per card already on the foundation
# A king covers a card that is not a king only at a cost of 100 + pile height. The
# defaults were tuned by random local search on the win rate (then score) of the
# playout alone over 50,000 deals (seed 5, 4 wastes): 6.9% with weights 0-6 alone as
# first tuned, 11.1% with these (10.8% on seed 7; 2.0% with 3 wastes).
# ---------------------------------------------------------------------------------
PLAYOUT_DEFAULTS = np.array(
    [
        30.6,
        0.712,
        30.2,
        0.266,
        0.273,
        0.0522,
        0.649,
        9.56,
        0.245,
        0.927,
        0.474,
        1.55,
        -0.365,
        2.0,
        1.32,
    ]
)


@njit_no_refcounts
def tops_of_rank_nb(board, rank, skip):
    """How many waste tops, other than that of waste `skip`, have `rank`."""
    n = 0
    for w in range(board[NWASTE]):
        if w != skip and top_rank_nb(board, w) == rank:
            n += 1
    return n


@njit(cache=True, inline="always")
def choose_foundation_nb(board, rank, weights):
    """The foundation the heuristic gives a card of `rank` now, or -1 if none needs it."""
    first, fits = -1, 0
    for k in range(4):
        if board[NEED + k] == rank:
            fits += 1
            if first < 0:
                first = k
    if fits <= 1:
        return first
    best, best_value = -1, -1e18
    for k in range(first, 4):
        if board[NEED + k] != rank:
            continue
        value = -weights[14] * board[FCOUNT + k]
        if board[FCOUNT + k] < 12 and tops_of_rank_nb(board, next_rank_nb(rank, k + 1), -1) > 0:
            value += weights[13]
        if value > best_value:
            best, best_value = k, value
    return best


@njit(cache=True, inline="always")
def followers_nb(board, rank):
    """Bit r set: some foundation still wanting `rank` takes rank r right after it."""
    mask = 0
    for k in range(4):
        at = NEED_INDEX[k, rank]
        if board[FCOUNT + k] <= at < 12:
            mask |= 1 << SEQUENCE[k, at + 1]
    return mask


@njit(cache=True, inline="always")
def fill_soon_nb(board, soon):
    """soon[r] = steps_until_needed_nb(board, r) for every rank r."""
    for rank in range(1, 14):
        soon[rank] = steps_until_needed_nb(board, rank)


@njit(cache=True, inline="always")
def soonest_in_pile_nb(board, w, soon):
    best = NEVER
    base = WASTE + PILE_CAP * w
    for i in range(board[HEIGHT + w]):
        best = min(best, soon[board[base + i]])
    return best


@njit(cache=True, inline="always")
def placement_cost_nb(board, w, rank, n_empty, followers, soon, unseen, tops, weights):
    """How much harm the turned card of `rank` does on waste w (lower is better).

    `followers` comes from followers_nb, `soon` from fill_soon_nb; unseen[r] counts
    rank r in the stock under the turned card and tops[r] the waste tops of rank r."""
    height = board[HEIGHT + w]
    card_soon = soon[rank]
    if height == 0:
        if rank == 13:
            return weights[8]
        return weights[0] + weights[5] * card_soon + weights[6] * (n_empty == 1)
    top = top_rank_nb(board, w)
    if rank == 13:
        return weights[9] if top == 13 else 100.0 + height
    top_soon = soon[top]
    if top_soon > card_soon or top == rank:
        cost = weights[4] * (top_soon - card_soon)
        if followers >> top & 1:
            cost -= weights[7]
        return cost
    cost = weights[2] + weights[1] * (card_soon - top_soon) + weights[3] * height
    cost -= weights[10] * unseen[top] + weights[11] * (tops[top] - 1)
    if weights[12] != 0 and soonest_in_pile_nb(board, w, soon) == top_soon:
        cost += weights[12]
    return cost


@njit(cache=True, inline="always")
def count_tops_nb(board, tops):
    """tops[r]: how many waste tops have rank r (tops[0]: empty piles); return the
    number of empty piles."""
    tops[:] = 0
    for w in range(board[NWASTE]):
        tops[top_rank_nb(board, w)] += 1
    return tops[0]


@njit(cache=True, inline="always")
def heuristic_waste_nb(board, soon, unseen, tops, weights, placement=None):
    """The waste pile the playout heuristic puts the turned card on, the first of
    lowest cost: placement_cost_nb's, or with `placement` fitted_cost_nb's. `soon` is
    the table of fill_soon_nb, `unseen` counts the ranks in the stock under the
    turned card, and `tops` is scratch space for 14 counts."""
    rank = board[STOCK + board[POS]]
    n_empty = count_tops_nb(board, tops)
    follow = followers_nb(board, rank)
    best, best_cost = 0, 1e18
    for w in range(board[NWASTE]):
        if placement is None:
            cost = placement_cost_nb(board, w, rank, n_empty, follow, soon, unseen, tops, weights)
        else:
            cost = fitted_cost_nb(board, w, rank, n_empty, follow, soon, unseen, tops, placement)
        if cost < best_cost:
            best, best_cost = w, cost
    return best


@njit_no_refcounts
def count_unseen_nb(board, unseen):
    """Count the ranks in the stock under the turned card into unseen[1..13]."""
    unseen[:] = 0
    for i in range(board[POS] + 1, STOCK_SIZE):
        unseen[board[STOCK + i]] += 1


@njit(cache=True, inline="always")
def _play_waste_tops_nb(board, weights, line, n):
    """Move waste tops to foundations while any fits, the leftmost first, writing the
    actions into line from n while it has room; return the next index."""
    w = 0
    while w < board[NWASTE]:
        top = top_rank_nb(board, w)
        k = choose_foundation_nb(board, top, weights) if top > 0 else -1
        if k < 0:
            w += 1
            continue
        board[HEIGHT + w] -= 1
        found_up_nb(board, k)
        if n < line.shape[0]:
            line[n] = ACT_FROM_WASTE + 4 * w + k
            n += 1
        w = 0  # a move can make any top fit: look again from the left
    return n


@njit(cache=True)
def new_work_nb():
    """Scratch that playouts, and the searches that call them in loops, work in:
    UNSEEN_ROW, SOON_ROW and TOPS_ROW hold counts by rank (count_unseen_nb,
    fill_soon_nb, a waste top count), TIES_ROW a move's tie-break (search_moves_nb)."""
    return np.empty((4, MAX_BRANCH), np.int64)


UNSEEN_ROW, SOON_ROW, TOPS_ROW, TIES_ROW = range(4)


@njit_no_refcounts
def playout_nb(board, weights, work):
    """Play board to the end with the heuristic; return the score (52 = won).
    work: from new_work_nb."""
    return playout_line_nb(board, weights, board[:0], 0, work)[0]


@njit_no_refcounts
def playout_line_nb(board, weights, line, n, work, placement=None):
    """playout_nb that also writes its actions into line from index n; it stops when
    line is full (a line of length 0 records nothing). Return (score, index after the
    last action written). With `placement`, the turned card goes where the fitted
    cost puts it (heuristic_waste_nb, fitted_playout_nb)."""
    unseen = work[UNSEEN_ROW]
    count_unseen_nb(board, unseen)
    soon = work[SOON_ROW]
    tops = work[TOPS_ROW]
    # Only a foundation move makes a waste top fit, or changes the soon table.
    foundations_moved = True
    while True:
        if foundations_moved:
            n = _play_waste_tops_nb(board, weights, line, n)
        pos = board[POS]
        if pos >= STOCK_SIZE or 0 < line.shape[0] <= n:
            return score_nb(board), n
        rank = board[STOCK + pos]
        k = choose_foundation_nb(board, rank, weights)
        if k >= 0:
            found_up_nb(board, k)
            action = k
        else:
            if foundations_moved:
                fill_soon_nb(board, soon)
            w = heuristic_waste_nb(board, soon, unseen, tops, weights, placement)
            h = board[HEIGHT + w]
            board[WASTE + PILE_CAP * w + h] = rank
            board[HEIGHT + w] = h + 1
            action = ACT_TO_WASTE + w
        foundations_moved = k >= 0
        board[POS] = pos + 1
        if pos + 1 < STOCK_SIZE:
            unseen[board[STOCK + pos + 1]] -= 1
        if n < line.shape[0]:
            line[n] = action
            n += 1


# ---------------------------------------------------------------------------------
# The fitted placement cost that Monte Carlo search plays out. A pile's cost is linear
# in the N_FEATURES numbers placement_features_nb describes it by: the hand heuristic's
# terms (HAND_PLACEMENT: the same choices as PLAYOUT_DEFAULTS) and a few more, with
# weights fitted to the choices of `mc` itself at 2,048 samples, each round's `mc`
# playing out the last round's fit (benchmarks/calc_placement_fit.py, 6 rounds of 600
# deals: 102,000 decisions). Alone, the fit wins 13.4% of deals where the hand
# heuristic wins 11.1% (200,000 deals of seed 5); as the playout of `mc` it wins more
# deals with four piles and with three (docs/research/calculation.md).
# Features of putting the turned card (rank r, needed in `soon` steps) on pile w:
#   0-2   an empty pile, r not a K: 1, soon, whether it is the last empty one
#   3     a K onto an empty pile         4      a K onto a K
#   5-6   a K onto another card: 1, the pile's height
#   7-10  r needed sooner than the top (or the same rank): the steps between them,
#         whether a foundation takes the top right after r, the top is a K, height
#   11-17 r covers a card needed sooner: 1, the steps between them, height, copies
#         of the top's rank unseen, other tops of that rank, whether the top is the
#         pile's soonest card, cards in the pile needed sooner than r
#   18-20 (r needed sooner) the top is r's rank; a K top times the Ks unseen; soon
#   21-22 (r covers) soon; the top's soon
#   23    an empty pile, r not a K: the Ks unseen
#   24    (r needed sooner) a foundation takes the top right after r and the top is a K
#   25-26 the squared steps between them (capped at 13, over 13), in either case
#   27-28 copies of r unseen, in either case
#   29    (r needed sooner) the top covers a card needed sooner than the top
#   30-31 the empty piles, in either case
# ---------------------------------------------------------------------------------
N_FEATURES = 32
HAND_PLACEMENT = np.zeros(N_FEATURES)
# fmt: off
HAND_PLACEMENT[:9] = [30.6, 0.0522, 0.649, 0.245, 0.927, 100, 1, 0.273, -9.56]
HAND_PLACEMENT[[11, 12, 13, 14, 15, 16]] = [30.2, 0.712, 0.266, -0.474, -1.55, -0.365]
PLACEMENT_WEIGHTS = np.array([
    -0.1664, 0.0401, 1.1174, -0.4274, 0.1051, 0.1147, 0.6612, 0.1034,
    -0.5121, 0.5255, -0.0810, 0.1503, -0.0336, -0.0676, -0.4533, -0.4474,
    0.0235, 0.3122, -0.4971, 0.1129, 0.0526, -0.0361, -0.0810, 0.3415,
    -0.5844, -0.1725, 0.7306, 0.1074, 0.5193, -0.0855, 0.3771, 0.4072,
])
# fmt: on


@njit(cache=True, inline="always")
def _pile_soon_nb(board, w, soon, card_soon):
    """(the fewest steps until any card of pile w is needed, how many of its cards are
    needed sooner than card_soon)."""
    soonest, sooner = NEVER, 0
    base = WASTE + PILE_CAP * w
    for i in range(board[HEIGHT + w]):
        soonest = min(soonest, soon[board[base + i]])
        sooner += soon[board[base + i]] < card_soon
    return soonest, sooner


@njit(cache=True, inline="always")
def placement_features_nb(board, w, rank, n_empty, followers, soon, unseen, tops, f):
    """f[:N_FEATURES]: the features above of the turned card (of `rank`) on pile w;
    the arguments as placement_cost_nb takes them."""
    f[:] = 0.0
    height = board[HEIGHT + w]
    card_soon = soon[rank]
    if height == 0:
        if rank == 13:
            f[3] = 1
        else:
            f[0], f[1], f[2], f[23] = 1, card_soon, n_empty == 1, unseen[13]
        return
    top = top_rank_nb(board, w)
    if rank == 13:
        if top == 13:
            f[4] = 1
        else:
            f[5], f[6] = 1, height
        return
    top_soon = soon[top]
    if top_soon > card_soon or top == rank:
        chain = (followers >> top) & 1
        f[7], f[8], f[9], f[10] = top_soon - card_soon, chain, top == 13, height
        f[18], f[19], f[20] = top == rank, (top == 13) * unseen[13], card_soon
        f[24], f[25] = chain * (top == 13), min(top_soon - card_soon, 13) ** 2 / 13.0
        f[27], f[30] = unseen[rank], n_empty
        f[29] = height > 1 and soon[board[WASTE + PILE_CAP * w + height - 2]] < top_soon
        return
    soonest, sooner = _pile_soon_nb(board, w, soon, card_soon)
    f[11], f[12], f[13], f[14] = 1, card_soon - top_soon, height, unseen[top]
    f[15], f[16], f[17] = tops[top] - 1, soonest == top_soon, sooner
    f[21], f[22], f[26] = card_soon, top_soon, min(card_soon - top_soon, 13) ** 2 / 13.0
    f[28], f[31] = unseen[rank], n_empty


@njit(cache=True, inline="always")
def fitted_cost_nb(board, w, rank, n_empty, followers, soon, unseen, tops, p):
    """features . p of placement_features_nb, summing only the features of the case
    at hand (the playout's hot path; a test holds the two to the same values)."""
    height = board[HEIGHT + w]
    card_soon = soon[rank]
    if height == 0:
        if rank == 13:
            return p[3]
        return p[0] + p[1] * card_soon + p[2] * (n_empty == 1) + p[23] * unseen[13]
    top = top_rank_nb(board, w)
    if rank == 13:
        return p[4] if top == 13 else p[5] + p[6] * height
    top_soon = soon[top]
    if top_soon > card_soon or top == rank:
        chain = (followers >> top) & 1
        steps = top_soon - card_soon
        king = top == 13
        cost = p[7] * steps + p[8] * chain + p[9] * king + p[10] * height + p[18] * (top == rank)
        cost += p[19] * king * unseen[13] + p[20] * card_soon + p[24] * chain * king
        cost += p[27] * unseen[rank] + p[30] * n_empty
        if height > 1 and soon[board[WASTE + PILE_CAP * w + height - 2]] < top_soon:
            cost += p[29]
        return cost + p[25] * min(steps, 13) ** 2 / 13.0
    soonest, sooner = _pile_soon_nb(board, w, soon, card_soon)
    steps = card_soon - top_soon
    cost = p[11] + p[12] * steps + p[13] * height + p[14] * unseen[top] + p[15] * (tops[top] - 1)
    cost += p[16] * (soonest == top_soon) + p[17] * sooner + p[21] * card_soon + p[22] * top_soon
    cost += p[28] * unseen[rank] + p[31] * n_empty
    return cost + p[26] * min(steps, 13) ** 2 / 13.0


@njit_no_refcounts
def pile_features_nb(board, soon, unseen, tops, features):
    """features[w]: placement_features_nb of the turned card on each pile w, with
    soon and unseen filled (fill_soon_nb, count_unseen_nb) and tops as scratch."""
    rank = board[STOCK + board[POS]]
    n_empty = count_tops_nb(board, tops)
    follow = followers_nb(board, rank)
    for w in range(board[NWASTE]):
        placement_features_nb(board, w, rank, n_empty, follow, soon, unseen, tops, features[w])


@njit_no_refcounts
def fitted_playout_nb(board, placement, work):
    """playout_nb with the turned card placed by the fitted cost (foundation moves as
    the hand heuristic makes them); the score."""
    return playout_line_nb(board, PLAYOUT_DEFAULTS, board[:0], 0, work, placement)[0]


# ---------------------------------------------------------------------------------
# The exact solver.
# ---------------------------------------------------------------------------------


@njit(cache=True)
def _pile_hash_nb(board, w):
    """A hash of pile w that leaves out the kings at its bottom (position_key_nb)."""
    base = WASTE + PILE_CAP * w
    height = board[HEIGHT + w]
    bottom = 0
    while bottom < height and board[base + bottom] == 13:
        bottom += 1
    h = 0
    for i in range(bottom, height):
        h ^= _PILE_KEY[i - bottom, board[base + i]]
    return h


@njit(cache=True)
def position_key_nb(board):
    """A hash of the position that ignores the order of the waste piles and the kings
    lying at the bottom of a pile.

    Such kings block nothing, and a foundation waiting for a king takes no other card,
    so they can always stay until every other card is up: whether a position can be
    won does not depend on them, and positions that differ only in them may share what
    the lost table says. (The stock position and the foundation counts fix how many
    kings the piles hold, so equal keys never mix up positions with different cards.)
    """
    total = 0
    for w in range(board[NWASTE]):
        h = _pile_hash_nb(board, w)
        mixed = 0
        for byte in range(8):
            mixed ^= _BYTE_KEY[byte, (h >> (8 * byte)) & 255]
        total += mixed
    key = total ^ _POS_KEY[board[POS]]
    for k in range(4):
        key ^= _COUNT_KEY[k, board[FCOUNT + k]]
    return key


@njit(cache=True)
def deadlocked_nb(board):
    """True when the waste piles already make a win impossible.

    A rank that only one foundation still needs has one copy left, and that card
    must go to that foundation. Among such cards lying on waste piles, a card can
    leave only after those above it on its pile, and only after the cards its
    foundation takes first. If these two orders together form a cycle, no line of
    play wins. Other cards only add constraints, so leaving them out keeps the test
    sound; the stock cards can still go anywhere and add none.
    """
    return deadlocked_in_nb(board, np.empty(14 + 4 + MAX_WASTES, np.int64))


@njit(cache=True)
def deadlocked_in_nb(board, scratch):
    """deadlocked_nb working in scratch (room for 14 + 4 + MAX_WASTES int64), for
    callers in a loop."""
    owner, waiting, cursor = scratch[:14], scratch[14:18], scratch[18:]
    owner[:] = -1
    for rank in range(1, 14):
        for k in range(4):
            if NEED_INDEX[k, rank] >= board[FCOUNT + k]:
                owner[rank] = k if owner[rank] == -1 else -2
    # Cards of single-owner ranks on each pile, top first, and how many per foundation.
    waiting[:] = 0
    for w in range(board[NWASTE]):
        cursor[w] = board[HEIGHT + w] - 1
        base = WASTE + PILE_CAP * w
        for h in range(board[HEIGHT + w]):
            k = owner[board[base + h]]
            if k >= 0:
                waiting[k] += 1
    left = waiting.sum()
    progress = True
    while left > 0 and progress:
        progress = False
        for w in range(board[NWASTE]):
            base = WASTE + PILE_CAP * w
            while cursor[w] >= 0 and owner[board[base + cursor[w]]] < 0:
                cursor[w] -= 1
            if cursor[w] < 0:
                continue
            rank = board[base + cursor[w]]
            k = owner[rank]
            if _first_waiting_nb(board, owner, cursor, k) == rank:
                cursor[w] -= 1
                left -= 1
                progress = True
    return left > 0


@njit(cache=True)
def _first_waiting_nb(board, owner, cursor, k):
    """The rank foundation k takes first among its single-owner cards still on piles
    (at or under each pile's cursor)."""
    best, best_index = 0, NEVER
    for w in range(board[NWASTE]):
        base = WASTE + PILE_CAP * w
        for h in range(cursor[w] + 1):
            rank = board[base + h]
            if owner[rank] == k and NEED_INDEX[k, rank] < best_index:
                best, best_index = rank, NEED_INDEX[k, rank]
    return best


# ---------------------------------------------------------------------------------
# The relaxed game: a sound test that a position is lost.
#
# Relax the rules by letting every card still in the stock (the turned card
# included) go onto a foundation whenever one needs it, in any order, without ever
# lying on a waste pile: a *spare*. The waste piles keep their cards and their order.
# Any winning line of the real game is a winning line of the relaxed one (a stock
# card that the line parks on a pile and plays later is simply played as a spare at
# that moment; the cards on the piles now leave in the same order), so a position
# whose relaxed game is lost is lost. The relaxed position is only the foundation
# counts and the pile heights (the pile contents never change, the spares of rank r
# are the copies of r still owed to foundations minus those on piles), so a small
# depth-first search with a table of failed positions decides it; it gives up (and
# then condemns nothing) after RELAXED_BUDGET positions.
#
# Per search depth d, the arrays hold:
#     count[d, 0..3]   cards on F1..F4
#     height[d, 0..7]  cards on waste piles 1..8
#     piled[d, r]      copies of rank r on the piles
#     owed[d, r]       foundations that still need rank r (= copies of r not yet up)
# so spares of rank r = owed - piled.
# ---------------------------------------------------------------------------------
RELAXED_BUDGET = 25
RELAXED_TABLE_BITS = 12


@njit(cache=True)
def new_relaxed_scratch_nb():
    """Work space for relaxed_lost_nb: per-depth arrays, move lists and a table."""
    depth = 53
    ints = np.zeros((4, depth, 14), np.int64)  # count, height, piled, owed
    moves = np.zeros((depth, 2 * MAX_BRANCH), np.int64)
    keys, stamps = new_stamped_table_nb(RELAXED_TABLE_BITS)
    calls = np.zeros(1, np.int64)  # one table stamp per call
    return ints, moves, keys, stamps, calls


@njit(cache=True)
def _relaxed_key_nb(count, height, n_wastes):
    key = np.int64(0)
    for k in range(4):
        key = key * 16 + count[k]
    for w in range(n_wastes):
        key = key * 64 + height[w]
    return key * 2654435761 + 1  # spread the packed value; 0 stays free


@njit(cache=True)
def _relaxed_step_nb(board, count, height, piled, owed, k, w):
    """Foundation k takes its next rank: from the top of pile w, or a spare (w < 0)."""
    rank = SEQUENCE[k, count[k]]
    count[k] += 1
    owed[rank] -= 1
    if w >= 0:
        height[w] -= 1
        piled[rank] -= 1


@njit(cache=True)
def _relaxed_forced_nb(board, count, height, piled, owed):
    """Make the moves that never spoil a relaxed win; return True when the piles are
    empty (the relaxed game is won: the spares then fill every foundation).

    - a spare to foundation k when no pile holds its rank r: every foundation still
      owed r gets a spare some time, and taking it now only lets k go on sooner;
    - the top card y of a pile to a foundation k that needs its rank r now, when y
      is the only copy of r on the piles or k the only foundation owed r: take any
      relaxed win in which k gets r otherwise (a spare, as y is the only piled copy)
      and y goes to k' later; giving y to k now and the spare to k' at y's old time
      is a relaxed win too (y leaves sooner, which only frees the cards under it).
    """
    n_wastes = board[NWASTE]
    moved = True
    while moved:
        moved = False
        for k in range(4):
            while count[k] < 13 and piled[SEQUENCE[k, count[k]]] == 0:
                _relaxed_step_nb(board, count, height, piled, owed, k, -1)
                moved = True
        for w in range(n_wastes):
            while height[w] > 0:
                rank = board[WASTE + PILE_CAP * w + height[w] - 1]
                target = -1
                if piled[rank] == 1 or owed[rank] == 1:
                    for k in range(4):
                        if count[k] < 13 and SEQUENCE[k, count[k]] == rank:
                            target = k
                            break
                if target < 0:
                    break
                _relaxed_step_nb(board, count, height, piled, owed, target, w)
                moved = True
    for w in range(n_wastes):  # noqa: SIM110 (a plain loop compiles to the tightest code)
        if height[w] > 0:
            return False
    return True


@njit(cache=True)
def _relaxed_moves_nb(board, count, height, piled, owed, out):
    """The choices left after the forced moves, written as 8 * (w + 1) + k (pile w's
    top to foundation k) or k (a spare to k); return how many.

    A spare never goes to a foundation whose rank lies on a pile top: giving that top
    to the foundation instead, and the spare to wherever the top went, wins as well.
    """
    n = 0
    n_wastes = board[NWASTE]
    for k in range(4):
        if count[k] == 13:
            continue
        rank = SEQUENCE[k, count[k]]
        on_top = False
        for w in range(n_wastes):
            if height[w] > 0 and board[WASTE + PILE_CAP * w + height[w] - 1] == rank:
                on_top = True
                out[n] = 8 * (w + 1) + k
                n += 1
        if not on_top and owed[rank] > piled[rank]:
            out[n] = k
            n += 1
    return n


@njit(cache=True)
def relaxed_lost_nb(board, scratch, budget=RELAXED_BUDGET):
    """True when the relaxed game (above) of board is lost, so board is lost."""
    ints, moves, keys, stamps, calls = scratch
    count, height, piled, owed = ints[0], ints[1], ints[2], ints[3]
    n_wastes = board[NWASTE]
    count[0, :] = 0
    height[0, :] = 0
    piled[0, :] = 0
    owed[0, :] = 0
    for k in range(4):
        count[0, k] = board[FCOUNT + k]
        for i in range(board[FCOUNT + k], 13):
            owed[0, SEQUENCE[k, i]] += 1
    for w in range(n_wastes):
        height[0, w] = board[HEIGHT + w]
        for h in range(board[HEIGHT + w]):
            piled[0, board[WASTE + PILE_CAP * w + h]] += 1
    calls[0] += 1
    if calls[0] >= 1 << 30:
        stamps[:] = 0
        calls[0] = 1
    stamp = calls[0]
    n_moves = np.zeros(53, np.int64)
    tried = np.zeros(53, np.int64)
    if _relaxed_forced_nb(board, count[0], height[0], piled[0], owed[0]):
        return False
    n_moves[0] = _relaxed_moves_nb(board, count[0], height[0], piled[0], owed[0], moves[0])
    depth, nodes = 0, 1
    while True:
        if tried[depth] < n_moves[depth]:
            move = moves[depth, tried[depth]]
            tried[depth] += 1
            d = depth + 1
            count[d, :] = count[depth]
            height[d, :] = height[depth]
            piled[d, :] = piled[depth]
            owed[d, :] = owed[depth]
            _relaxed_step_nb(board, count[d], height[d], piled[d], owed[d], move % 8, move // 8 - 1)
            if _relaxed_forced_nb(board, count[d], height[d], piled[d], owed[d]):
                return False
            key = _relaxed_key_nb(count[d], height[d], n_wastes)
            if stamped_has_nb(keys, stamps, stamp, key):
                continue
            nodes += 1
            if nodes > budget:
                return False
            depth = d
            n_moves[depth] = _relaxed_moves_nb(
                board, count[d], height[d], piled[d], owed[d], moves[d]
            )
            tried[depth] = 0
        else:
            if depth == 0:
                return True
            stamped_claim_nb(
                keys, stamps, stamp, _relaxed_key_nb(count[depth], height[depth], n_wastes)
            )
            depth -= 1


@njit(cache=True)
def safe_foundation_move_nb(board):
    """A foundation move that cannot spoil a win, or -1.

    A card whose rank one foundation needs now and no other foundation needs later
    must end on that foundation in any winning line: putting it there at once only
    leaves more choice (the cards it would have covered or been covered by keep their
    order), so the search need not try anything else.
    """
    for w in range(board[NWASTE]):
        top = top_rank_nb(board, w)
        if top == 0:
            continue
        for k in range(4):
            if board[NEED + k] == top and not wanted_later_elsewhere_nb(board, top, k):
                return ACT_FROM_WASTE + 4 * w + k
    if board[POS] < STOCK_SIZE:
        rank = board[STOCK + board[POS]]
        for k in range(4):
            if board[NEED + k] == rank and not wanted_later_elsewhere_nb(board, rank, k):
                return k
    return -1


@njit(cache=True)
def safe_choice_nb(board, legal, n_legal):
    """Index in legal of the move safe_foundation_move_nb finds, or -1."""
    safe = safe_foundation_move_nb(board)
    for i in range(n_legal):
        if safe >= 0 and legal[i] == safe:
            return i
    return -1


@njit(cache=True)
def _same_pile_nb(board, v, w):
    h = board[HEIGHT + v]
    if board[HEIGHT + w] != h:
        return False
    a = WASTE + PILE_CAP * v
    b = WASTE + PILE_CAP * w
    for i in range(h):  # noqa: SIM110 (a plain loop compiles to the tightest code)
        if board[a + i] != board[b + i]:
            return False
    return True


SCORE_SHIFT = 24  # a move's value: its playout's score << SCORE_SHIFT, plus a tie-break
FOUNDATION_TIE = 1 << 23  # the tie-break of a foundation move: above every pile's
PILE_TIE = 1 << 22  # a pile's tie-break: PILE_TIE - its placement cost in thousandths


@njit_no_refcounts
def search_moves_nb(board, weights, out, trial, values, work, known=-1):
    """The actions the solver tries at board, best first; return (how many, whether
    the first one's playout wins).

    values[i] gets the value of out[i]: its playout's score, and among equal scores
    foundation moves first, then the piles the placement heuristic likes best (about
    two branch points in three have a tie at the top). work: from new_work_nb.
    `known`, unless -1, is the score of the playout from board itself: a playout
    depends on nothing but the position it starts from, so the position after its
    first action scores the same and is not played out again."""
    first = playout_first_action_nb(board, weights, work) if known >= 0 else -1
    safe = safe_foundation_move_nb(board)
    if safe >= 0:
        out[0] = safe
        score = _playout_score_nb(board, safe, weights, trial, known, first, work)
        values[0] = np.int64(score) << SCORE_SHIFT  # int16 in pure Python: widen first
        return 1, score == 52
    n = solver_actions_nb(board, out)
    ties = work[TIES_ROW]
    _tie_breaks_nb(board, weights, out, n, ties, work)
    for i in range(n):
        score = _playout_score_nb(board, out[i], weights, trial, known, first, work)
        insert_by_value_nb(out, values, i, out[i], (np.int64(score) << SCORE_SHIFT) + ties[i])
    return n, n > 0 and values[0] >> SCORE_SHIFT == 52


@njit_no_refcounts
def _playout_score_nb(board, action, weights, trial, known, first, work):
    """The playout score after action (known, when action is the playout's first)."""
    if action == first:
        return known
    copy_board_nb(board, trial)
    apply_nb(trial, action)
    return playout_nb(trial, weights, work)


@njit_no_refcounts
def playout_first_action_nb(board, weights, work):
    """The first action playout_line_nb takes at board, or -1 when it takes none."""
    for w in range(board[NWASTE]):
        top = top_rank_nb(board, w)
        k = choose_foundation_nb(board, top, weights) if top > 0 else -1
        if k >= 0:
            return ACT_FROM_WASTE + 4 * w + k
    pos = board[POS]
    if pos >= STOCK_SIZE:
        return -1
    k = choose_foundation_nb(board, board[STOCK + pos], weights)
    if k >= 0:
        return k
    soon, unseen, tops = work[SOON_ROW], work[UNSEEN_ROW], work[TOPS_ROW]
    fill_soon_nb(board, soon)
    count_unseen_nb(board, unseen)
    return ACT_TO_WASTE + heuristic_waste_nb(board, soon, unseen, tops, weights)


@njit(cache=True)
def solver_actions_nb(board, out):
    """Write the legal actions into out (one pile for piles holding the same ranks):
    waste tops to foundations, then the turned card to foundations, then to piles;
    return how many."""
    n = 0
    for w in range(board[NWASTE]):
        top = top_rank_nb(board, w)
        if top == 0:
            continue
        for k in range(4):
            if board[NEED + k] == top:
                out[n] = ACT_FROM_WASTE + 4 * w + k
                n += 1
    if board[POS] >= STOCK_SIZE:
        return n
    return _turned_card_actions_nb(board, out, n)


@njit(cache=True)
def _turned_card_actions_nb(board, out, n):
    """Write the turned card's actions into out from n: each foundation that needs it,
    then each pile of distinct content; return the next index."""
    rank = board[STOCK + board[POS]]
    for k in range(4):
        if board[NEED + k] == rank:
            out[n] = k
            n += 1
    for w in range(board[NWASTE]):
        duplicate = False
        for v in range(w):
            if _same_pile_nb(board, v, w):
                duplicate = True
                break
        if not duplicate:
            out[n] = ACT_TO_WASTE + w
            n += 1
    return n


@njit_no_refcounts
def _tie_breaks_nb(board, weights, out, n, ties, work):
    """ties[i]: how out[i] ranks among moves of equal playout score (SCORE_SHIFT)."""
    ties[:n] = FOUNDATION_TIE
    pos = board[POS]
    if pos >= STOCK_SIZE:
        return
    rank = board[STOCK + pos]
    soon, unseen, tops = work[SOON_ROW], work[UNSEEN_ROW], work[TOPS_ROW]
    fill_soon_nb(board, soon)
    count_unseen_nb(board, unseen)
    n_empty = count_tops_nb(board, tops)
    followers = followers_nb(board, rank)
    for i in range(n):
        if ACT_TO_WASTE <= out[i] < ACT_FROM_WASTE:
            w = out[i] - ACT_TO_WASTE
            cost = placement_cost_nb(
                board, w, rank, n_empty, followers, soon, unseen, tops, weights
            )
            ties[i] = PILE_TIE - max(min(np.int64(cost * 1000), PILE_TIE // 2), -PILE_TIE // 2)


@njit(cache=True)
def solve_nb(
    board, budget, keys, stamps, stamp, winning, max_deviation=1 << 30, relaxed=0, explored=None
):
    """Search board (whose whole stock order is known) for a winning line.

    Returns (verdict, nodes, length): verdict OUTCOME_WON, with a winning line of `length`
    actions written into `winning` (to the end of the deal); OUTCOME_LOST when no line wins;
    OUTCOME_UNKNOWN when more than `budget` positions would have to be expanded. At every
    position the actions are tried in the order of their playout scores, and a playout
    that wins ends the search: its line wins. The board is left as it was given.
    `keys`/`stamps` are a stamped table (policies.search); entries of other stamps are
    ignored, so one table serves many searches. It holds positions proved lost.

    With max_deviation, only lines whose actions' ranks in those orders (0 = best)
    sum to at most max_deviation are tried (limited discrepancy search): such a
    search finds wins near the playout's line quickly, and never reports OUTCOME_LOST.
    `explored` (from new_explored_table_nb, same stamp) then remembers, per position,
    the largest allowance of further deviations its subtree was searched with in
    vain, so that later visits with no larger allowance (from another path, or in the
    next search with a larger max_deviation) are skipped.

    With relaxed > 0, positions whose relaxed game is lost (relaxed_lost_nb, given
    `relaxed` positions to decide it) are pruned too.
    """
    weights = PLAYOUT_DEFAULTS
    complete = max_deviation >= 1 << 30
    deviation = np.zeros(MAX_DEPTH, np.int64)
    moves = np.empty((MAX_DEPTH, MAX_BRANCH), np.int16)
    values = np.empty((MAX_DEPTH, MAX_BRANCH), np.int64)  # values[d, i]: of moves[d, i]
    line = np.empty(MAX_DEPTH, np.int16)
    count = np.zeros(MAX_DEPTH, np.int64)
    tried = np.zeros(MAX_DEPTH, np.int64)
    node_keys = np.zeros(MAX_DEPTH, np.int64)
    trial = np.empty(STATE_SIZE, np.int16)
    work = new_work_nb()
    scratch = new_relaxed_scratch_nb()
    remember = explored is not None and not complete
    if score_nb(board) == 52:
        return OUTCOME_WON, 1, 0
    nodes = 1
    depth = 0
    node_keys[0] = position_key_nb(board)
    count[0], wins = search_moves_nb(board, weights, moves[0], trial, values[0], work)
    if wins:
        return OUTCOME_WON, nodes, _winning_line_nb(board, line, 0, moves[0, 0], trial, winning)
    tried[0] = 0
    while True:
        if tried[depth] < count[depth] and deviation[depth] + tried[depth] <= max_deviation:
            action = moves[depth, tried[depth]]
            deviation[depth + 1] = deviation[depth] + tried[depth]
            tried[depth] += 1
            apply_nb(board, action)
            line[depth] = action
            depth += 1
            key = position_key_nb(board)
            if stamped_has_nb(keys, stamps, stamp, key) or (
                remember
                and _explored_allowance_nb(explored, stamp, key) >= max_deviation - deviation[depth]
            ):
                depth -= 1
                undo_nb(board, line[depth])
                continue
            if deadlocked_nb(board) or (relaxed > 0 and relaxed_lost_nb(board, scratch, relaxed)):
                stamped_claim_nb(keys, stamps, stamp, key)  # proved lost: never test it again
                depth -= 1
                undo_nb(board, line[depth])
                continue
            nodes += 1
            if nodes > budget:
                _unwind_nb(board, line, depth)
                return OUTCOME_UNKNOWN, nodes, 0
            node_keys[depth] = key
            known = values[depth - 1, tried[depth - 1] - 1] >> SCORE_SHIFT
            count[depth], wins = search_moves_nb(
                board, weights, moves[depth], trial, values[depth], work, known
            )
            if wins:
                length = _winning_line_nb(board, line, depth, moves[depth, 0], trial, winning)
                _unwind_nb(board, line, depth)
                return OUTCOME_WON, nodes, length
            tried[depth] = 0
        else:
            if complete:
                stamped_claim_nb(keys, stamps, stamp, node_keys[depth])
            elif remember:
                allowance = max_deviation - deviation[depth]
                _explored_add_nb(explored, stamp, node_keys[depth], allowance)
            if depth == 0:
                return OUTCOME_LOST if complete else OUTCOME_UNKNOWN, nodes, 0
            depth -= 1
            undo_nb(board, line[depth])


@njit(cache=True)
def new_explored_table_nb(bits):
    """A table of (position key, allowance searched in vain) for solve_nb: a stamped
    table of 2**bits entries (policies.search), with an allowance beside each key."""
    keys, stamps = new_stamped_table_nb(bits)
    return keys, stamps, np.zeros(1 << bits, np.int32)


@njit(cache=True)
def _explored_allowance_nb(explored, stamp, key):
    """The allowance key's subtree was searched with in vain, or -1."""
    keys, stamps, allowances = explored
    slot = stamped_find_nb(keys, stamps, stamp, key)
    return allowances[slot] if slot >= 0 else -1


@njit(cache=True)
def _explored_add_nb(explored, stamp, key, allowance):
    """Record key's allowance (a later search of it only comes with a larger one)."""
    keys, stamps, allowances = explored
    allowances[stamped_claim_nb(keys, stamps, stamp, key)] = allowance


@njit(cache=True)
def _winning_line_nb(board, line, depth, action, trial, winning):
    """Write line[:depth], action and the playout after it into winning; its length."""
    winning[:depth] = line[:depth]
    winning[depth] = action
    trial[:] = board
    apply_nb(trial, action)
    return playout_line_nb(trial, PLAYOUT_DEFAULTS, winning, depth + 1, new_work_nb())[1]


@njit(cache=True)
def _unwind_nb(board, line, depth):
    while depth > 0:
        depth -= 1
        undo_nb(board, line[depth])


@njit(cache=True)
def oracle_search_nb(board, budget, keys, stamps, stamp, winning, relaxed=RELAXED_BUDGET):
    """solve_nb with ever more deviations from the playouts allowed, then complete;
    a beam search (beam_search_nb) looks for a win after the first BEAM_AFTER rounds,
    or sooner if they use up the budget.

    The rounds of solve_nb share `budget` positions; the beam has its own, with a
    width of beam_width_nb(budget). The positions returned count both."""
    explored = new_explored_table_nb(TABLE_BITS)
    used = beam_used = 0
    beamed = False
    for max_deviation in range(1, 7):
        if not beamed and (max_deviation > BEAM_AFTER or used >= budget):
            beamed = True
            verdict, beam_used, length = beam_search_nb(board, beam_width_nb(budget), winning)
            if verdict == OUTCOME_WON:
                return verdict, used + beam_used, length
        if used >= budget:
            return OUTCOME_UNKNOWN, used + beam_used, 0
        deviations = max_deviation if max_deviation < 6 else 1 << 30  # the last: complete
        verdict, nodes, length = solve_nb(
            board, budget - used, keys, stamps, stamp, winning, deviations, relaxed, explored
        )
        used += nodes
        if verdict != OUTCOME_UNKNOWN:
            return verdict, used + beam_used, length
    return OUTCOME_UNKNOWN, used + beam_used, 0


# ---------------------------------------------------------------------------------
# The beam search: a wide look for a win, one level per turned card.
#
# A level holds the `width` positions ranked best among the children of the level
# before (ties keep the order the children were made in: the better parent first, and
# a parent's foundations before its piles), ranked by the child's playout score.
# A child is the turned card put on a foundation that needs it or on a pile (one pile
# of each distinct content), after which every waste top that fits goes up (the
# playout's choice of foundation).
# So the beam never holds a card back on its pile nor chooses a foundation for a
# waste top: it only finds wins, and a win it finds is a line of legal actions. The
# children are not kept, only (parent slot, action, value) per child: the chosen ones
# are made again from their parents. Per level l, the beam keeps
#     kept_parent[l, i]   the slot of level l - 1 that position i came from
#     kept_action[l, i]   the turned card's action that made it
# so the winning line is read back to the root and played again.
# ---------------------------------------------------------------------------------
BEAM_AFTER = 3  # rounds of solve_nb before the beam: they win most deals at once
BEAM_NODES_PER_SLOT = 20  # a beam slot per 20 positions of budget: 5,000 at 100,000
BEAM_WIDTH_CAP = 20_000  # two levels of boards: 2 x 20,000 x 1.1 kB
BEAM_BRANCH = 4 + MAX_WASTES


@njit(cache=True)
def beam_width_nb(budget):
    return max(1, min(budget // BEAM_NODES_PER_SLOT, BEAM_WIDTH_CAP))


@njit(cache=True)
def _beam_step_nb(board, action, line, n):
    """Apply the turned card's action, then move the waste tops that fit (recorded in
    line from n when it has room); return the next index."""
    apply_nb(board, action)
    if n < line.shape[0]:
        line[n] = action
        n += 1
    return _play_waste_tops_nb(board, PLAYOUT_DEFAULTS, line, n)


@njit(cache=True)
def beam_search_nb(board, width, winning):
    """Look for a win of board with a beam `width` positions wide (above).

    Returns (OUTCOME_WON or OUTCOME_UNKNOWN, positions played out, length of the
    winning line written into winning). The board is left as it was given."""
    levels = STOCK_SIZE - board[POS]
    current = np.empty((width, STATE_SIZE), np.int16)
    following = np.empty((width, STATE_SIZE), np.int16)
    n_candidates = width * BEAM_BRANCH
    parent = np.empty(n_candidates, np.int32)
    action = np.empty(n_candidates, np.int16)
    value = np.empty(n_candidates, np.int64)
    kept_parent = np.empty((max(levels, 1), width), np.int32)
    kept_action = np.empty((max(levels, 1), width), np.int16)
    bits = 10
    while (1 << bits) < 2 * n_candidates:
        bits += 1
    keys, stamps = new_stamped_table_nb(bits)
    nothing = np.empty(0, np.int16)
    trial = np.empty(STATE_SIZE, np.int16)
    work = new_work_nb()
    out = np.empty(BEAM_BRANCH, np.int16)
    current[0] = board
    _play_waste_tops_nb(current[0], PLAYOUT_DEFAULTS, nothing, 0)
    n_current, positions = 1, 0
    for level in range(levels):
        n = 0
        for i in range(n_current):
            for j in range(_turned_card_actions_nb(current[i], out, 0)):
                trial[:] = current[i]
                _beam_step_nb(trial, out[j], nothing, 0)
                key = position_key_nb(trial)
                if stamped_has_nb(keys, stamps, level + 1, key):
                    continue
                stamped_claim_nb(keys, stamps, level + 1, key)
                if deadlocked_nb(trial):
                    continue
                positions += 1
                score = playout_nb(trial, PLAYOUT_DEFAULTS, work)
                if score == 52:
                    length = _beam_line_nb(
                        board, kept_parent, kept_action, level, i, out[j], winning
                    )
                    return OUTCOME_WON, positions, length
                parent[n], action[n], value[n] = i, out[j], score
                n += 1
        if n == 0:
            break
        order = np.argsort(-value[:n], kind="mergesort")  # stable: ties keep their order
        n_current = min(n, width)
        for r in range(n_current):
            q = order[r]
            kept_parent[level, r], kept_action[level, r] = parent[q], action[q]
            following[r] = current[parent[q]]
            _beam_step_nb(following[r], action[q], nothing, 0)
        current, following = following, current
    return OUTCOME_UNKNOWN, positions, 0


@njit(cache=True)
def _beam_line_nb(board, kept_parent, kept_action, level, slot, last, winning):
    """Write the beam's winning line into winning: the actions from board to the
    child `last` of position `slot` at `level`, then that child's playout; its length."""
    actions = np.empty(level + 1, np.int16)
    actions[level] = last
    for back in range(level - 1, -1, -1):
        actions[back] = kept_action[back, slot]
        slot = kept_parent[back, slot]
    trial = board.copy()
    n = _play_waste_tops_nb(trial, PLAYOUT_DEFAULTS, winning, 0)
    for a in actions:
        n = _beam_step_nb(trial, a, winning, n)
    return playout_line_nb(trial, PLAYOUT_DEFAULTS, winning, n, new_work_nb())[1]


# ---------------------------------------------------------------------------------
# Monte Carlo: what a player can do without seeing the stock.
# ---------------------------------------------------------------------------------
BATCH = 16  # stock orders drawn between two looks at the running means
TIE = 0.005  # standard error of a mean difference below which two actions are alike
KNOWN_BUDGET = 20000  # positions the solver may expand on a position with no hidden cards


@njit(cache=True)
def unseen_ranks_nb(board, out):
    """The ranks still in the stock under the turned card, sorted (a multiset: the
    order they lie in is not looked at); return how many."""
    n = 0
    for rank in range(1, 14):
        for i in range(board[POS] + 1, STOCK_SIZE):
            if board[STOCK + i] == rank:
                out[n] = rank
                n += 1
    return n


@njit(cache=True)
def distinct_actions_nb(board, legal, n_legal, out):
    """Legal actions with one representative for waste piles holding the same ranks."""
    n = 0
    for i in range(n_legal):
        action = legal[i]
        if ACT_TO_WASTE <= action < ACT_FROM_WASTE:
            w = action - ACT_TO_WASTE
            duplicate = False
            for v in range(w):
                if _same_pile_nb(board, v, w):
                    duplicate = True
                    break
            if duplicate:
                continue
        out[n] = i
        n += 1
    return n


@njit(cache=True)
def foundation_moves_only_nb(legal, candidates, n):
    """Keep the candidates that move a card onto a foundation, if there are any."""
    m = 0
    for c in range(n):
        action = legal[candidates[c]]
        if action < ACT_TO_WASTE or action >= ACT_FROM_WASTE:
            candidates[m] = candidates[c]
            m += 1
    return m if m > 0 else n


@njit(cache=True)
def known_choice_nb(board, legal, candidates, n_cand):
    """With no hidden card left, the candidate whose exact search wins (else the one
    whose playout scores best)."""
    keys, stamps = new_stamped_table_nb(14)
    winning = np.empty(MAX_DEPTH, np.int16)
    trial = np.empty(STATE_SIZE, np.int16)
    work = new_work_nb()
    best, best_score = 0, -1
    for c in range(n_cand):
        trial[:] = board
        apply_nb(trial, legal[candidates[c]])
        verdict, _, _ = solve_nb(trial, KNOWN_BUDGET, keys, stamps, c + 1, winning)
        if verdict == OUTCOME_WON:
            return candidates[c]
        score = playout_nb(trial, PLAYOUT_DEFAULTS, work)
        if score > best_score:
            best, best_score = c, score
    return candidates[best]


@njit(cache=True)
def monte_carlo_choice_nb(
    state, legal, n_legal, samples, score_weight, confidence, stream, placement, means
):
    """Index in legal of the action with the best mean playout over random stock orders.

    A provably safe foundation move is made without search. With at most one hidden
    card the position is known and the exact solver decides. Else, where some card can
    go onto a foundation only foundation moves are weighed (holding cards back is not
    tried), and the candidates are played out on common random orders of the unseen
    cards, drawn from `stream` in batches: an action is worth 1 per win plus
    score_weight * (score / 52)**3 (the cube makes near-wins count most, which matters
    where wins are rare). After each batch an action whose mean trails the leader's by
    more than `confidence` standard errors of the paired difference drops out, and so
    does one whose results are so close to the leader's that the choice cannot matter.
    The race ends with one action left or after `samples` orders. Its playouts place
    cards by the placement cost `placement` (PLACEMENT_WEIGHTS for the policy), and
    means[i] gets the mean value of legal[i] where it raced (the others are left).
    """
    board = np.empty(STATE_SIZE, np.int16)
    board_from_state_nb(state, board)
    safe = safe_choice_nb(board, legal, n_legal)
    if safe >= 0:
        return safe
    candidates = np.empty(MAX_BRANCH, np.int64)
    n_cand = distinct_actions_nb(board, legal, n_legal, candidates)
    unseen = np.empty(STOCK_SIZE, np.int16)
    n_unseen = unseen_ranks_nb(board, unseen)
    if n_unseen <= 1 and n_cand > 1:
        return known_choice_nb(board, legal, candidates, n_cand)
    n_cand = foundation_moves_only_nb(legal, candidates, n_cand)
    if n_cand == 1:
        return candidates[0]
    return candidates[
        race_nb(
            board,
            legal,
            candidates,
            n_cand,
            unseen[:n_unseen],
            samples,
            score_weight,
            confidence,
            stream,
            placement,
            means,
        )
    ]


@njit(cache=True)
def race_nb(
    board,
    legal,
    candidates,
    n_cand,
    unseen,
    samples,
    score_weight,
    confidence,
    stream,
    placement,
    means,
):
    """The racing of monte_carlo_choice_nb, its playouts placing cards by the placement
    cost `placement`; returns the winner's index in candidates, and leaves in
    means[candidates[c]] candidate c's mean value over the orders it was played out on."""
    first = board[POS] + 1
    order = unseen.copy()
    total = np.zeros(n_cand)
    products = np.zeros((n_cand, n_cand))  # sums of value products over common orders
    value = np.zeros(n_cand)
    alive = np.ones(n_cand, np.bool_)
    played = np.zeros(n_cand)
    n_alive = n_cand
    scratch = (np.empty(STATE_SIZE, np.int16), new_work_nb())
    n = 0
    while n < samples and n_alive > 1:
        for _ in range(min(BATCH, samples - n)):
            order[:] = unseen
            rng.shuffle_nb(stream, order)
            board[STOCK + first : STOCK + first + order.shape[0]] = order
            _play_order_nb(board, legal, candidates, alive, score_weight, placement, scratch, value)
            _add_values_nb(alive, value, total, products)
            played += alive
            n += 1
        leader = _leader_nb(total, alive)
        for c in range(n_cand):
            if alive[c] and c != leader:
                a, b = min(c, leader), max(c, leader)
                gap = (total[leader] - total[c]) / n
                spread = (products[leader, leader] - 2 * products[a, b] + products[c, c]) / n
                error = np.sqrt(max(spread - gap * gap, 0.0) / n)
                if gap > confidence * error or error < TIE:
                    alive[c] = False
                    n_alive -= 1
    for c in range(n_cand):
        means[candidates[c]] = total[c] / max(played[c], 1)
    return _leader_nb(total, alive)


@njit_no_refcounts
def _play_order_nb(board, legal, candidates, alive, score_weight, placement, scratch, value):
    """value[c]: the worth of candidate c still alive, played out on board's stock
    order with the placement cost `placement` (1 for a win plus
    score_weight * (score / 52)**3). scratch: (trial board, work)."""
    trial, work = scratch
    for c in range(alive.shape[0]):
        if alive[c]:
            copy_board_nb(board, trial)
            apply_nb(trial, legal[candidates[c]])
            score = fitted_playout_nb(trial, placement, work)
            value[c] = score_weight * (score / 52.0) ** 3 + (score == 52)


@njit_no_refcounts
def _add_values_nb(alive, value, total, products):
    """Add the values of the candidates alive to their totals, and their products
    (for the spread of each paired difference) to products."""
    for c in range(value.shape[0]):
        if alive[c]:
            total[c] += value[c]
            for d in range(c, value.shape[0]):
                if alive[d]:
                    products[c, d] += value[c] * value[d]


@njit(cache=True)
def _leader_nb(total, alive):
    leader = -1
    for c in range(total.shape[0]):
        if alive[c] and (leader < 0 or total[c] > total[leader]):
            leader = c
    return leader


@njit(cache=True)
def playout_deals_nb(seed, first, n, wastes, weights, scores):
    """Scores of the playout heuristic alone on deals first .. first + n - 1."""
    state = np.empty(STATE_SIZE, np.int16)
    board = np.empty(STATE_SIZE, np.int16)
    work = new_work_nb()
    for i in range(n):
        deal_nb(seed, first + i, wastes, state)
        board_from_state_nb(state, board)
        scores[i] = playout_nb(board, weights, work)


# ---------------------------------------------------------------------------------
# The oracle policy: search once per deal, then play the plan kept in the state.
# ---------------------------------------------------------------------------------
TABLE_BITS = 18


@njit(cache=True)
def oracle_choice_nb(state, legal, n_legal, budget):
    """Index in legal of the oracle's action.

    At its first decision of a deal it searches, sets the verdict in the state's
    scratch block (won, lost, or unknown when the budget runs out; engine.calc) and,
    on a win, stores the winning line as its plan, indexed by move number, so that
    later decisions only read it. Without a plan it plays the action whose playout on
    the true stock order scores best.
    """
    board = np.empty(STATE_SIZE, np.int16)
    board_from_state_nb(state, board)
    if state[SCRATCH_VERDICT] == VERDICT_PENDING:
        _plan_deal_nb(state, board, budget)
    done = state[MOVES]
    if state[SCRATCH_VERDICT] == OUTCOME_WON and done < state[SCRATCH_PLAN_LEN]:
        for i in range(n_legal):
            if legal[i] == state[SCRATCH_PLAN + done]:
                return i
    moves = np.empty(MAX_BRANCH, np.int16)
    trial = np.empty(STATE_SIZE, np.int16)
    values = np.empty(MAX_BRANCH, np.int64)
    search_moves_nb(board, PLAYOUT_DEFAULTS, moves, trial, values, new_work_nb())
    for i in range(n_legal):
        if legal[i] == moves[0]:
            return i
    return 0


@njit(cache=True)
def _plan_deal_nb(state, board, budget):
    keys, stamps = new_stamped_table_nb(TABLE_BITS)
    winning = np.empty(MAX_DEPTH, np.int16)
    found, _, length = oracle_search_nb(board, budget, keys, stamps, 1, winning)
    state[SCRATCH_VERDICT] = found
    if found == OUTCOME_WON:
        done = state[MOVES]
        length = min(length, PLAN_CAP - done)
        state[SCRATCH_PLAN + done : SCRATCH_PLAN + done + length] = winning[:length]
        state[SCRATCH_PLAN_LEN] = done + length


@njit(cache=True)
def rollout_choice_nb(state, legal, n_legal):
    """Index in legal of the playout heuristic's action in a real position."""
    board = np.empty(STATE_SIZE, np.int16)
    board_from_state_nb(state, board)
    line = np.empty(1, np.int16)
    playout_line_nb(board, PLAYOUT_DEFAULTS, line, 0, new_work_nb())
    for i in range(n_legal):
        if legal[i] == line[0]:
            return i
    return 0
