"""The worker side of the local pool (engine.run.pool): a forked process that plays the
chunks its pipe brings and sends back what it played.

Each worker leads a process group of its own, so that the parent can end it with every
process it started (a plug-in's child, a forked copy of it) in one kill.

A plug-in policy can fork its worker, and the copy then shares the worker's pipe and
shared memory. So every message names its sender's process and is numbered, and a
copy that comes back into this code (after a choice, before a send, after a receive)
marks itself in the worker's status line and ends at once: the parent stops the run
at the deal it was playing instead of believing rows two processes wrote.
"""

import contextlib
import ctypes
import dataclasses
import os
import signal

from sim.engine import kernel
from sim.engine.run import job
from sim.engine.run.job import ChunkResult, play_chunk

IN_FLIGHT = 2  # chunks handed to a worker at once, so it never waits for the parent
LINE_SLOTS = 16  # int64 slots of a worker's status line: 128 bytes, its own cache line
COPY_PID, COPY_DEAL = 14, 15  # where a forked copy of the worker says it exists
PR_SET_PDEATHSIG = 1


class WorkerFailure(RuntimeError):
    """A worker failed in a way that is not the policy's: a fault of the kernel itself."""


@dataclasses.dataclass
class RowsInSlab:
    """What a worker sends for a chunk whose rows it wrote into its slab, at `slot`:
    the ChunkResult without its rows."""

    slot: int
    done: int
    result: ChunkResult


def worker_main(conn, spec, line, slab, parent):
    """Play the chunks the pipe brings, one message back per chunk, until it closes.

    `line` is the worker's status line (the kernel's status block first), `slab` the
    shared rows of the chunks it holds."""
    _lead_own_group()
    _die_with_parent(parent)
    me = os.getpid()
    job.enter_worker(me, lambda deal: _end_forked_copy(line, deal))
    # The parent owns Ctrl-C and SIGTERM: it stops the workers and writes what they did.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    status = line[: kernel.STATUS_SIZE]
    sent = 0
    while True:
        try:
            chunk = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        _leave_if_a_copy(me, line)
        # The parent holds at most IN_FLIGHT chunks of ours, and copies the rows of each
        # before it sends the next: chunk k can use slot k % IN_FLIGHT.
        slot = sent % IN_FLIGHT
        in_slab = chunk[1] <= slab.shape[1]  # a bigger one (never planned) goes by pipe
        try:
            result = play_chunk(spec, chunk, status, slab[slot] if in_slab else None)
        except BaseException as error:  # a fault of the kernel itself: the parent reports it
            _leave_if_a_copy(me, line)
            conn.send(
                (me, sent, WorkerFailure(f"a worker failed: {type(error).__name__}: {error}"))
            )
            return
        if in_slab:
            result = RowsInSlab(slot, result.done, dataclasses.replace(result, rows=None))
        _leave_if_a_copy(me, line)
        conn.send((me, sent, result))
        sent += 1


def _leave_if_a_copy(me, line):
    if os.getpid() != me:
        _end_forked_copy(line)


def _end_forked_copy(line, deal=-1):
    """Say in the worker's status line that a forked copy of it came back into play,
    and in which deal (-1: not known here), then end this copy without a word on the
    pipe."""
    line[COPY_DEAL] = deal
    line[COPY_PID] = os.getpid()  # last: the parent reads the deal once it sees this
    os._exit(0)


def _lead_own_group():
    # The parent makes the same call for this process: whichever comes first, the
    # group exists before the parent may need to end it.
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)


def _die_with_parent(parent):
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)
