"""Where a deal was lost: the first move after which no line of play wins.

A played deal is a line of positions p0 (as dealt), p1, ..., pN (pi after i moves). An
exact solver judges a position: won (it found a winning line from there), lost (it
proved that none exists), or unknown (its budget ran out first). The move that lost
the deal is move m such that p(m-1) is proved winnable and pm is proved lost.

Winnability is monotone along the line: pj is reached from pi (i < j) by the moves
played, so a win from pj is a win from pi, and a loss of pi is a loss of pj. The
positions that can be won are therefore a prefix of the line, and the losing move is
where it ends. So a verdict anywhere decides a whole side (a win at pj proves p0 .. pj
winnable, a loss at pi proves pi .. pN lost), and a bisection for the end would be
sound. A winning line found at pi also proves winnable every later position the
policy reached by playing that line's own moves. An unknown verdict decides nothing,
and a move is blamed only when both of its sides are proved. Which positions are
judged, in which order, follows what the solvers decide cheaply (_Search).

What "could be won" means is the solver's: the Calculation oracle is told the whole
stock order; the Jokers solver sees an open layout and keeps to the move cap; the
Montana solver decides the play between two redeals (a phase), the move cap aside.
With redeals left, a Montana phase that cannot be won may still lead to a winning
redeal, so only the last phase is judged: from its first grid on, winning the phase
is winning the deal. A move blamed there is the first move of the whole deal that
lost it, since every earlier position leads to that phase's winnable positions by
the moves played (a redeal's shuffle is fixed by seed, deal and redeal number, M5).

The solvers are imported when a deal is explained, never with this module.
"""

from dataclasses import dataclass

import numpy as np

from sim.engine.games import get_game

WON, LOST, UNKNOWN = "won", "lost", "unknown"
SOLVERS = {"calc": "oracle", "montana": "solver", "jokers": "solver"}  # the exact ones
SHOWN_LINE = 16  # moves of a winning continuation written out in the summary


class ExplainError(ValueError):
    """The deal cannot be explained as asked (a game without an exact solver)."""


@dataclass(frozen=True)
class Explanation:
    """The answer for one played deal. Positions are named by the number of moves
    played before them (0 = as dealt), moves by their number in the line (from 1),
    as `sim show` numbers them.

    verdict:
        "won"         the policy won: nothing was lost
        "unavailable" no exact judgement is possible here (`note` says why)
        "unwinnable"  the first position judged is proved lost (the deal as dealt, or
                      the grid of Montana's last redeal): no move is to blame
        "lost"        `move` lost the deal: the position before it is proved winnable
                      (`alternative` is a winning line from there), the one after lost
        "not lost"    even the position after the last move is proved winnable: play
                      stopped (the policy resigned, or the move cap) short of a win
        "undecided"   no move is proved to lose: the positions in `undecided` were
                      left unknown, between the last proved win and the first loss
    """

    game: str
    solver: str
    nodes: int  # the budget of each judgement
    verdict: str
    first: int = 0  # the first position judged
    last: int = 0  # the last one (all moves played)
    move: int | None = None
    played: str | None = None  # the losing move, in the rule book's notation
    alternative: tuple = ()  # a winning line from position move - 1, its first move first
    won_until: int | None = None  # the last position proved winnable
    lost_from: int | None = None  # the first position proved lost
    undecided: tuple = ()
    unjudged: int = 0  # positions between won_until and lost_from never judged
    judged: int = 0  # judgements made
    searched: int = 0  # positions it searched in all
    beam: bool = False  # its look for a win runs a beam search too, on a budget of its own
    exact: int = 0  # judgements its searches left that an exact model then decided
    note: str = ""

    def mark(self, number):
        """What `sim show` writes beside move `number`: "" for every move but the one
        that lost the deal."""
        if self.verdict != LOST or number != self.move:
            return ""
        return f"   ◀ lost the deal: {self.alternative[0]} still wins"

    def summary(self):
        """Lines for the end of `sim show`, each starting "explain:"."""
        lines = [self.note] if self.note else []
        solver = self.solver
        if self.verdict == "won":
            lines.append("the deal was won: nothing was lost")
        elif self.verdict == "unwinnable":
            if self.first == 0:
                lines.append(
                    f"the deal could not be won at all: the {solver} proves the position "
                    "as dealt lost, so no move is to blame"
                )
            else:
                lines.append(
                    f"the last phase could not be won from its first grid (after move "
                    f"{self.first}): the {solver} proves it lost, so no move of that phase "
                    "is to blame; an earlier phase may have lost the deal"
                )
        elif self.verdict == LOST:
            lines.append(
                f"move {self.move} {self.played} lost the deal: the {solver} finds a win "
                "from the position before it, and proves that none is left after it"
            )
            lines.append(f"winning alternative at move {self.move}: {_brief(self.alternative)}")
        elif self.verdict == "not lost":
            lines.append(
                f"play stopped after move {self.last} while the deal could still be won: "
                f"{_brief(self.alternative)}"
            )
        elif self.verdict == "undecided":
            lines.extend(self._undecided_lines())
        if self.judged:
            lines.append(
                f"{_count(self.judged, 'judgement')} by the {solver}, "
                f"{self.searched:,} positions searched (a budget of {self.nodes:,} each"
                + (", and a beam search's besides)" if self.beam else ")")
                + (f"; {self.exact:,} of them decided by its exact model" if self.exact else "")
            )
        return ["explain: " + line for line in lines]

    def _undecided_lines(self):
        between = ""
        if self.unjudged:
            between = f" ({_count(self.unjudged, 'position')} between not judged)"
        # The Jokers solver keeps to the move cap (J9): a line it cannot finish under
        # the cap leaves a position undecided however many positions remain.
        limit = " and the move cap" if self.game == "jokers" else ""
        lines = [
            f"undecided within {_count(self.nodes, 'position')}{limit} at "
            f"{_span(self.undecided)}{between}: no move is proved to lose the deal "
            f"(--explain-nodes allows the {self.solver} more positions)"
        ]
        if self.won_until is not None and self.lost_from is not None:
            lines.append(
                f"the position {_position(self.won_until)} can be won and the one after "
                f"move {self.lost_from} cannot: one of moves {self.won_until + 1} to "
                f"{self.lost_from} lost the deal"
            )
        elif self.lost_from is not None:
            lines.append(
                f"the position after move {self.lost_from} is proved lost; no earlier "
                "position is proved winnable"
            )
        elif self.won_until is not None:
            lines.append(
                f"the position {_position(self.won_until)} can be won; no later "
                "position is proved lost"
            )
        return lines


def _count(n, word):
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _position(index):
    return "as dealt" if index == 0 else f"after move {index}"


def _span(positions):
    """The positions, as a person reads them: "the position as dealt",
    "the positions after moves 12 to 15", "... after moves 3, 7 and 9"."""
    after = [p for p in positions if p > 0]
    parts = ["the position as dealt"] if 0 in positions else []
    if after:
        runs = []
        for p in after:
            if runs and runs[-1][1] == p - 1:
                runs[-1][1] = p
            else:
                runs.append([p, p])
        texts = [f"{a}" if a == b else f"{a} to {b}" for a, b in runs]
        text = ", ".join(texts[:-1]) + " and " + texts[-1] if len(texts) > 1 else texts[0]
        several = len(after) > 1
        parts.append(
            f"the position{'s' if several else ''} after move{'s' if several else ''} {text}"
        )
    return " and ".join(parts)


def _brief(line):
    """A winning line as the summary writes it: its first move, then the next few."""
    if not line:
        return "the deal is won as it stands"
    shown = line[0]
    if len(line) > 1:
        shown += ", then " + " ".join(line[1:SHOWN_LINE])
    more = " …" if len(line) > SHOWN_LINE else ""
    return f"{shown}{more} ({len(line)} moves to the win)"


def check_explainable(game):
    """Refuse, in one line, a game without an exact solver."""
    if game.name not in SOLVERS:
        raise ExplainError(f"--explain is not available for {game.title}: it has no exact solver")


def default_nodes(game):
    """The budget of each judgement unless told otherwise: that of the solver's policy
    (its declaration: no solver is loaded for it)."""
    from sim.policies.registry import resolve

    policy = resolve(game.name, SOLVERS[game.name])
    return int(next(param.default for param in policy.params if param.name == "nodes"))


def explain_line(line, nodes=None):
    """The Explanation of a played deal, given as its move-log line (RULES.md format).

    nodes: positions the solver may search for each position it judges (default: its
    policy's default budget)."""
    game = get_game(line["game"])
    check_explainable(game)
    rules = game.default_rules() | {name: line[name] for name in game.rule_names if name in line}
    nodes = default_nodes(game) if nodes is None else nodes
    base = {"game": game.name, "solver": SOLVERS[game.name], "nodes": nodes}
    if line["outcome"] == WON:
        return Explanation(**base, verdict="won", last=len(line["moves"]))
    judge = _JUDGES[game.name](game.module, line, rules)
    states, actions, first, note = judge.positions(line)
    base |= {"first": first, "note": note, "beam": judge.beam}
    if states is None:
        return Explanation(**base, verdict="unavailable", last=first)
    base["last"] = first + len(actions)
    return _locate(judge, states, actions, first, nodes, base)


def _locate(judge, states, actions, first, nodes, base):
    """Find where the winnable prefix of states[0..n] (positions first .. first + n)
    ends, judging as few positions as the verdicts allow (the order is _Search's)."""
    search = _Search(judge, states, actions, nodes)
    search.run()
    n, won_until, lost_from = len(actions), search.won_until, search.lost_from
    base |= {"judged": search.judged, "searched": search.searched, "exact": judge.exact}
    if won_until >= 0:
        base["won_until"] = first + won_until
    if lost_from <= n:
        base["lost_from"] = first + lost_from
    if lost_from == 0:
        return Explanation(**base, verdict="unwinnable")
    if won_until == n:
        line = tuple(judge.notation(a) for a in search.lines[n])
        return Explanation(**base, verdict="not lost", alternative=line)
    if won_until >= 0 and lost_from == won_until + 1:
        line = tuple(judge.notation(a) for a in search.lines[won_until])
        return Explanation(
            **base,
            verdict=LOST,
            move=first + lost_from,
            played=judge.notation(actions[won_until]),
            alternative=line,
        )
    gap = range(won_until + 1, min(lost_from, n + 1))
    left = tuple(first + i for i in gap if i in search.unknown)
    unjudged = sum(1 for i in gap if i not in search.unknown)
    return Explanation(**base, verdict="undecided", undecided=left, unjudged=unjudged)


WIN_SEARCH, LOSS_SEARCH = "win", "loss"


class _Search:
    """The judgements along one line, and what they prove.

    The order follows what the solvers find cheaply. A win, where there is one, is
    found fast by searches that follow a good playout first, anywhere on the line; a
    proof of loss needs every line from the position searched, which is cheap near the
    end and grows fast further back. So: the deal as dealt first (can it be won at
    all?); then forward, each found line carrying the proof as far as the policy
    followed it, to the first position left unknown; then backward from the end, to
    the first position left unknown. A judge whose solver keeps its proofs from one
    judgement to the next (the Calculation oracle) steps back one position at a time,
    each proof mostly made by the one before; the others step back by doubling
    distances, then bisect between the last loss and the first unknown. Positions in
    between are not judged: they are further from both ends than positions the solver
    already failed to decide, and each would cost the whole budget.
    """

    def __init__(self, judge, states, actions, nodes):
        self.judge, self.states, self.actions, self.nodes = judge, states, actions, nodes
        n = len(actions)
        self.won_until = -1  # the last position proved winnable
        self.lost_from = n if judge.lost_by_rules(states[n]) else n + 1
        self.lines = {}  # a winning line from the position won_until
        self.unknown = set()
        self.tried = set()  # (position, kind of search)
        self.judged = self.searched = 0

    def open(self):
        return self.lost_from > self.won_until + 1

    def run(self):
        self.decide(0, WIN_SEARCH)
        while self.open() and self.decide(self.won_until + 1, WIN_SEARCH) == WON:
            pass
        step, floor = 1, None
        while self.open():
            at = max(self.won_until + 1, self.lost_from - step)
            verdict = self.decide(at, LOSS_SEARCH)
            if verdict is None or verdict == UNKNOWN:
                floor = at
                break
            step *= self.judge.gallop
        while floor is not None and self.open() and self.lost_from - floor > 1:
            at = (max(floor, self.won_until) + self.lost_from) // 2
            if at <= max(floor, self.won_until):
                break
            if self.decide(at, LOSS_SEARCH) in (None, UNKNOWN):
                floor = at

    def decide(self, i, kind):
        """Judge position i with a search of kind; its verdict (None if that search
        was already made there)."""
        if (i, kind) in self.tried:
            return None
        self.tried.add((i, kind))
        verdict, used, winning = self.judge.solve(self.states[i], self.nodes, kind)
        self.judged += 1
        self.searched += used
        if verdict == WON:
            self.unknown.discard(i)
            # The policy's moves that follow the winning line keep the deal winnable.
            j, t, n = i, 0, len(self.actions)
            while j < n and t < len(winning) and self.actions[j] == winning[t]:
                j, t = j + 1, t + 1
            if j > self.won_until:
                self.won_until = j
                self.lines = {j: winning[t:]}
        elif verdict == LOST:
            self.unknown.discard(i)
            self.lost_from = min(self.lost_from, i)
        else:
            self.unknown.add(i)
        return verdict


# --- the games -----------------------------------------------------------------------


class _Judge:
    """What _locate asks of a game: its positions along the line, and its solver."""

    legal_size = 64  # room for any game's legal list
    gallop = 2  # how the backward scan's steps grow (_Search)
    beam = False  # whether its look for a win runs a beam search besides its budget
    exact = 0  # judgements its searches left undecided and an exact model decided

    def __init__(self, module, line, rules):
        self.module, self.line, self.rules = module, line, rules
        self.legal = np.empty(self.legal_size, np.int16)

    def notation(self, action):
        return self.module.action_notation(int(action))

    def n_legal(self, state):
        return int(self.module.legal_actions_nb(state, self.legal))

    def action_of(self, state, number, move):
        """The engine action of move `number` at state; ValueError if it is not legal."""
        n = self.n_legal(state)
        for action in self.legal[:n]:
            if self.notation(action) == move:
                return int(action)
        raise ValueError(f"move {number} {move} is not legal there")

    def replay(self, state, moves, first):
        """The states after each of moves, played from state (move numbers from first
        + 1), and their actions."""
        states, actions = [state.copy()], []
        for number, move in enumerate(moves, first + 1):
            action = self.action_of(states[-1], number, move)
            after = states[-1].copy()
            self.module.apply_action_nb(after, action)
            states.append(after)
            actions.append(action)
        return states, actions

    def positions(self, line):
        """(states, actions, first, note): the positions to judge, the moves between
        them, the number of the first, and a note for the reader; states None when
        nothing can be judged (the note says why)."""
        start = self.module.state_from_layout(line["layout"], self.rules)
        states, actions = self.replay(start, line["moves"], 0)
        return states, actions, 0, ""


class _Calc(_Judge):
    """The oracle's search, told the whole stock order. Its table of positions proved
    lost is kept from one judgement to the next: they are positions of one deal, and a
    position proved lost stays lost, so later judgements skip what earlier ones proved.
    A position the search leaves undecided goes, as in the oracle policy, to the exact
    model (policies.calc_exact) with the policy's default work limit."""

    gallop = 1
    beam = True

    def __init__(self, module, line, rules):
        from sim.policies import calc_oracle
        from sim.policies.search import new_stamped_table_nb

        super().__init__(module, line, rules)
        self.oracle = calc_oracle
        self.keys, self.stamps = new_stamped_table_nb(calc_oracle.TABLE_BITS)
        self.board = np.empty(module.STATE_SIZE, np.int16)
        self.winning = np.empty(calc_oracle.MAX_DEPTH, np.int16)

    def solve(self, state, nodes, kind):
        # To prove a loss the oracle's first rounds, which only look for wins near its
        # playouts, would spend budget in vain: the complete search alone then.
        oracle, board = self.oracle, self.board
        oracle.board_from_state_nb(state, board)
        table = (board, np.int64(nodes), self.keys, self.stamps, np.int64(1), self.winning)
        if kind == WIN_SEARCH:
            verdict, used, length = oracle.oracle_search_nb(*table)
        else:
            verdict, used, length = oracle.solve_nb(
                *table, np.int64(1 << 30), np.int64(oracle.RELAXED_BUDGET)
            )
        line = [int(a) for a in self.winning[:length]]
        if verdict == self.module.OUTCOME_UNKNOWN:
            verdict, line = self._exact(state)
        return _verdict(verdict), int(used), line

    def _exact(self, state):
        from sim.policies import calc_exact

        verdict, line = calc_exact.decide(state, calc_exact.DEFAULT_WORK)
        self.exact += verdict != self.module.OUTCOME_UNKNOWN
        return verdict, line

    def lost_by_rules(self, state):
        return self.n_legal(state) == 0 and self.module.score_nb(state) < 52


class _Montana(_Judge):
    """The solver's decision of a deal phase (its search's look for a win, then the
    exhaustive search), from each grid judged."""

    beam = True

    def __init__(self, module, line, rules):
        from sim.policies import montana_solver

        super().__init__(module, line, rules)
        self.montana_solver = montana_solver
        self.winning = np.empty(montana_solver.DEPTH_CAP + 1, np.int16)

    def solve(self, state, nodes, kind):
        # decide_nb gives most of its budget to a look for a win that cannot prove a
        # loss: a proof is asked of the exhaustive search alone. Only the last phase is
        # judged, where no redeal lifts a card: the search skips classes in which a card
        # can never reach home, lost for good.
        solver = self.montana_solver
        budget, keep = np.int64(nodes), np.int64(solver.KEEP_SCORE)
        if kind == WIN_SEARCH:
            verdict, used, length = solver.decide_nb(state, budget, keep, self.winning)
        else:
            verdict, used, length, _ = solver.class_solve_nb(
                state, budget, keep, self.winning, True
            )
        return _verdict(verdict), int(used), [int(a) for a in self.winning[:length]]

    def lost_by_rules(self, state):
        module = self.module
        return (
            self.n_legal(state) == 0
            and module.score_nb(state) < module.WIN_SCORE
            and state[module.REDEALS] >= state[module.MAX_REDEALS]
        )

    def positions(self, line):
        module = self.module
        moves = line["moves"]
        redeals = [i for i, move in enumerate(moves) if move.startswith("redeal:")]
        allowed = self.rules["redeals"]
        if len(redeals) < allowed:
            note = (
                f"play stopped with {allowed - len(redeals)} of {allowed} redeals left "
                "(the move cap): a phase that cannot be won may still lead to a winning "
                "redeal, so no position is judged"
            )
            return None, None, len(moves), note
        state = module.state_from_layout(line["layout"], self.rules)
        first, note = 0, ""
        if redeals:
            first = redeals[-1] + 1
            grid = module.parse_grid(moves[first - 1].removeprefix("redeal:"))
            module.set_grid_nb(state, grid, allowed)
            state[module.REDEALS] = len(redeals)
            note = (
                f"only the last phase is judged, from the grid redeal {len(redeals)} dealt "
                f"(move {first}) on: an earlier phase that cannot be won still leads to a "
                "redeal"
            )
        states, actions = self.replay(state, moves[first:], first)
        return states, actions, first, note


class _Jokers(_Judge):
    """The solver's search from each position judged, within the moves the cap leaves
    (J9); its restarts draw on a stream fixed by the deal, so a verdict is repeatable."""

    def __init__(self, module, line, rules):
        from sim.engine import rng
        from sim.policies import jokers_kernels

        super().__init__(module, line, rules)
        self.kernels = jokers_kernels
        self.stream = rng.new_stream(line["seed"], line["deal"], rng.STREAM_POLICY)
        self.start = self.stream.copy()

    def solve(self, state, nodes, kind):
        module = self.module
        trial = state.copy()
        module.clear_scratch_nb(trial)
        self.stream[:] = self.start
        self.kernels.solve_into_state_nb(trial, np.int64(nodes), self.stream)
        verdict = _verdict(trial[module.SCRATCH_VERDICT])
        length = int(trial[module.SCRATCH_PLAN_LEN]) if verdict == WON else 0
        plan = trial[module.SCRATCH_PLAN : module.SCRATCH_PLAN + length]
        return verdict, int(module.nodes_nb(trial)), [int(a) for a in plan]

    def lost_by_rules(self, state):
        module = self.module
        if module.score_nb(state) == 52:
            return False
        return self.n_legal(state) == 0 or module.moves_nb(state) >= state[module.CAP]


def _verdict(code):
    """The verdict of a solver's outcome code (engine.kernel, which loads numba)."""
    from sim.engine.kernel import OUTCOME_LOST, OUTCOME_WON

    return {OUTCOME_WON: WON, OUTCOME_LOST: LOST}.get(int(code), UNKNOWN)


_JUDGES = {"calc": _Calc, "montana": _Montana, "jokers": _Jokers}
