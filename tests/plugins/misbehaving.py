"""Plug-in Calculation policies that misbehave, as a careless or hostile author's might.

Each plays like greedy except on the deals whose stock starts with the card TRIGGER
(about one deal in 48), where it does the one wrong thing its name says; forkrun and
spawns instead start processes of their own as they play.
"""

import os
import subprocess
import sys
import time

from numba import njit

from sim.engine.calc import FCOUNT, STOCK
from sim.engine.kernel import POLICY_SIG
from sim.policies.calc import greedy
from sim.policies.calc_kernels import greedy_nb
from sim.policies.registry import Param, param_slots, policy

TRIGGER = 5  # the code of a card that is not an ace..4, so it can lead the stock
_greedy = greedy.choose.py_func


@policy("calc", name="loops")
def loops(state, legal, n_legal, params, stream):
    """Never returns on the trigger deals."""
    while state[STOCK] == TRIGGER:
        time.sleep(0.05)
    return _greedy(state, legal, n_legal, params, stream)


@policy("calc", name="sleeps")
def sleeps(state, legal, n_legal, params, stream):
    """Sleeps for an hour, in one call, on the trigger deals."""
    if state[STOCK] == TRIGGER:
        time.sleep(3600)
    return _greedy(state, legal, n_legal, params, stream)


NAP_FILE = "SIM_TEST_NAP_FILE"  # where `naps` writes when it fell asleep


@policy("calc", name="naps")
def naps(state, legal, n_legal, params, stream):
    """Sleeps for an hour on the trigger deals, once it has written the time it fell
    asleep (time.monotonic) to the file SIM_TEST_NAP_FILE names."""
    if state[STOCK] == TRIGGER:
        with open(os.environ[NAP_FILE], "w") as file:
            file.write(repr(time.monotonic()))
        time.sleep(3600)
    return _greedy(state, legal, n_legal, params, stream)


@policy("calc", name="exits")
def exits(state, legal, n_legal, params, stream):
    """Calls sys.exit on the trigger deals."""
    if state[STOCK] == TRIGGER:
        sys.exit(3)
    return _greedy(state, legal, n_legal, params, stream)


@policy("calc", name="dies")
def dies(state, legal, n_legal, params, stream):
    """Ends its own process on the trigger deals, as a crash in native code would."""
    if state[STOCK] == TRIGGER:
        os._exit(9)
    return _greedy(state, legal, n_legal, params, stream)


@policy("calc", name="raises")
def raises(state, legal, n_legal, params, stream):
    """Divides by zero on the trigger deals."""
    if state[STOCK] == TRIGGER:
        return 1 // 0
    return _greedy(state, legal, n_legal, params, stream)


@policy("calc", name="bad-index")
def bad_index(state, legal, n_legal, params, stream):
    """Returns an index past the legal list on the trigger deals."""
    if state[STOCK] == TRIGGER:
        return n_legal
    return _greedy(state, legal, n_legal, params, stream)


@policy("calc", name="cheats")
def cheats(state, legal, n_legal, params, stream):
    """Fills the foundations in the state it is given on the trigger deals."""
    if state[STOCK] == TRIGGER:
        state[FCOUNT : FCOUNT + 4] = 13
    return _greedy(state, legal, n_legal, params, stream)


@policy("calc", name="cheats-compiled")
@njit(POLICY_SIG, cache=True)
def cheats_compiled_nb(state, legal, n_legal, params, stream):
    """Compiled, and fills the foundations on the trigger deals."""
    if state[STOCK] == TRIGGER:
        for k in range(4):
            state[FCOUNT + k] = 13
    return 0


@policy("calc", name="loops-compiled")
@njit(POLICY_SIG, cache=True)
def loops_compiled_nb(state, legal, n_legal, params, stream):
    """Compiled, and never returns on the trigger deals: it holds the interpreter's lock."""
    while state[STOCK] == TRIGGER:
        pass
    return greedy_nb(state, legal, n_legal, params, stream)


@policy("calc", name="interrupts")
def interrupts(state, legal, n_legal, params, stream):
    """Raises KeyboardInterrupt itself on the trigger deals."""
    if state[STOCK] == TRIGGER:
        raise KeyboardInterrupt
    return _greedy(state, legal, n_legal, params, stream)


@policy("calc", name="writes-legal")
def writes_legal(state, legal, n_legal, params, stream):
    """Rewrites the legal list on the trigger deals."""
    if state[STOCK] == TRIGGER:
        legal[0] = 3
    return _greedy(state, legal, n_legal, params, stream)


@policy("calc", name="returns-float")
def returns_float(state, legal, n_legal, params, stream):
    """Returns 0.5 on the trigger deals."""
    if state[STOCK] == TRIGGER:
        return 0.5
    return _greedy(state, legal, n_legal, params, stream)


FORK_PARAMS = (Param("fork_at", int, 50, "the choice of its process on which it forks"),)
(FORK_AT,) = param_slots(FORK_PARAMS, "fork_at")
_choices = [0]  # this process's choices so far: a forked copy counts on from its parent's


@policy("calc", name="forkrun", params=FORK_PARAMS)
def forkrun(state, legal, n_legal, params, stream):
    """Forks its process on its 50th choice (fork_at); both copies play on, over the one
    pipe and shared memory of the worker."""
    _choices[0] += 1
    if _choices[0] == params[FORK_AT]:
        os.fork()
    return _greedy(state, legal, n_legal, params, stream)


CHILD_PID_FILE = "SIM_TEST_CHILD_PID_FILE"  # where `spawns` writes its child's process id
_spawned = [False]


@policy("calc", name="spawns")
def spawns(state, legal, n_legal, params, stream):
    """Starts a child process that sleeps for ten minutes, on its process's first
    choice, and plays like greedy: a complete run must not leave the child behind."""
    if not _spawned[0]:
        _spawned[0] = True
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        with open(os.environ[CHILD_PID_FILE], "a") as file:
            file.write(f"{child.pid}\n")
    return _greedy(state, legal, n_legal, params, stream)


def _worker_locals():
    """The local variables of the pool worker's own loop, up the stack of this choice:
    what a hostile policy could reach."""
    frame = sys._getframe()
    while frame.f_code.co_name != "worker_main":
        frame = frame.f_back
    return frame.f_locals


@policy("calc", name="fork-scribbles", params=FORK_PARAMS)
def fork_scribbles(state, legal, n_legal, params, stream):
    """Forks on its 50th choice (fork_at); the copy never chooses again, but fills the
    worker's shared rows with -1 for a few seconds, while the worker plays on unaware."""
    _choices[0] += 1
    if _choices[0] == params[FORK_AT] and os.fork() == 0:
        slab = _worker_locals()["slab"]
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            slab.fill(-1)
        os._exit(0)
    return _greedy(state, legal, n_legal, params, stream)


FORGE_PARAMS = (
    *FORK_PARAMS,
    Param("forge", int, 0, "0: the copy writes as itself; 1: as the worker, message 0 again"),
)
(FORGE,) = param_slots(FORGE_PARAMS, "forge")


@policy("calc", name="fork-writes", params=FORGE_PARAMS)
def fork_writes(state, legal, n_legal, params, stream):
    """Forks on its 50th choice (fork_at); the copy never chooses again, but a moment
    later writes a message of its own into the worker's pipe."""
    _choices[0] += 1
    if _choices[0] == params[FORK_AT] and os.fork() == 0:
        conn = _worker_locals()["conn"]
        time.sleep(0.2)  # the worker has sent its first results by then
        sender = os.getpid() if params[FORGE] == 0 else os.getppid()
        conn.send((sender, 0, "rows"))
        os._exit(0)
    return _greedy(state, legal, n_legal, params, stream)
