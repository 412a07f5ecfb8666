"""The Montana policies: declarations only, read by listings, help and completion
without importing numba. Each kernel is compiled when it first plays; compile_seconds
is how long that took on a two-core machine, for the notice shown before it."""

from sim.policies.registry import Param, Policy

SEARCH_PARAMS = (Param("nodes", int, 50000, "positions one search may explore", 1, 5_000_000),)

SOLVER_PARAMS = (
    Param("nodes", int, 1_000_000, "positions one search may explore", 1, 100_000_000),
    Param("keep", int, 0, "stuck grid to aim for: 0 score, 1 runs, 2 first", 0, 2),
    Param("final", int, 100, "times nodes for a last phase left undecided (0, 1: none)", 0, 1000),
)

random = Policy(
    "montana",
    "random",
    "sim.policies.montana_kernels:random_nb",
    compile_seconds=1,
    description="""\
Uniform among the legal moves: the baseline every policy should beat.

Every gap is filled by a card chosen at random among those the rules allow,
a 2 into column 1 included, whatever it breaks or blocks.
""",
)

first = Policy(
    "montana",
    "first",
    "sim.policies.montana_kernels:first_nb",
    compile_seconds=1,
    description="""\
The first legal move in scan order: gaps by cell, row by row.

The gap nearest the top left is filled first; a column-1 gap takes the 2 of the
lowest suit (C D H S) that lies outside column 1. It never looks ahead.
""",
)

greedy = Policy(
    "montana",
    "greedy",
    "sim.policies.montana_kernels:greedy_nb",
    compile_seconds=1,
    description="""\
The lore's rules of thumb: extend kept runs, never open a dead gap, no loops.

A move that puts a card in its final place, at the end of its row's kept run,
comes first: the first such move in scan order (preferring the shorter run, to
keep rows even, changed nothing measurable over 100,000 deals). Into a column-1
gap goes the 2 that starts the longest run there, with the cards already in
sequence after it. Otherwise the move is chosen by the cell it empties: best the
next cell of a kept run, never (if it can be helped) a gap right of a K or of
another gap; filling a gap left of another gap, which unblocks that one, is
welcome. A 2 never moves from one column 1 to another unless that lengthens a
kept run, so play cannot loop. Ties go to the first in scan order.
""",
)

search = Policy(
    "montana",
    "search",
    "sim.policies.montana_kernels:search_nb",
    compile_seconds=10,
    params=SEARCH_PARAMS,
    description="""\
Looks ahead: a limited-discrepancy search of the open grid picks the line.

All 48 cards are face up, so from the current grid the policy searches the
positions reachable in this deal: first the line the greedy rules would play,
then every line that leaves it at one position, then at two, and so on (depth
first within each pass; a transposition table of grid hashes so that no position
is explored twice with the same leeway), at most `nodes` positions in all. It
stops at the first win found; otherwise it keeps the line to the highest score,
where a stuck position is worth its score and one with moves left a little more
(there the search goes on later). The line is stored as a plan in the state's
spare slots and played move by move; at its end (or at a redeal, which drops the
plan) the policy searches again from where it stands. A search that finds nothing
better than where it stands (nodes=1) leaves the move to the greedy rules. Time
and memory grow with `nodes`: about 0.1 us and 20 bytes a position.
""",
)

solver = Policy(
    "montana",
    "solver",
    "sim.policies.montana_solver:solver_nb",
    compile_seconds=70,
    params=SOLVER_PARAMS,
    exact_under=(("redeals", 0),),
    description="""\
Decides each phase exactly, within a budget: wins when a line wins, else plays
for the redeal.

At the start of each deal phase (and whenever its plan runs out) it first runs a
beam search: level by level it keeps the nodes/50 positions (at most 20,000)
that look best by cards in runs, cards already in their final cells and dead
gaps, up to twice `nodes` positions; a win found there is played. Otherwise it looks
for a win with the search policy's limited-discrepancy search (half of `nodes`
positions, at most 250,000), then searches the game in which a 2 in column 1
never moves again and a run's extension is played first where there is one (half):
small, and it holds most wins. Then it searches the whole game with
the rest, depth first over classes of positions (while column 1 holds a gap, the
orders of its 2s are one class: 2-moves reach each from the others), with a table
of classes seen. A winning line is played: `won`. Otherwise it plays to the best
stuck grid any of these searches saw, for the redeal: keep=0 the most cards in
kept runs (M5), by the shortest line; keep=1 the same, then the most rows with a
run, then the longest shortest run; keep=2 no choice, the first stuck grid met
(the end of the greedy line). In the last phase (no redeal left) a phase these
searches leave undecided is searched again, with `final` times `nodes` positions
(100M at the defaults): the game where 2s stay in column 1 again with an eighth of
them, a beam of up to 262,144 positions a level (over twice those positions, at
most 26M), then the whole game over classes, skipping every class in which some
card can never reach a cell where a won grid holds it (such a class is lost: a
proof) and playing a run's extension alone where it can lose no win; if that runs
out, the same game with every run's extension played first is searched for a win
with a third as many (its loss proves nothing). A deal not won is `lost` when the
whole-game search saw every class, `unknown` when the budget ran out first.
""",
)
