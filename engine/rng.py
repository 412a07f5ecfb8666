"""Counter-based random streams: every deal, redeal and policy draws from its own.

A stream is fixed by (seed, deal index, stream id) alone, so results never depend on
how deals are split between workers, chunks or machines. The generator is splitmix64
(a 64-bit state, passes BigCrush); bounded draws use Lemire's unbiased method, so
shuffles are fair Fisher-Yates permutations.

A stream's state is a one-element uint64 array, so kernels can pass it by reference.
"""

import numpy as np
from numba import njit

from sim.engine import compile_cache

compile_cache.install()  # before any kernel is declared

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)
_TWO32 = np.uint64(1 << 32)

# Stream ids: the deal itself, the policy's private stream, redeal k uses REDEAL + k.
STREAM_DEAL = 0
STREAM_POLICY = 1
STREAM_REDEAL = 16


@njit(cache=True)
def _mix_nb(z):
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True)
def stream_state_nb(seed, deal, stream, out):
    """Set out[0] to the start state of stream (seed, deal, stream)."""
    z = _mix_nb(np.uint64(seed) + _GOLDEN)
    z = _mix_nb(z ^ (np.uint64(deal) + _GOLDEN))
    out[0] = _mix_nb(z ^ (np.uint64(stream) * _GOLDEN + _MIX1))


@njit(cache=True)
def next_u64_nb(state):
    state[0] += _GOLDEN
    return _mix_nb(state[0])


@njit(cache=True)
def below_nb(state, n):
    """A uniform integer in [0, n), n < 2**32, without modulo bias (Lemire 2019)."""
    bound = np.uint64(n)
    m = (next_u64_nb(state) >> _S32) * bound
    low = m & _LOW32
    if low < bound:
        threshold = (_TWO32 - bound) % bound
        while low < threshold:
            m = (next_u64_nb(state) >> _S32) * bound
            low = m & _LOW32
    return np.int64(m >> _S32)


@njit(cache=True)
def shuffle_nb(state, values):
    """Fisher-Yates shuffle of values in place."""
    for i in range(values.shape[0] - 1, 0, -1):
        j = below_nb(state, i + 1)
        tmp = values[i]
        values[i] = values[j]
        values[j] = tmp


def new_stream(seed, deal, stream):
    """A fresh stream state for (seed, deal, stream), for use from Python."""
    state = np.zeros(1, np.uint64)
    stream_state_nb(seed, deal, stream, state)
    return state
