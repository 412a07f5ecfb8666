"""A chunk played in this process under a watch for a deal that makes no progress.

The local pool watches its workers from the parent (engine.run.pool), and plays the
deals that size a Dask run's tasks too. Where no other process watches (each Dask task
on its worker), a policy that loops would hang the run. So the chunk is
played in a daemon thread while the calling thread reads its status block: a deal still
in play after `deal_timeout` seconds ends the chunk with the rows of the deals before it
and the fault that names it, as the pool's would.

The looping thread is then asked to stop: an exception is raised in it at its next
line of Python, which ends a policy that loops in Python. One that stays inside a single
call (a sleep of an hour) is left running, and whoever owns the process ends it: the run
stops at the fault, and on a Dask cluster the workers playing the run's chunks are
restarted (engine.run.cluster). A compiled policy that
loops holding the interpreter's lock stops the watch with it; a Dask run leaves that
case to the cluster's own check of silent workers.
"""

import ctypes
import threading
import time

import numpy as np

from sim.engine import kernel
from sim.engine.run.job import LOG_END, ChunkResult, loop_reason, play_job, resolve_job

POLL_SECONDS = 0.2
STOP_GRACE_SECONDS = 1.0  # for a looping thread to end once asked to


class GivenUp(BaseException):
    """Raised in the thread of a deal that made no progress, to end it."""


def play_chunk_watched(spec, chunk, deal_timeout):
    """The ChunkResult of the chunk (start, count) of the job spec, cut at a deal that
    makes no progress for deal_timeout seconds."""
    start, count = chunk
    job = resolve_job(spec)
    play_job(job, start, 0)  # loads or compiles the kernel: a first compile is no loop
    status = np.zeros(kernel.STATUS_SIZE, np.int64)
    status[kernel.IN_PLAY] = start
    rows = np.zeros((count, len(job.game.columns)), np.int32)
    logs = np.full((count, job.log_width), LOG_END, np.int16)
    played = {}

    def play():
        try:
            played["result"] = play_job(job, start, count, status, rows, logs)
        except BaseException as error:  # handed to the caller, which raises it
            played["error"] = error

    clock = time.perf_counter()
    worker = threading.Thread(target=play, name=f"sim-chunk-{start}", daemon=True)
    worker.start()
    stalled = _watch(worker, status, deal_timeout)
    if stalled is None:
        if "error" in played:
            raise played["error"]
        return played["result"]
    finished = max(0, min(int(status[kernel.DONE]), stalled - start))
    seconds = time.perf_counter() - clock
    kept = rows[:finished].copy(), logs[:finished].copy()
    still_running = not _stopped(worker)
    return ChunkResult(start, *kept, seconds, loop_reason(deal_timeout), stalled=still_running)


def _stopped(worker):
    """Whether the thread ended once GivenUp was raised in it."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(worker.ident), ctypes.py_object(GivenUp)
    )
    worker.join(STOP_GRACE_SECONDS)
    return not worker.is_alive()


def _watch(worker, status, deal_timeout):
    """Wait for the worker thread; the deal it is stuck on, or None once it ends."""
    seen, since = None, time.monotonic()
    while True:
        worker.join(POLL_SECONDS)
        if not worker.is_alive():
            return None
        deal, now = int(status[kernel.IN_PLAY]), time.monotonic()
        if deal != seen:
            seen, since = deal, now
        elif now - since > deal_timeout:
            return deal
