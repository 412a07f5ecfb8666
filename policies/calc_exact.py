"""Calculation as a constraint model: the oracle's exact verdict on the deals its searches
leave undecided.

Told the stock order, a Calculation position is a scheduling problem, and a constraint
solver with clause learning (OR-Tools' CP-SAT) decides it where the oracle's searches
(policies.calc_oracle) give up: on the first 10,000 three-pile deals of seed 0 they left
174 undecided, and this model won every one of them, each in a few seconds. A win comes
with its line, played out by the engine's rules before it is believed; `lost` means the
model has no solution, a proof, since every line of play is one of its solutions.

The model. Time runs in windows, one per card turned, and one after the stock is gone:

    window:   0                1                      n (stock empty)
    time:     | 1 .. 49 |  50  | 51 .. 99 | 100 | ... | 50n+1 .. 50n+49 |
                 moves   push     moves    push          moves

Stock card p (p = 0 the turned card) is turned as window p opens. Each foundation move
(C5, C6) happens at a time inside a window, never on a boundary; a card placed on a
waste pile (C5) is placed at the close of its window, after every move of the window.
That loses no line: placing it later in its window only keeps it from covering a card
that leaves in that window, and a card placed and taken back in one window is the same
as the card played straight to its foundation. So, for every card c not on a
foundation:

- T[c], the time c reaches its foundation: after c is turned (within window p_c, or
  later if c lies on a pile); c is on a pile from the close of window p_c to T[c];
- c goes to one foundation that still needs its rank (C2, C7), and each foundation's
  next ranks are each taken by one card: per rank, a matching of its cards to the
  foundations needing it; a foundation's cards arrive in its order, at rising times;
- a card on a pile lies on one of the W piles (C4); two cards a (placed first) and b
  on one pile, with a still there when b is placed, leave in the other order:
  T[b] < T[a] (only a pile's top moves, C6; nothing moves from pile to pile).

A line of play gives such times (the moment of each move), and such times give a line:
each window's moves in order of time, then its placement. Two moves at one time are of
different foundations and different piles, so either order is legal.

The search is deterministic (one worker, a work limit in CP-SAT's deterministic seconds,
not a clock), so a deal's verdict is the same on every machine and with any number of
worker processes. OR-Tools is imported only when a deal is left undecided.
"""

import threading

from sim.engine import calc
from sim.engine.kernel import OUTCOME_LOST, OUTCOME_UNKNOWN, OUTCOME_UNWINNABLE, OUTCOME_WON
from sim.policies.calc import ORACLE_PARAMS
from sim.policies.registry import param_slots

WINDOW = 50  # time units a window holds: more than the 48 moves one window can have
SOLVER_SEED = 0
JOIN_SECONDS = 0.05  # how often the thread waiting for the search looks for an interrupt
(EXACT,) = param_slots(ORACLE_PARAMS, "exact")
DEFAULT_WORK = float(ORACLE_PARAMS[EXACT].default)


def foundation_wants(state, f):
    """The ranks foundation f (0-based) still takes, in order (C2)."""
    count = int(state[calc.FCOUNT + f])
    rank, wants = f + 1, []
    for _ in range(count - 1):
        rank = calc.next_rank_nb(rank, f + 1)
    for _ in range(count, 13):
        rank = calc.next_rank_nb(rank, f + 1)
        wants.append(rank)
    return wants


def open_cards(state):
    """The cards not on a foundation, as (card, turned in window, pile, height): pile
    cards first, bottom up (window -1, placed before play), then the stock in order."""
    cards = []
    for w in range(int(state[calc.NWASTE])):
        for h in range(int(state[calc.HEIGHT + w])):
            cards.append((int(state[calc.WASTE + calc.PILE_CAP * w + h]), -1, w, h))
    first = int(state[calc.POS])
    for p in range(calc.STOCK_SIZE - first):
        cards.append((int(state[calc.STOCK + first + p]), p, -1, -1))
    return cards


class _Model:
    """The CP-SAT model of one position (the module's docstring says what it states)."""

    def __init__(self, state):
        from ortools.sat.python import cp_model

        self.cp = cp_model
        self.model = cp_model.CpModel()
        self.piles = int(state[calc.NWASTE])
        self.cards = open_cards(state)
        self.windows = calc.STOCK_SIZE - int(state[calc.POS]) + 1
        self.feasible = True
        self.onto = []  # per card, (foundation, literal: it goes there)
        slots = self._foundations(state)
        self.time = [self._arrival(c, slots) for c in range(len(self.cards))]
        self._one_card_a_slot(slots)
        self.pile = [self._pile_of(c) for c in range(len(self.cards))]
        self._piles_in_order()

    def _foundations(self, state):
        """Per rank, the (foundation, time variable) of each slot waiting for it."""
        slots, m = {}, self.model
        for f in range(4):
            before = None
            for rank in foundation_wants(state, f):
                arrives = m.NewIntVar(1, WINDOW * self.windows - 1, "")
                if before is not None:
                    m.Add(arrives > before)
                slots.setdefault(rank, []).append((f, arrives))
                before = arrives
        return slots

    def _arrival(self, c, slots):
        """T[c], off every window boundary, with the foundation it arrives on."""
        m = self.model
        card, window, _, _ = self.cards[c]
        window_of = m.NewIntVar(max(window, 0), self.windows - 1, "")
        offset = m.NewIntVar(1, WINDOW - 1, "")
        arrives = m.NewIntVar(1, WINDOW * self.windows - 1, "")
        m.Add(arrives == WINDOW * window_of + offset)
        choices = slots.get(calc.rank_nb(card), [])
        if not choices:
            self.feasible = False  # no foundation takes it: never the case in play
        onto = []
        for f, slot_time in choices:
            chosen = m.NewBoolVar("")
            m.Add(arrives == slot_time).OnlyEnforceIf(chosen)
            onto.append((f, chosen))
        m.AddExactlyOne([chosen for _, chosen in onto])
        self.onto.append(onto)
        return arrives

    def _one_card_a_slot(self, slots):
        for rank, waiting in slots.items():
            for f, _ in waiting:
                takers = [
                    chosen
                    for c, (card, _, _, _) in enumerate(self.cards)
                    if calc.rank_nb(card) == rank
                    for g, chosen in self.onto[c]
                    if g == f
                ]
                self.model.AddExactlyOne(takers)

    def _pile_of(self, c):
        """One literal per pile: whether c lies on it (none for a card played at once)."""
        m = self.model
        _, window, pile, _ = self.cards[c]
        if window < 0:
            return [m.NewConstant(int(w == pile)) for w in range(self.piles)]
        close = WINDOW * (window + 1)
        piled = m.NewBoolVar("")
        m.Add(self.time[c] > close).OnlyEnforceIf(piled)
        m.Add(self.time[c] < close).OnlyEnforceIf(piled.Not())
        on = [m.NewBoolVar("") for _ in range(self.piles)]
        m.AddExactlyOne([*on, piled.Not()])
        return on

    def _piles_in_order(self):
        m = self.model
        for a in range(len(self.cards)):
            for b in range(a + 1, len(self.cards)):
                _, window_b, pile_b, _ = self.cards[b]
                if window_b < 0:  # both dealt onto piles: their order is given
                    if self.cards[a][2] == pile_b:
                        m.Add(self.time[b] < self.time[a])
                    continue
                close = WINDOW * (window_b + 1)
                still_there = m.NewBoolVar("")
                m.Add(self.time[a] > close).OnlyEnforceIf(still_there)
                m.Add(self.time[a] < close).OnlyEnforceIf(still_there.Not())
                for w in range(self.piles):
                    on_both = [self.pile[a][w], self.pile[b][w], still_there]
                    m.Add(self.time[b] < self.time[a]).OnlyEnforceIf(on_both)

    def solve(self, work):
        """(OUTCOME_WON with the line, OUTCOME_LOST, or OUTCOME_UNKNOWN) within `work`."""
        if not self.feasible:
            return OUTCOME_LOST, []
        solver = self.cp.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = SOLVER_SEED
        solver.parameters.max_deterministic_time = work
        status = _solved(solver, self.model)
        if status == self.cp.INFEASIBLE:
            return OUTCOME_LOST, []
        if status not in (self.cp.OPTIMAL, self.cp.FEASIBLE):
            return OUTCOME_UNKNOWN, []
        return OUTCOME_WON, self._line(solver)

    def _line(self, solver):
        """The moves of the solution, each window's in time order, then its placement."""
        events = []
        for c, (_, window, pile, _) in enumerate(self.cards):
            arrives = solver.Value(self.time[c])
            f = next(f for f, chosen in self.onto[c] if solver.Value(chosen))
            if window >= 0 and arrives < WINDOW * (window + 1):
                events.append((arrives, f))  # straight from the stock
                continue
            if window >= 0:
                pile = next(w for w in range(self.piles) if solver.Value(self.pile[c][w]))
                events.append((WINDOW * (window + 1) - 0.5, calc.ACT_TO_WASTE + pile))
            events.append((arrives, calc.ACT_FROM_WASTE + 4 * pile + f))
        return [action for _, action in sorted(events)]


def _solved(solver, model):
    """solver's status on model, solved in a thread of its own.

    CP-SAT would take Ctrl-C as the end of its work limit and answer `unknown`: a wrong
    row, written as if the deal had been searched in full. So it is told to leave the
    signal alone, and the search runs beside this thread, which stays free to take the
    interrupt (or a watch's stop, engine.run.watch), stop the search and pass it on."""
    solver.parameters.catch_sigint_signal = False
    answer = {}

    def search():
        try:
            answer["status"] = solver.Solve(model)
        except BaseException as error:  # raised again by the waiting thread
            answer["error"] = error

    searching = threading.Thread(target=search, name="sim-cp-sat", daemon=True)
    searching.start()
    try:
        while searching.is_alive():
            searching.join(JOIN_SECONDS)
    except BaseException:
        solver.StopSearch()
        searching.join()
        raise
    if "error" in answer:
        raise answer["error"]
    return answer["status"]


def decide(state, work):
    """The exact verdict on a position and, if won, its winning line (actions), checked
    move by move against the engine's rules."""
    if work <= 0:
        return OUTCOME_UNKNOWN, []
    found, line = _Model(state).solve(work)
    if found == OUTCOME_WON and not plays_to_a_win(state, line):
        raise AssertionError("the model's line breaks the rules: the model is wrong")
    return found, line


def plays_to_a_win(state, line):
    position = state.copy()
    for action in line:
        if not calc.is_legal_nb(position, action):
            return False
        calc.apply_action_nb(position, action)
    return calc.score_nb(position) == 52


def settle(state, params):
    """The oracle's last stage (Policy.settle), on a deal its searches left undecided,
    from its start state: (OUTCOME_WON, the winning line), (OUTCOME_UNWINNABLE, []) for
    a proof, or (OUTCOME_UNKNOWN, []) when the work limit (--param exact=) runs out."""
    found, line = decide(state, float(params[EXACT]))
    return (OUTCOME_UNWINNABLE if found == OUTCOME_LOST else found), line
