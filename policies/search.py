"""What the built-in searches share: Zobrist keys, tables of positions, move ordering.

Zobrist keys. A search knows a position again by a 64-bit hash: one random key per
(place, item) pair, XORed over the pairs the position holds (so that a search can keep
the hash up to date with two XORs a move). `zobrist_keys` draws them, the same on every
run (numpy's generator from a fixed seed), so that results never depend on the process.

Two kinds of table hold position keys, both open addressing with linear probing:

- a *seen set* (the Montana and Jokers solvers, the Montana search): 0 marks an empty
  slot, so keys are never 0; a key probes from slot key & (size - 1). Its owner keeps
  it at most half full, by its size or by doubling it (`seen_grown_nb`), so that a
  free slot is near; the Montana solver, whose set stops growing at a largest size,
  lets it forget keys past a probe limit instead. `seen_visit_nb` keeps beside each
  key the leeway its subtree was searched with (the Montana search);
- a *stamped table* (the Calculation oracle): a fixed-size cache whose entries carry
  the stamp of the search that wrote them, entries of other stamps counting as empty,
  so that one table serves many searches without being cleared. A key lives within
  STAMPED_PROBES slots of its home; when all are taken, it replaces the one at home.

A table that forgets a position costs a second visit, never a wrong verdict.

Move ordering. `insert_by_value_nb` keeps a short move list in decreasing value as moves
are generated: lists hold a few dozen moves at most, where insertion beats sorting.
"""

import numpy as np
from numba import njit

from sim.engine import compile_cache

compile_cache.install()  # before any kernel is declared

EMPTY_KEY = 0  # a seen set's free slot
STAMPED_PROBES = 4  # slots a key of a stamped table may take, from its home slot on


def zobrist_keys(seed, shape, low=1, high=1 << 62):
    """int64 Zobrist keys in [low, high), one per entry of `shape`, fixed by `seed`.

    A high bound below 2**63 leaves room for sums of keys (calc_oracle adds one per
    waste pile); low=1 keeps a key from being the empty key 0."""
    return np.random.default_rng(seed).integers(low, high, size=shape, dtype=np.int64)


# --- seen sets ----------------------------------------------------------------------


@njit(cache=True)
def new_seen_set_nb(bits):
    """An empty seen set of 2**bits slots."""
    return np.zeros(1 << bits, np.int64)


@njit(cache=True)
def seen_slot_nb(keys, key, probe_limit):
    """The slot holding key, else the first free slot met; -1 when the probe_limit
    slots from key's home are all taken by other keys."""
    mask = keys.shape[0] - 1
    slot = key & mask
    for _ in range(probe_limit):
        if keys[slot] == key or keys[slot] == EMPTY_KEY:
            return slot
        slot = (slot + 1) & mask
    return -1


@njit(cache=True)
def seen_insert_nb(keys, key, probe_limit):
    """Insert key (never 0); True if it was new, False if it was in the set.

    With probe_limit below the table size, a key that finds no free slot within that
    many probes replaces the key at its home slot: the set forgets one position rather
    than grow (a probe_limit of keys.shape[0] never forgets in a set under half full).
    """
    slot = seen_slot_nb(keys, key, probe_limit)
    if slot < 0:
        keys[key & (keys.shape[0] - 1)] = key
        return True
    if keys[slot] == key:
        return False
    keys[slot] = key
    return True


@njit(cache=True)
def seen_grown_nb(keys):
    """The seen set at twice the size, holding the same keys."""
    bigger = np.zeros(2 * keys.shape[0], np.int64)
    for key in keys:
        if key != EMPTY_KEY:
            bigger[seen_slot_nb(bigger, key, bigger.shape[0])] = key
    return bigger


@njit(cache=True)
def seen_visit_nb(keys, leeways, key, leeway):
    """Record a visit of key whose subtree will be searched with `leeway` (a limited
    discrepancy search's allowance); False when it was searched before with as much
    or more, so that nothing new lies below. leeways runs beside keys; the set must
    stay under half full (the owner sizes it for its budget)."""
    slot = seen_slot_nb(keys, key, keys.shape[0])
    if keys[slot] == key and leeways[slot] >= leeway:
        return False
    keys[slot] = key
    leeways[slot] = leeway
    return True


# --- stamped tables -----------------------------------------------------------------


@njit(cache=True)
def new_stamped_table_nb(bits):
    """An empty stamped table of 2**bits entries: (keys, stamps). Stamps start at 0, so
    searches use stamps from 1."""
    return np.zeros(1 << bits, np.int64), np.zeros(1 << bits, np.int32)


@njit(cache=True)
def stamped_home_nb(keys, key):
    # High bits folded in: keys that differ only there (the relaxed game's packed
    # keys in calc_oracle) still spread over the table.
    return (key ^ (key >> 29)) & (keys.shape[0] - 1)


@njit(cache=True)
def stamped_find_nb(keys, stamps, stamp, key):
    """The slot where the search `stamp` stored key, or -1."""
    home = stamped_home_nb(keys, key)
    for probe in range(STAMPED_PROBES):
        slot = (home + probe) & (keys.shape[0] - 1)
        if stamps[slot] == stamp and keys[slot] == key:
            return slot
    return -1


@njit(cache=True)
def stamped_claim_nb(keys, stamps, stamp, key):
    """Store key for the search `stamp` and return its slot (for a value kept beside it):
    key's own slot or the first one left by other searches, else its home slot."""
    home = stamped_home_nb(keys, key)
    slot = home
    for probe in range(STAMPED_PROBES):
        i = (home + probe) & (keys.shape[0] - 1)
        if stamps[i] != stamp or keys[i] == key:
            slot = i
            break
    keys[slot] = key
    stamps[slot] = stamp
    return slot


@njit(cache=True)
def stamped_has_nb(keys, stamps, stamp, key):
    return stamped_find_nb(keys, stamps, stamp, key) >= 0


# --- move ordering ------------------------------------------------------------------


@njit(cache=True)
def insert_by_value_nb(items, values, n, item, value):
    """Insert item into items[:n], kept in decreasing value (values[:n] beside it),
    after the items of equal value, so ties keep their order; return n + 1.

    item may be items[n] itself (its value is passed in), so that a list generated in
    items is put in order where it lies."""
    j = n
    while j > 0 and values[j - 1] < value:
        values[j] = values[j - 1]
        items[j] = items[j - 1]
        j -= 1
    values[j] = value
    items[j] = item
    return n + 1
