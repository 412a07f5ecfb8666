"""Deals played across local worker processes that can die, loop or be signalled.

The parent forks long-lived workers after it has loaded the kernel, hands each a
couple of chunks at a time over its own pipe, and puts the results back in deal order.
It never blocks on one worker: it waits on every pipe and every process at once, with a
timeout, so that it notices

- a worker that dies (the kernel's out-of-memory killer, `kill -9`): its chunks are
  played again by a fresh worker; a chunk that kills two workers stops the run;
- a deal that makes no progress for `deal_timeout` seconds (a policy that loops): the
  worker is killed and the run stops, naming the deal;
- a stop asked for by a signal: the caller's `should_stop()` turns true.

Each worker writes the deal it is playing into a status block in shared memory, so the
parent always knows where every worker is, and the rows of its chunks into a slab of
shared memory, so that only a few bytes per chunk go through its pipe. Workers die with
the parent (PDEATHSIG), so a killed parent leaves no orphan playing on.
"""

import collections
import contextlib
import ctypes
import dataclasses
import mmap
import multiprocessing
import os
import signal
import time
from multiprocessing.connection import wait

import numpy as np

from sim.engine import kernel
from sim.engine.run import job
from sim.engine.run.job import ChunkResult, play_chunk, release_in_order

CHUNK_SECONDS = 0.25  # a chunk long enough that its overhead is noise, short enough to stop
MAX_CHUNK = 100_000
TAIL_FRACTION = 32  # the last chunks take at least 1/32 of CHUNK_SECONDS (8 ms)
IN_FLIGHT = 2  # chunks handed to a worker at once, so it never waits for the parent
POLL_SECONDS = 0.2
ATTEMPTS = 2  # a chunk whose worker died is played once more, then the run stops


class WorkerFailure(RuntimeError):
    """A worker failed in a way that is not the policy's: a fault of the kernel itself."""


class ChunkPlanner:
    """Chunks (start, count) of deals first .. end - 1, sized as the run goes.

    The first chunks are tiny (one deal for each worker, then 2, 4... deals), so a slow
    policy shows progress from its first deal and a few slow deals are shared out; then
    each chunk is sized to take about CHUNK_SECONDS at the speed measured so far, and
    at most `most` deals. Chunks are made one at a time, so any count of deals costs
    nothing up front."""

    def __init__(self, first, end, workers, seconds=CHUNK_SECONDS, most=MAX_CHUNK):
        self.next_start, self.end, self.workers, self.seconds = first, end, workers, seconds
        self.most = most
        self.last_size, self.made = 0, 0
        self.deals_timed, self.seconds_timed = 0, 0.0

    def record(self, deals, seconds):
        self.deals_timed += deals
        self.seconds_timed += seconds

    def next(self):
        if self.next_start >= self.end:
            return None
        self.made += 1
        size = 1 if self.made <= self.workers else min(self.most, max(1, 2 * self.last_size))
        if self.deals_timed:
            per_deal = max(self.seconds_timed / self.deals_timed, 1e-8)
            target = int(min(self.most, max(1, self.seconds / per_deal)))
            size = min(target, 8 * max(1, self.last_size))
            # Near the end, smaller chunks keep every worker busy to the last deal; none
            # below a TAIL_FRACTION of a full one, where each chunk's cost would show.
            left = self.end - self.next_start
            tail = max(target // TAIL_FRACTION, -(-left // (self.workers * 4)))
            size = max(1, min(size, tail))
        self.last_size = size
        count = min(size, self.end - self.next_start)
        chunk = (self.next_start, count)
        self.next_start += count
        return chunk


class _Worker:
    def __init__(self, context, spec, slot, status, slab):
        self.slot, self.slab = slot, slab
        self.conn, child = context.Pipe()
        self.process = context.Process(
            target=_worker_main, args=(child, spec, status[slot], slab, os.getpid()), daemon=True
        )
        self.process.start()
        child.close()
        self.tasks = collections.deque()  # chunks sent, in the order they will come back
        self.seen_deal, self.seen_at = None, time.monotonic()

    def send(self, chunk):
        self.tasks.append(chunk)
        # If it died (a signal to the whole process group gets there first), its
        # sentinel says so, and its chunks, this one included, are played again.
        with contextlib.suppress(OSError):
            self.conn.send(chunk)

    def kill(self):
        if self.process.is_alive():
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.join()
        self.conn.close()


def play(spec, planner, workers, should_stop, deal_timeout):
    """Yield ChunkResults in deal order; stop at the first policy fault (yielded last)."""
    position = planner.next_start
    pool = _Pool(spec, planner, workers, deal_timeout)
    try:
        pool.feed_all()
        while pool.busy():
            if should_stop():
                raise KeyboardInterrupt
            ready = pool.wait()
            for slot in range(workers):
                pool.tend(slot, ready)
            position = yield from release_in_order(pool.waiting, position)
            if position is None:
                return
        if position < planner.end:  # never expected: a run must not end short in silence
            raise WorkerFailure(f"deals from {position} on were lost between the workers")
    finally:
        pool.kill_all()


class _Pool:
    """The workers of one run, and what is owed: chunks to play again, results held back."""

    def __init__(self, spec, planner, workers, deal_timeout):
        self.spec, self.planner, self.deal_timeout = spec, planner, deal_timeout
        # One 128-byte line per worker: two workers writing one cache line every deal
        # would slow each other down.
        self._shared = mmap.mmap(-1, 128 * workers)
        self.status = np.frombuffer(self._shared, np.int64).reshape(workers, 16)
        self.status = self.status[:, : kernel.STATUS_SIZE]
        columns = len(job.resolve_job(spec).game.columns)
        self.slabs = [_slab(columns) for _ in range(workers)]
        self.context = multiprocessing.get_context("fork")
        self.workers = [self._start(slot) for slot in range(workers)]
        self.retry = collections.deque()  # chunks of dead workers, played before new ones
        self.attempts = collections.Counter()
        self.waiting = {}  # finished chunks held back until every earlier one has arrived
        self.fault_at = None  # the first deal a policy fault stopped, once one is known

    def _start(self, slot):
        return _Worker(self.context, self.spec, slot, self.status, self.slabs[slot])

    def busy(self):
        return any(worker.tasks for worker in self.workers)

    def wait(self):
        """What is ready among the workers' pipes and process sentinels (or nothing, after
        POLL_SECONDS): never blocked on one worker."""
        watched = [w.conn for w in self.workers] + [w.process.sentinel for w in self.workers]
        return wait(watched, POLL_SECONDS)

    def feed_all(self):
        # One chunk to each worker before a second to any: a run of a few slow deals
        # is then shared out, not queued on the first worker.
        for held in range(1, IN_FLIGHT + 1):
            for worker in self.workers:
                self._feed(worker, held)

    def tend(self, slot, ready):
        """Take the worker's result if one is ready, replace it if it died or hangs, and
        keep it supplied with chunks."""
        worker = self.workers[slot]
        if worker.conn in ready:
            self._take_result(worker)
        # Death is decided once: a worker that dies after this check is handled, chunks
        # and all, in the next round.
        failure, replace = None, False
        if not worker.process.is_alive():  # whether or not its sentinel woke us
            failure, replace = _died(worker, self.status, self.retry, self.attempts), True
        elif (stuck := _stuck_deal(worker, self.status, self.deal_timeout)) is not None:
            failure = _stop_at(worker, stuck, self.retry, job.loop_reason(self.deal_timeout))
            replace = True
        if replace:
            self.workers[slot] = worker = self._start(slot)
        if failure is not None:
            self.waiting[failure.start] = failure
            self._note_fault(failure.start)
        self._feed(worker)

    def _take_result(self, worker):
        result = _receive(worker)
        if result is not None:
            self.planner.record(result.done, result.seconds)
            self.waiting[result.start] = result
            if result.fault is not None:
                self._note_fault(result.fault_deal)

    def _note_fault(self, deal):
        self.fault_at = min(self.fault_at or deal, deal)

    def _feed(self, worker, held=IN_FLIGHT):
        """Hand the worker chunks until it holds `held`: those to play again first, then
        new ones until a fault is known (deals past it would be thrown away)."""
        while len(worker.tasks) < held:
            chunk = self.retry.popleft() if self.retry else None
            if chunk is None and self.fault_at is None:
                chunk = self.planner.next()
            if chunk is None:
                return
            worker.send(chunk)

    def kill_all(self):
        for worker in self.workers:
            worker.kill()


def _slab(columns):
    """Shared memory for the rows of a worker's chunks: IN_FLIGHT chunks of up to
    MAX_CHUNK deals, one per chunk it holds (pages are only used once written)."""
    shared = mmap.mmap(-1, IN_FLIGHT * MAX_CHUNK * max(1, columns) * 4)
    return np.frombuffer(shared, np.int32).reshape(IN_FLIGHT, MAX_CHUNK, max(1, columns))


@dataclasses.dataclass
class _RowsInSlab:
    """What a worker sends for a chunk whose rows it wrote into its slab, at `slot`:
    the ChunkResult without its rows."""

    slot: int
    done: int
    result: ChunkResult


def _receive(worker):
    try:
        message = worker.conn.recv()
    except (EOFError, OSError):
        return None  # it died mid-message; the sentinel says so next
    if isinstance(message, BaseException):
        raise message
    worker.tasks.popleft()
    if isinstance(message, _RowsInSlab):
        # Copied out now: the worker plays into this slot again once it is sent another
        # chunk, and this one may wait for an earlier chunk before it is written.
        rows = worker.slab[message.slot, : message.done].copy()
        message = dataclasses.replace(message.result, rows=rows)
    return message


def _died(worker, status, retry, attempts):
    """Send a dead worker's chunks to retry; a fault once a chunk has killed two."""
    code = worker.process.exitcode
    deal = int(status[worker.slot, kernel.IN_PLAY])
    if worker.tasks:
        attempts[worker.tasks[0]] += 1
        if attempts[worker.tasks[0]] >= ATTEMPTS:
            if code < 0:
                reason = f"lost its worker to signal {-code}, twice (out of memory?)"
            else:
                reason = f"ended its worker process, twice (exit code {code})"
            return _stop_at(worker, deal, retry, reason)
    retry.extendleft(reversed(worker.tasks))
    worker.kill()
    return None


def _stuck_deal(worker, status, deal_timeout):
    """The deal a worker has been playing for longer than deal_timeout, if any."""
    now = time.monotonic()
    deal = int(status[worker.slot, kernel.IN_PLAY])
    # A deal outside the worker's oldest chunk is the last one of a chunk already sent
    # back: the next has not started yet, so no deal of it can have stalled.
    start, count = worker.tasks[0] if worker.tasks else (0, 0)
    if not start <= deal < start + count or deal != worker.seen_deal:
        worker.seen_deal, worker.seen_at = deal, now
        return None
    return deal if now - worker.seen_at > deal_timeout else None


def _stop_at(worker, deal, retry, reason):
    """Kill a failed worker; its deals before `deal` are played again elsewhere."""
    worker.kill()
    start, _ = worker.tasks[0]
    if deal > start:
        retry.appendleft((start, deal - start))
    empty = np.zeros((0, 0), np.int32)
    return ChunkResult(deal, empty, empty.astype(np.int16), 0.0, reason)


def _worker_main(conn, spec, status, slab, parent):
    _die_with_parent(parent)
    job.IN_WORKER = True
    # The parent owns Ctrl-C and SIGTERM: it stops the workers and writes what they did.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    received = 0
    while True:
        try:
            chunk = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        # The parent holds at most IN_FLIGHT chunks of ours, and copies the rows of each
        # before it sends the next: chunk k can use slot k % IN_FLIGHT.
        slot = received % IN_FLIGHT
        received += 1
        in_slab = chunk[1] <= slab.shape[1]  # a bigger one (never planned) goes by pipe
        try:
            result = play_chunk(spec, chunk, status, slab[slot] if in_slab else None)
        except BaseException as error:  # a fault of the kernel itself: the parent reports it
            conn.send(WorkerFailure(f"a worker failed: {type(error).__name__}: {error}"))
            return
        if in_slab:
            result = _RowsInSlab(slot, result.done, dataclasses.replace(result, rows=None))
        conn.send(result)


def _die_with_parent(parent):
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)


__all__ = ["ChunkPlanner", "ChunkResult", "WorkerFailure", "play"]
