"""Built-in Calculation policies (compiled; see engine.calc for state and actions)."""

from numba import njit

from sim.engine import rng
from sim.engine.calc import (
    ACT_FROM_WASTE,
    ACT_TO_WASTE,
    FCOUNT,
    HEIGHT,
    NEED,
    NWASTE,
    POS,
    STOCK,
    rank_nb,
    waste_top_nb,
)
from sim.policies.calc import PLANNER_PARAMS
from sim.policies.registry import param_slots

NEVER = 99
# Multiplicative inverses mod 13 of the foundation steps 1..4: turn a rank distance
# on foundation k into a number of cards.
_STEP_INVERSE = (1, 7, 9, 10)


@njit(cache=True)
def steps_until_needed_nb(state, rank):
    """How many cards any foundation takes before it wants `rank` (0 = now)."""
    best = NEVER
    for k in range(4):
        need = state[NEED + k]
        if need == 0:
            continue
        steps = ((rank - need) * _STEP_INVERSE[k]) % 13
        if steps < 13 - state[FCOUNT + k] and steps < best:
            best = steps
    return best


@njit(cache=True)
def first_foundation_move_nb(legal, n):
    """Index of the first legal move onto a foundation, or -1."""
    for i in range(n):
        if legal[i] < ACT_TO_WASTE or legal[i] >= ACT_FROM_WASTE:
            return i
    return -1


@njit(cache=True)
def index_of_nb(legal, n, action):
    for i in range(n):
        if legal[i] == action:
            return i
    return -1


@njit(cache=True)
def lowest_waste_nb(state):
    best = 0
    for w in range(1, state[NWASTE]):
        if state[HEIGHT + w] < state[HEIGHT + best]:
            best = w
    return best


@njit(cache=True)
def empty_waste_nb(state):
    for w in range(state[NWASTE]):
        if state[HEIGHT + w] == 0:
            return w
    return -1


@njit(cache=True)
def random_nb(state, legal, n_legal, params, stream):
    """The kernel of policy `random` (sim.policies.calc)."""
    return rng.below_nb(stream, n_legal)


@njit(cache=True)
def greedy_nb(state, legal, n_legal, params, stream):
    """The kernel of policy `greedy` (sim.policies.calc)."""
    found = first_foundation_move_nb(legal, n_legal)
    if found >= 0:
        return found
    return index_of_nb(legal, n_legal, ACT_TO_WASTE + lowest_waste_nb(state))


@njit(cache=True)
def kings_bottom_nb(state, legal, n_legal, params, stream):
    """The kernel of policy `kings-bottom` (sim.policies.calc)."""
    found = first_foundation_move_nb(legal, n_legal)
    if found >= 0:
        return found
    card_rank = rank_nb(state[STOCK + state[POS]])
    empty = empty_waste_nb(state)
    if card_rank == 13 and empty >= 0:
        return index_of_nb(legal, n_legal, ACT_TO_WASTE + empty)
    card_soon = steps_until_needed_nb(state, card_rank)
    best_fit, best_gap = -1, NEVER + 1
    latest, latest_soon = 0, -1
    for w in range(state[NWASTE]):
        top = waste_top_nb(state, w)
        if top < 0:
            continue
        top_soon = steps_until_needed_nb(state, rank_nb(top))
        if top_soon > card_soon and top_soon - card_soon < best_gap:
            best_fit, best_gap = w, top_soon - card_soon
        if top_soon > latest_soon:
            latest, latest_soon = w, top_soon
    if best_fit < 0:
        best_fit = empty if empty >= 0 else latest
    return index_of_nb(legal, n_legal, ACT_TO_WASTE + best_fit)


@njit(cache=True)
def _placement_cost_nb(state, w, card_soon, is_king, king_pile, depth_weight):
    """How much harm putting the turned card on waste w does (lower is better)."""
    height = state[HEIGHT + w]
    if is_king:
        if w == king_pile:
            return 0.0
        return 50.0 + height if height == 0 else 100.0 + height
    if w == king_pile:
        return 1000.0  # keep the kings' pile for kings
    if height == 0:
        return 12.0
    top_soon = steps_until_needed_nb(state, rank_nb(waste_top_nb(state, w)))
    if top_soon > card_soon:
        return (top_soon - card_soon) + depth_weight * height * 0.1
    # The card would bury one the foundations want before it.
    return 30.0 + (card_soon - top_soon) + depth_weight * height


@njit(cache=True)
def _foundation_choice_nb(state, legal, n_legal):
    """Among foundation moves, prefer the one whose foundation is furthest behind."""
    best, best_count = -1, 99
    for i in range(n_legal):
        a = legal[i]
        if ACT_TO_WASTE <= a < ACT_FROM_WASTE:
            continue
        k = a if a < ACT_TO_WASTE else (a - ACT_FROM_WASTE) % 4
        if state[FCOUNT + k] < best_count:
            best, best_count = i, state[FCOUNT + k]
    return best


DEPTH_WEIGHT, KING_PILE = param_slots(PLANNER_PARAMS, "depth_weight", "king_pile")


@njit(cache=True)
def planner_nb(state, legal, n_legal, params, stream):
    """The kernel of policy `planner` (sim.policies.calc)."""
    found = _foundation_choice_nb(state, legal, n_legal)
    if found >= 0:
        return found
    card_rank = rank_nb(state[STOCK + state[POS]])
    card_soon = steps_until_needed_nb(state, card_rank)
    king_pile = state[NWASTE] - 1 if params[KING_PILE] > 0 and state[NWASTE] > 1 else -1
    best, best_cost = 0, 1e18
    for w in range(state[NWASTE]):
        cost = _placement_cost_nb(
            state, w, card_soon, card_rank == 13, king_pile, params[DEPTH_WEIGHT]
        )
        if cost < best_cost:
            best, best_cost = w, cost
    return index_of_nb(legal, n_legal, ACT_TO_WASTE + best)
