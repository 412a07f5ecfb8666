"""Built-in Jokers policies (compiled; see engine.jokers for state and actions)."""

import numpy as np
from numba import njit

from sim.engine import rng
from sim.engine.cards import JOKER
from sim.engine.jokers import (
    ACTION_STRIDE,
    CAP,
    COLS,
    CORE_SIZE,
    FOUND,
    HEIGHT,
    KIND_FOUNDATION,
    KIND_JOKERS,
    MAX_HEIGHT,
    N_ACTIONS,
    N_COLUMNS,
    OUTCOME_LOST,
    OUTCOME_UNKNOWN,
    OUTCOME_WON,
    PLAN_CAP,
    RESERVE,
    SCRATCH_NODES_HI,
    SCRATCH_NODES_LO,
    SCRATCH_PLAN,
    SCRATCH_PLAN_LEN,
    SCRATCH_PLAN_POS,
    SCRATCH_VERDICT,
    STALL,
    VERDICT_PENDING,
    is_red_nb,
    legal_actions_nb,
    move_cards_nb,
    moves_nb,
    rank_nb,
    score_nb,
    split_set_nb,
    top_card_nb,
)
from sim.policies.jokers import GREEDY_PARAMS, RANDOM_PARAMS, SOLVER_PARAMS
from sim.policies.registry import param_slots
from sim.policies.search import (
    insert_by_value_nb,
    new_seen_set_nb,
    seen_grown_nb,
    seen_insert_nb,
    zobrist_keys,
)

NOWHERE = 99  # depth of a needed card in a column that holds none


@njit(cache=True)
def is_settled_nb(state, column):
    """Whether the free card of a column already sits on the card it would be built on
    (one rank higher, other colour): moving it would uncover nothing new."""
    height = state[HEIGHT + column]
    if height < 2:
        return False
    card = state[COLS + MAX_HEIGHT * column + height - 1]
    under = state[COLS + MAX_HEIGHT * column + height - 2]
    if under >= JOKER:
        return False  # moving the card gives the joker back (J6)
    return rank_nb(under) == rank_nb(card) + 1 and is_red_nb(under) != is_red_nb(card)


@njit(cache=True)
def needed_depth_nb(state, column):
    """Cards above the shallowest card a foundation wants next, NOWHERE if none."""
    height = state[HEIGHT + column]
    for depth in range(height):
        card = state[COLS + MAX_HEIGHT * column + height - 1 - depth]
        if card < JOKER and state[FOUND + card % 4] == rank_nb(card) - 1:
            return depth
    return NOWHERE


@njit(cache=True)
def first_foundation_move_nb(legal, n_legal):
    for i in range(n_legal):
        if legal[i] % ACTION_STRIDE == KIND_FOUNDATION:
            return i
    return -1


(RANDOM_PATIENCE,) = param_slots(RANDOM_PARAMS, "patience")


@njit(cache=True)
def random_nb(state, legal, n_legal, params, stream):
    """The kernel of policy `random` (sim.policies.jokers)."""
    if state[STALL] >= params[RANDOM_PATIENCE]:
        return -1
    return rng.below_nb(stream, n_legal)


@njit(cache=True)
def spare_places_nb(state):
    """Reserve jokers and empty columns: each can take one card off a column."""
    spare = state[RESERVE]
    for column in range(N_COLUMNS):
        if state[HEIGHT + column] == 0:
            spare += 1
    return spare


@njit(cache=True)
def on_joker_nb(state, column):
    height = state[HEIGHT + column]
    return height >= 2 and state[COLS + MAX_HEIGHT * column + height - 2] >= JOKER


@njit(cache=True)
def greedy_key_nb(state, action, needed, spare):
    """How good a move is for greedy, lower is better; -1 when it is not worth making."""
    source = action // ACTION_STRIDE
    kind = action % ACTION_STRIDE
    target = kind % KIND_JOKERS
    jokers = kind // KIND_JOKERS
    height = state[HEIGHT + source]
    depth = needed[source]
    settled = is_settled_nb(state, source)
    if settled and depth == NOWHERE:
        return -1
    if jokers == 0 and state[HEIGHT + target] > 0:
        burying = NOWHERE // 2 if needed[target] < NOWHERE else 0
        return burying + (depth if depth < NOWHERE else NOWHERE + height)
    # A joker or an empty column takes a card off a column, never one already on a
    # joker (it would only trade one joker for another), best where a wanted card
    # lies within reach of the spare places.
    if height == 1 or on_joker_nb(state, source):
        return -1
    if depth <= spare:
        return 3 * NOWHERE + 4 * depth + jokers
    if settled:
        return -1
    return 5 * NOWHERE + min(depth, NOWHERE) + jokers


(GREEDY_PATIENCE,) = param_slots(GREEDY_PARAMS, "patience")


@njit(cache=True)
def greedy_nb(state, legal, n_legal, params, stream):
    """The kernel of policy `greedy` (sim.policies.jokers)."""
    if state[STALL] >= params[GREEDY_PATIENCE]:
        return -1
    found = first_foundation_move_nb(legal, n_legal)
    if found >= 0:
        return found
    needed = np.empty(N_COLUMNS, np.int64)
    for column in range(N_COLUMNS):
        needed[column] = needed_depth_nb(state, column)
    spare = spare_places_nb(state)
    best, best_key = -1, 10 * NOWHERE
    for i in range(n_legal):
        key = greedy_key_nb(state, legal[i], needed, spare)
        if 0 <= key < best_key:
            best, best_key = i, key
    return best


# ---------------------------------------------------------------------------------
# The exact solver: depth-first search over canonical positions.

FIRST_TABLE_BITS = 12
ZOBRIST_SEED = 0x4A4F4B4552  # any fixed number: the hash needs no secrecy
ZOBRIST_CARDS = JOKER + 1  # both jokers hash as 52: the two are alike
JOKER_COST = 40
EMPTY_COST = 60
DIG_BONUS = 100
DIG_STEP = 10
BURY_COST = 30
SETTLED_COST = 80
EMPTYING_BONUS = 50
FIRST_ATTEMPT = 4096
NOISE_STEP = 30


# Zobrist keys of (height in a column, card).
ZOBRIST = zobrist_keys(ZOBRIST_SEED, (MAX_HEIGHT, ZOBRIST_CARDS))


@njit(cache=True)
def position_key_nb(state, zobrist, scratch):
    """A 64-bit key of the position that ignores the order of the columns, for a seen
    set (policies.search): never 0.

    Each column's key (Zobrist, over heights and cards) is scrambled by the random
    generator's mixing (scratch is its one-entry state), then the columns are combined
    by XOR, which does not depend on their order. Foundations and reserve need no key:
    they follow from the cards left in the columns.
    """
    key = np.uint64(0)
    for column in range(N_COLUMNS):
        height = state[HEIGHT + column]
        if height == 0:
            continue
        column_key = np.int64(0)
        for h in range(height):
            card = min(state[COLS + MAX_HEIGHT * column + h], JOKER)
            column_key ^= zobrist[h, card]
        scratch[0] = column_key
        key ^= rng.next_u64_nb(scratch)
    if key == np.uint64(0):
        key = np.uint64(1)  # 0 marks an empty slot of the table
    return np.int64(key)  # the same 64 bits, as the seen set stores them


@njit(cache=True)
def safe_foundation_move_nb(state):
    """A foundation move that can never hurt (action), or -1.

    In the columns a card of rank r can only take a card of rank r - 1 of the other
    colour (J4), r - 2 of its colour or r - 3 of the other colour (J7). Once all those
    are on the foundations, the card is only in the way: playing it loses nothing.
    """
    for column in range(N_COLUMNS):
        card = top_card_nb(state, column)
        if card < 0:
            continue
        card_rank = rank_nb(card)
        suit = card % 4
        if state[FOUND + suit] != card_rank - 1:
            continue
        if is_red_nb(card):
            other_colour = min(state[FOUND + 0], state[FOUND + 3])
        else:
            other_colour = min(state[FOUND + 1], state[FOUND + 2])
        same_colour = state[FOUND + 3 - suit]  # C-S and D-H are the pairs of a colour
        if other_colour >= card_rank - 1 and same_colour >= card_rank - 2:
            return ACTION_STRIDE * column + KIND_FOUNDATION
    return -1


@njit(cache=True)
def search_priority_nb(state, action, needed):
    """Order of trial in the search, higher first; -1 for a move never worth trying.

    Foundation moves first; then moves digging towards a card the foundations want
    (the shallower it lies, the sooner); builds onto cards before moves spending a
    joker or an empty column; burying a wanted card or moving a card off its natural
    predecessor comes late.
    """
    source = action // ACTION_STRIDE
    kind = action % ACTION_STRIDE
    if kind == KIND_FOUNDATION:
        return 1000
    target = kind % KIND_JOKERS
    jokers = kind // KIND_JOKERS
    height = state[HEIGHT + source]
    to_empty = state[HEIGHT + target] == 0
    if to_empty and height == 1:
        return -1  # the same position with the columns renamed
    priority = 500 - JOKER_COST * jokers - EMPTY_COST * to_empty
    if needed[source] < NOWHERE:
        priority += DIG_BONUS - DIG_STEP * min(needed[source], 10)
    if needed[target] < NOWHERE:
        priority -= BURY_COST
    if is_settled_nb(state, source):
        priority -= SETTLED_COST
    if height == 1:
        priority += EMPTYING_BONUS
    return priority


@njit(cache=True)
def ordered_moves_nb(state, out, scratch, stream, noise):
    """The moves worth searching from a position, best first; how many.

    A safe foundation move, if any, is the only one (it cannot hurt); of several empty
    columns only the first is tried (they are alike). With noise > 0 a random number
    below it is added to each priority, to vary the order between attempts. scratch
    holds (legal actions, needed depths, priorities), reused from node to node.
    """
    legal, needed, priorities = scratch
    safe = safe_foundation_move_nb(state)
    if safe >= 0:
        out[0] = safe
        return 1
    n_legal = legal_actions_nb(state, legal)
    first_empty = -1
    for column in range(N_COLUMNS):
        if state[HEIGHT + column] == 0:
            first_empty = column
            break
    for column in range(N_COLUMNS):
        needed[column] = needed_depth_nb(state, column)
    n = 0
    for i in range(n_legal):
        action = legal[i]
        target = (action % ACTION_STRIDE) % KIND_JOKERS
        if action % ACTION_STRIDE != KIND_FOUNDATION and (
            state[HEIGHT + target] == 0 and target != first_empty
        ):
            continue
        priority = search_priority_nb(state, action, needed)
        if priority < 0:
            continue
        if noise > 0:
            priority += rng.below_nb(stream, noise)
        n = insert_by_value_nb(out, priorities, n, action, priority)
    return n


@njit(cache=True)
def search_nb(root, budget, max_depth, plan, stream, noise):
    """Search from root for a line putting all 52 cards on the foundations.

    Depth-first, the moves of each position in ordered_moves_nb order, never entering a
    position (up to the order of the columns) met before. Returns (verdict, nodes
    searched, length of the line written to plan), the verdict an outcome code
    (engine.kernel): OUTCOME_WON with the winning line; OUTCOME_LOST when every
    position reachable was searched (no line wins); otherwise OUTCOME_UNKNOWN (budget
    of nodes spent, or the depth bound met). A line that is not won is the one
    reaching the most cards on the foundations.
    """
    scratch_key = np.zeros(1, np.uint64)
    scratch = (
        np.empty(N_ACTIONS, np.int16),
        np.empty(N_COLUMNS, np.int64),
        np.empty(N_ACTIONS, np.int64),
    )
    positions = np.empty((max_depth + 1, CORE_SIZE), np.int16)
    moves = np.empty((max_depth + 1, N_ACTIONS), np.int16)
    n_moves = np.zeros(max_depth + 1, np.int64)
    tried = np.zeros(max_depth + 1, np.int64)
    path = np.empty(max_depth + 1, np.int16)
    table = new_seen_set_nb(FIRST_TABLE_BITS)
    positions[0, :] = root[:CORE_SIZE]
    best_score, best_length = score_nb(root), 0
    if best_score == 52:
        return OUTCOME_WON, 0, 0
    seen_insert_nb(table, position_key_nb(root, ZOBRIST, scratch_key), table.shape[0])
    nodes = 1
    n_moves[0] = ordered_moves_nb(positions[0], moves[0], scratch, stream, noise)
    tried[0] = 0
    depth = 0
    cut = False
    while depth >= 0:
        if tried[depth] == n_moves[depth]:
            depth -= 1
            continue
        if depth == max_depth:
            cut = True
            depth -= 1
            continue
        action = moves[depth, tried[depth]]
        tried[depth] += 1
        child = positions[depth + 1]
        child[:] = positions[depth]
        move_cards_nb(child, action)
        path[depth] = action
        score = score_nb(child)
        if score == 52:
            plan[: depth + 1] = path[: depth + 1]
            return OUTCOME_WON, nodes, depth + 1
        key = position_key_nb(child, ZOBRIST, scratch_key)
        if not seen_insert_nb(table, key, table.shape[0]):  # never forgets: kept half empty
            continue
        nodes += 1
        if 2 * nodes > table.shape[0]:
            table = seen_grown_nb(table)
        if score > best_score:
            best_score, best_length = score, depth + 1
            plan[:best_length] = path[:best_length]
        if nodes >= budget:
            return OUTCOME_UNKNOWN, nodes, best_length
        depth += 1
        n_moves[depth] = ordered_moves_nb(child, moves[depth], scratch, stream, noise)
        tried[depth] = 0
    return (OUTCOME_UNKNOWN if cut else OUTCOME_LOST), nodes, best_length


@njit(cache=True)
def solve_into_state_nb(state, budget, stream):
    """Decide the position; keep verdict, nodes searched and line in the state.

    Searching depth-first, one early mistake can trap the search in a huge subtree
    without a win. So it restarts, each attempt with a fresh table, a more shuffled move
    order and a budget of FIRST_ATTEMPT times the next term of the Luby sequence (many
    short attempts, now and then a long one), until a win, a proof of loss (any attempt
    that searched everything is one, whatever its order) or the end of the budget.
    """
    max_depth = max(0, min(PLAN_CAP, state[CAP] - moves_nb(state)))
    plan = state[SCRATCH_PLAN : SCRATCH_PLAN + PLAN_CAP]
    spent = 0
    attempt = 0
    best_score = -1
    line = np.empty(PLAN_CAP, np.int16)
    verdict, length = OUTCOME_UNKNOWN, 0
    while spent < budget:
        allowed = min(budget - spent, FIRST_ATTEMPT * luby_nb(attempt + 1))
        noise = min(attempt, 4) * NOISE_STEP
        verdict, nodes, reached = search_nb(state, allowed, max_depth, line, stream, noise)
        spent += nodes
        attempt += 1
        reached_score = line_score_nb(state, line, reached)
        if verdict != OUTCOME_UNKNOWN or reached_score > best_score:
            best_score, length = reached_score, reached
            plan[:length] = line[:length]
        if verdict != OUTCOME_UNKNOWN or nodes < allowed:
            break
    state[SCRATCH_VERDICT] = verdict
    split_set_nb(state, SCRATCH_NODES_LO, SCRATCH_NODES_HI, spent)
    state[SCRATCH_PLAN_LEN] = 0 if verdict == OUTCOME_UNKNOWN else length
    state[SCRATCH_PLAN_POS] = 0


@njit(cache=True)
def luby_nb(i):
    """Term i (from 1) of the Luby sequence 1 1 2 1 1 2 4 1 1 2 1 1 2 4 8 ..."""
    while True:
        k = 1
        while (1 << k) - 1 < i:
            k += 1
        if i == (1 << k) - 1:
            return 1 << (k - 1)
        i -= (1 << (k - 1)) - 1


@njit(cache=True)
def line_score_nb(state, line, length):
    """Cards on the foundations after playing line[:length] from state."""
    position = state[:CORE_SIZE].copy()
    for step in range(length):
        move_cards_nb(position, line[step])
    return score_nb(position)


@njit(cache=True)
def index_of_nb(legal, n_legal, action):
    for i in range(n_legal):
        if legal[i] == action:
            return i
    return -1


(NODES,) = param_slots(SOLVER_PARAMS, "nodes")


@njit(cache=True)
def solver_nb(state, legal, n_legal, params, stream):
    """The kernel of policy `solver` (sim.policies.jokers)."""
    if state[SCRATCH_VERDICT] == VERDICT_PENDING:
        solve_into_state_nb(state, np.int64(params[NODES]), stream)
    step = state[SCRATCH_PLAN_POS]
    if step >= state[SCRATCH_PLAN_LEN]:
        return -1
    state[SCRATCH_PLAN_POS] = step + 1
    return index_of_nb(legal, n_legal, state[SCRATCH_PLAN + step])
