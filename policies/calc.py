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
    POLICY_SIG,
    POS,
    STOCK,
    rank_nb,
    waste_top_nb,
)
from sim.policies.registry import Param, param_slots, policy

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


@policy("calc")
@njit(POLICY_SIG, cache=True)
def random(state, legal, n_legal, params, stream):
    """Uniform among the legal actions: the baseline every policy should beat.

    Each turned card goes to a foundation or waste pile chosen at random among the
    legal ones, and waste tops move to foundations only when that random draw says so.
    """
    return rng.below_nb(stream, n_legal)


@policy("calc")
@njit(POLICY_SIG, cache=True)
def greedy(state, legal, n_legal, params, stream):
    """Foundation first, else the turned card onto the lowest waste pile.

    Whenever any card (the turned one or a waste top) can go to a foundation, it goes,
    the first such move in action order. Otherwise the turned card is put on the waste
    pile with the fewest cards, the leftmost among equals. It never looks at what the
    card covers, so piles bury the cards the foundations want next.
    """
    found = first_foundation_move_nb(legal, n_legal)
    if found >= 0:
        return found
    return index_of_nb(legal, n_legal, ACT_TO_WASTE + lowest_waste_nb(state))


@policy("calc", name="kings-bottom")
@njit(POLICY_SIG, cache=True)
def kings_bottom(state, legal, n_legal, params, stream):
    """Kings to the bottom: a K only onto an empty pile, other cards onto later needs.

    Foundation moves come first, as in greedy. A turned K, the last card every
    foundation wants, goes onto an empty waste pile, so it buries nothing. Any other
    card goes onto the pile whose top card will be needed after it, the closest such
    fit, so that piles come off in the order the foundations ask for them. With no such
    pile, it takes an empty pile, and failing that covers the top card needed latest.
    """
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


PLANNER_PARAMS = (
    Param("depth_weight", float, 1.0, "cost of burying under a tall pile", 0, 100),
    Param("king_pile", int, 1, "1: keep the last waste pile for kings", 0, 1),
)
DEPTH_WEIGHT, KING_PILE = param_slots(PLANNER_PARAMS, "depth_weight", "king_pile")


@policy("calc", name="planner", params=PLANNER_PARAMS)
@njit(POLICY_SIG, cache=True)
def planner(state, legal, n_legal, params, stream):
    """The strategy guides' play: piles in reverse order of need, a pile for kings.

    Every foundation move is made, and where a card fits several foundations it goes
    to the one with the fewest cards, keeping foundations even. A turned K goes onto
    the kings' pile (the last waste pile, kept free of other cards while king_pile=1).
    Any other card goes where it does least harm: onto a top card the foundations want
    after it, the nearer in need the better, so each pile comes off in the reverse of
    its building order; burying a card needed sooner costs more, and more again on a
    tall pile (depth_weight). An empty pile is a middling choice.
    """
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
