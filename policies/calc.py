"""The Calculation policies: declarations only, read by listings, help and completion
without importing numba. Each kernel is compiled when it first plays; compile_seconds
is how long that took on a two-core machine, for the notice shown before it."""

from sim.policies.registry import Param, Policy

PLANNER_PARAMS = (
    Param("depth_weight", float, 1.0, "cost of burying under a tall pile", 0, 100),
    Param("king_pile", int, 1, "1: keep the last waste pile for kings", 0, 1),
)

MC_PARAMS = (
    Param("samples", int, 1024, "most random stock orders per decision", 1, 1e6),
    Param("confidence", float, 2.0, "standard errors that drop a trailing action", 0, 100),
    Param("score_weight", float, 0.5, "value of a full score (cubed) next to a win", 0, 100),
    Param("endgame", int, 5, "unseen cards at most for exact play to the end (-1: never)", -1, 47),
    Param("endgame_nodes", int, 20000, "positions the exact endgame may expand", 1, 1e8),
)

ORACLE_PARAMS = (
    Param("nodes", int, 100000, "positions the search may expand", 1, 1_000_000_000),
    Param(
        "exact",
        float,
        60,
        "work limit of the exact model on a deal the searches leave undecided "
        "(CP-SAT deterministic seconds; 0: none)",
        0,
        1e6,
    ),
)

random = Policy(
    "calc",
    "random",
    "sim.policies.calc_kernels:random_nb",
    compile_seconds=1,
    description="""\
Uniform among the legal actions: the baseline every policy should beat.

Each turned card goes to a foundation or waste pile chosen at random among the
legal ones, and waste tops move to foundations only when that random draw says so.
""",
)

greedy = Policy(
    "calc",
    "greedy",
    "sim.policies.calc_kernels:greedy_nb",
    compile_seconds=1,
    description="""\
Foundation first, else the turned card onto the lowest waste pile.

Whenever any card (the turned one or a waste top) can go to a foundation, it goes,
the first such move in action order. Otherwise the turned card is put on the waste
pile with the fewest cards, the leftmost among equals. It never looks at what the
card covers, so piles bury the cards the foundations want next.
""",
)

kings_bottom = Policy(
    "calc",
    "kings-bottom",
    "sim.policies.calc_kernels:kings_bottom_nb",
    compile_seconds=1,
    description="""\
Kings to the bottom: a K only onto an empty pile, other cards onto later needs.

Foundation moves come first, as in greedy. A turned K, the last card every
foundation wants, goes onto an empty waste pile, so it buries nothing. Any other
card goes onto the pile whose top card will be needed after it, the closest such
fit, so that piles come off in the order the foundations ask for them. With no such
pile, it takes an empty pile, and failing that covers the top card needed latest.
""",
)

planner = Policy(
    "calc",
    "planner",
    "sim.policies.calc_kernels:planner_nb",
    compile_seconds=1,
    params=PLANNER_PARAMS,
    description="""\
The strategy guides' play: piles in reverse order of need, a pile for kings.

Every foundation move is made, and where a card fits several foundations it goes
to the one with the fewest cards, keeping foundations even. A turned K goes onto
the kings' pile (the last waste pile, kept free of other cards while king_pile=1).
Any other card goes where it does least harm: onto a top card the foundations want
after it, the nearer in need the better, so each pile comes off in the reverse of
its building order; burying a card needed sooner costs more, and more again on a
tall pile (depth_weight). An empty pile is a middling choice.
""",
)

mc = Policy(
    "calc",
    "mc",
    "sim.policies.calc_strong:mc_nb",
    compile_seconds=28,
    params=MC_PARAMS,
    description="""\
Monte Carlo search over the unseen cards: try each action on sampled stocks.

The policy sees what a player sees: foundations, waste piles, the turned card and
which cards are still in the stock, never their order. At each decision it plays
every distinct legal action (each foundation it could feed, or else each waste
pile) out to the end of the deal, on random orders of the unseen cards drawn from
its own stream, the same orders for every action. Its playouts move cards to the
foundations as `rollout` does and put the turned card on the pile of lowest cost,
a cost linear in 32 features of the pile fitted to this policy's own choices at
2,048 samples (policies.calc_oracle.PLACEMENT_WEIGHTS, from
benchmarks/calc_placement_fit.py).
An action is worth 1 per win plus score_weight * (score / 52)**3; actions whose mean
trails the leader's by `confidence` standard errors drop out after each batch of
16 orders, and the race stops with one action left or after `samples` orders.
Safe foundation moves are made at once. Once at most `endgame` cards are unseen
(default 5), it plays exactly instead: an expectimax over the unseen ranks
(policies.calc_endgame) gives each action its chance of winning under best play,
each rank turned next weighted by its copies unseen, and the most likely win is
played; if the search passes `endgame_nodes` positions, or every action is lost,
the race decides as before.
""",
)

rollout = Policy(
    "calc",
    "rollout",
    "sim.policies.calc_strong:rollout_nb",
    compile_seconds=7,
    description="""\
A fast placement heuristic: the oracle orders its search by its playouts.

Every card that fits a foundation goes there (where it fits several, to the one
whose next card lies on a waste top, else the one with fewest cards). Any other
card goes where a weighted cost is lowest: covering a top card needed later is
cheap, the more so when the card comes right before it on a foundation; covering
a card needed sooner is dear, less so when other copies of that rank are unseen or
on other waste tops; an empty pile costs about as much as burying; kings go onto
empty piles or other kings. The weights (policies.calc_oracle.PLAYOUT_DEFAULTS) were
tuned for the win rate of this heuristic alone. `mc` plays out a placement cost with
more terms, fitted to its own choices, which wins 13.4% of deals alone to this
heuristic's 11.1%.
""",
)

oracle = Policy(
    "calc",
    "oracle",
    "sim.policies.calc_strong:oracle_nb",
    compile_seconds=30,
    params=ORACLE_PARAMS,
    exact_under=(),
    settle="sim.policies.calc_exact:settle",
    description="""\
It cheats: told the whole stock order, it searches for a line that wins.

Not a player's policy: it reads the order of the stock, which no player sees, to
measure how many deals can be won at all, the ceiling for every honest policy.
Depth-first search over all legal actions (every foundation a card fits, holding a
card back, every distinct waste pile), best playout first, with a transposition
table of positions shown lost (waste piles as a multiset, kings at the bottom of a
pile left out) and forced safe foundation moves; searches allowing few deviations
from the playouts come first, remembering the positions they searched in vain. A
position is also shown lost when even the relaxed game in which every stock card
may skip the waste piles is lost (policies.calc_oracle.relaxed_lost_nb).
After three rounds without a win (or sooner, if they use up `nodes`), a beam
search looks for one: a level per turned card, keeping the nodes / 20 positions
(5,000 by default) whose playouts score best, on positions of its own besides
`nodes`. The beam only finds wins. A deal they leave goes to an exact constraint
model of the deal (policies.calc_exact, OR-Tools' CP-SAT, within `exact`
deterministic seconds): a win comes with its line, played out by the rules; no
solution proves the deal lost.
It searches once, at its first decision: a winning line found is kept in the
state as its plan and played out; a deal shown lost is marked lost. After `nodes`
positions without a win or a proof the searches give up and the deal is played
with the best playout at each turn; the model then decides it (the row becomes its
winning line's, or `unwinnable`), and only if it too runs out of work is the deal
`unknown` (the result's outcome column says so).
""",
)
