"""The compiled signatures every game shares, the codes its kernels report, and the
convention of the policy's scratch block.

The state. A game's whole position is one int16 array of STATE_SIZE entries, in two
parts. state[:POLICY_SCRATCH] belongs to the rules: only dealing and playing actions
change it, and a policy that is not built in is stopped if it writes there. The rest,
state[POLICY_SCRATCH:], is the policy's scratch block: what a search keeps from one
decision to the next (its verdict, the line it plans to play). The rules touch it in
two ways only: dealing (and, in Montana, each redeal: a new phase to decide) clears it
for a new search (clear_scratch_nb: verdict VERDICT_PENDING, no plan), and the result
row reads the verdict from it (a deal not won whose verdict is OUTCOME_UNKNOWN is
recorded as `unknown`; Jokers also records the nodes its solver searched). Each rules
module draws its block in its state table and declares there, as SCRATCH_* constants,
the slots its built-in searches use.

Outcome codes. A result row's `outcome` is one code, the same for every game: the index
of its label in engine.outcomes.LABELS (OUTCOME_LOST, OUTCOME_WON, OUTCOME_CAPPED,
OUTCOME_UNKNOWN, OUTCOME_UNWINNABLE below). A search that decides a deal reports its
verdict in the same codes: won, lost (proved lost), unknown (its budget ran out
first); before it has decided, the verdict is VERDICT_PENDING.

A policy is passed to a game's cached kernel as a first-class function of POLICY_SIG,
so one compiled kernel serves every policy, built-in or plugged in.

`play_deals_nb` reports through a small int64 status block, so that the process that
runs it (or one watching it through shared memory) knows which deal is in play and
why play stopped early:

    index        name         meaning
    0            IN_PLAY      the deal being played now (written before each deal)
    1            DONE         deals of the chunk finished, with their rows written
    2            FAULT        why play stopped early: FAULT_NONE, or a policy fault below
"""

from numba import njit, types

from sim.engine import compile_cache

compile_cache.install()  # before any kernel is declared

POLICY_SIG = types.int64(
    types.int16[::1],  # state
    types.int16[::1],  # legal actions
    types.int64,  # number of legal actions
    types.float64[::1],  # policy parameters
    types.uint64[::1],  # the policy's random stream
)
POLICY_TYPE = types.FunctionType(POLICY_SIG)

# play_out_nb(seed, deal, rules, state, policy, params, stream, log) -> fault code: the
# game's play from a given state (a layout, a deal sim did not shuffle), compiled once
# for any policy of POLICY_SIG. A game's play_out_nb may take further arguments with
# defaults (engine.run.job.compiled_play_out compiles it with those left out).
PLAY_OUT_ARGS = (
    types.int64,
    types.int64,
    types.int64[::1],
    types.int16[::1],
    POLICY_TYPE,
    types.float64[::1],
    types.uint64[::1],
    types.int16[::1],
)

# play_chunk_nb(policy, seed, start, rules, params, rows, logs)
PLAY_CHUNK_SIG = types.void(
    POLICY_TYPE,
    types.int64,
    types.int64,
    types.int64[::1],
    types.float64[::1],
    types.int32[:, ::1],
    types.int16[:, ::1],
)

# play_deals_nb(policy, seed, start, rules, params, rows, logs, status)
PLAY_DEALS_SIG = types.void(*PLAY_CHUNK_SIG.args, types.int64[::1])

# How a deal ended, by the index of its label in engine.outcomes.LABELS.
OUTCOME_LOST = 0
OUTCOME_WON = 1
OUTCOME_CAPPED = 2  # the move cap stopped play
OUTCOME_UNKNOWN = 3  # not won, and a search could not prove it lost
# Not won, and a search proved from the deal as dealt that no line of play wins: a loss
# that is a fact about the deal, where OUTCOME_LOST only says this play did not win.
OUTCOME_UNWINNABLE = 4
VERDICT_PENDING = -1  # a search's verdict before it has decided: no outcome code

# A hot kernel that allocates nothing and returns no array is compiled without the
# runtime's reference counts (numba's `_nrt=False`, which numba's own allocation-free
# helpers use). Otherwise every array a function hands to an inlined helper may cost an
# atomic increment and decrement that LLVM cannot prune inside loops: they were 72% of
# the time of a Calculation playout (`perf`), which took 9.5 us with them and 3.4 us
# without. numba refuses to compile an allocation in such a function, so a later edit
# that allocates fails loudly rather than leaking or crashing.
njit_no_refcounts = njit(cache=True, _nrt=False)

IN_PLAY, DONE, FAULT = 0, 1, 2
STATUS_SIZE = 3

FAULT_NONE = 0
FAULT_BAD_CHOICE = 1  # the policy returned an index outside the legal list
FAULT_STATE_WRITTEN = 2  # a guarded policy wrote into the rules part of the state
FAULT_LEGAL_WRITTEN = 3  # a guarded policy wrote into the legal list
FAULT_NOT_AN_INDEX = 4  # a guarded Python policy returned something not an integer

# What a guarded policy returns in place of a choice that breaks the contract.
CHOICE_STATE_WRITTEN = -1_000_001
CHOICE_LEGAL_WRITTEN = -1_000_002
CHOICE_NOT_AN_INDEX = -1_000_003


@njit(cache=True)
def choice_fault_nb(choice, n_legal):
    """FAULT_NONE for a valid index into the legal list, else the fault it reveals."""
    if 0 <= choice < n_legal:
        return FAULT_NONE
    if choice == CHOICE_STATE_WRITTEN:
        return FAULT_STATE_WRITTEN
    if choice == CHOICE_LEGAL_WRITTEN:
        return FAULT_LEGAL_WRITTEN
    if choice == CHOICE_NOT_AN_INDEX:
        return FAULT_NOT_AN_INDEX
    return FAULT_BAD_CHOICE
