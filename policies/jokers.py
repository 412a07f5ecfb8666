"""The Jokers policies: declarations only, read by listings, help and completion
without importing numba. Each kernel is compiled when it first plays; compile_seconds
is how long that took on a two-core machine, for the notice shown before it."""

from sim.policies.registry import Param, Policy

DEFAULT_NODES = 1_000_000

# A deal ends at --max-moves whatever the patience: no patience beyond 10**9 is needed.
RANDOM_PARAMS = (
    Param("patience", int, 200, "resign after this many moves without a foundation move", 1, 10**9),
)

GREEDY_PARAMS = (
    Param("patience", int, 40, "resign after this many moves without a foundation move", 1, 10**9),
)

SOLVER_PARAMS = (
    Param("nodes", int, DEFAULT_NODES, "positions searched before giving up", 1, 10**9),
)

random = Policy(
    "jokers",
    "random",
    "sim.policies.jokers_kernels:random_nb",
    compile_seconds=1,
    params=RANDOM_PARAMS,
    description="""\
Uniform among the legal moves, resigning when it stops making progress.

Every legal move is equally likely, including pointless ones such as a card moved
back and forth, so the deal would often run to the move cap. Instead the policy
resigns once `patience` moves in a row have put nothing on a foundation.
""",
)

greedy = Policy(
    "jokers",
    "greedy",
    "sim.policies.jokers_kernels:greedy_nb",
    compile_seconds=2,
    params=GREEDY_PARAMS,
    description="""\
Foundation moves first, then builds that dig out the cards the foundations want.

Any card that fits its foundation goes there. Otherwise the policy finds, in each
column, the shallowest card a foundation wants next, and prefers the build that
moves a card off the column where that card lies least deep, onto a column that
hides no wanted card. A card resting on its natural predecessor (one rank higher,
other colour) moves only to dig out a wanted card. Builds onto cards come before
everything else, even from columns hiding no wanted card (the shortest column
first, to empty it). A reserve joker or an empty column is spent only on a column
whose wanted card lies within reach of the spare jokers and empty columns, or, last
of all, to uncover a new card. With no such move, or after `patience` moves
without a foundation move, it resigns.
""",
)

solver = Policy(
    "jokers",
    "solver",
    "sim.policies.jokers_kernels:solver_nb",
    compile_seconds=5,
    exact_under=(),
    params=SOLVER_PARAMS,
    description="""\
Exact search: all cards are face up, so a deal can be decided before playing it.

At the first decision the policy searches depth-first from the deal, trying
foundation moves first, then moves digging towards the cards the foundations want,
and jokers and empty columns later; a foundation move that can never hurt is made
at once, alone. A table of positions met (the columns in any order, the two jokers
alike; 64-bit keys) stops it from searching a position twice, so it also ends on
repeated positions (J9). Restarts with a shuffled move order keep one early mistake
from trapping the search (see solve_into_state_nb).
With a winning line found (verdict won) it plays that line move by move. When
every reachable position has been searched without a win (verdict lost), it plays
the line that reached the most foundation cards and resigns. After `nodes`
positions without either (verdict unknown: neither a win nor a loss) it resigns
at once.
""",
)
