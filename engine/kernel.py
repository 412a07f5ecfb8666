"""The compiled signatures every game shares.

A policy is passed to a game's cached kernel as a first-class function of POLICY_SIG,
so one compiled kernel serves every policy, built-in or plugged in.
"""

from numba import types

POLICY_SIG = types.int64(
    types.int16[::1],  # state
    types.int16[::1],  # legal actions
    types.int64,  # number of legal actions
    types.float64[::1],  # policy parameters
    types.uint64[::1],  # the policy's random stream
)
POLICY_TYPE = types.FunctionType(POLICY_SIG)

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
