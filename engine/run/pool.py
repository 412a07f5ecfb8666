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

Nothing a worker sends is believed unchecked (engine.run.pool_worker): a message must
come from the worker's own process, in turn, for the chunk due. A worker whose pipe
carries anything else, or that was forked by its policy, stops the run at the first
deal it may not have played alone; each worker leads a process group, and the group is
killed when the worker is done with, at the end of a complete run too, so no process a
policy started outlives the run.
"""

import collections
import contextlib
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
from sim.engine.run.job import ChunkResult
from sim.engine.run.pool_worker import (
    COPY_DEAL,
    COPY_PID,
    IN_FLIGHT,
    LINE_SLOTS,
    RowsInSlab,
    WorkerFailure,
    worker_main,
)

CHUNK_SECONDS = 0.25  # a chunk long enough that its overhead is noise, short enough to stop
MAX_CHUNK = 100_000
TAIL_FRACTION = 32  # the last chunks take at least 1/32 of CHUNK_SECONDS (8 ms)
POLL_SECONDS = 0.2
# A short --deal-timeout is looked at ten times over, so that it is kept to a tenth.
POLL_SHARE, SHORTEST_POLL = 10, 0.005
ATTEMPTS = 2  # a chunk whose worker died is played once more, then the run stops


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
    def __init__(self, context, spec, slot, line, slab):
        self.slot, self.line, self.slab = slot, line, slab
        line[:] = 0  # nothing of the worker this slot had before
        self.conn, child = context.Pipe()
        self.process = context.Process(
            target=worker_main, args=(child, spec, line, slab, os.getpid()), daemon=True
        )
        self.process.start()
        child.close()
        # The worker makes the same call: whichever comes first, its group exists.
        with contextlib.suppress(OSError):
            os.setpgid(self.process.pid, self.process.pid)
        self.tasks = collections.deque()  # chunks sent, in the order they will come back
        self.received = 0  # messages taken from it: the number the next one must bear
        self.seen_deal, self.seen_at = None, time.monotonic()
        self.killed = False

    def send(self, chunk):
        self.tasks.append(chunk)
        # If it died (killed from outside, say), its sentinel says so, and its chunks,
        # this one included, are played again.
        with contextlib.suppress(OSError):
            self.conn.send(chunk)

    def forked_copy(self):
        """(process id, deal or -1) of a forked copy of the worker that came back into
        play, as the copy wrote them in the status line; None when none did."""
        pid = int(self.line[COPY_PID])
        return None if pid == 0 else (pid, int(self.line[COPY_DEAL]))

    def kill(self):
        """End the worker and every process of its group, whether it is alive or not:
        a child its policy started, a forked copy of it."""
        if self.killed:
            return
        self.killed = True
        pid = self.process.pid
        # The group first: until the worker is reaped its id cannot name another group.
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        if self.process.is_alive():  # its own group not made: it is killed alone
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self.process.join()
        self.conn.close()


def play(spec, planner, workers, should_stop, deal_timeout, note=None):
    """Yield ChunkResults in deal order; stop at the first policy fault (yielded last).

    `note(line)`, if given, is told once at the end of workers lost and replaced."""
    pool = _Pool(spec, planner, workers, deal_timeout)
    try:
        pool.feed_all()
        while pool.busy():
            if should_stop():
                raise KeyboardInterrupt
            ready = pool.wait()
            for slot in range(workers):
                pool.tend(slot, ready)
            if not (yield from pool.release()):
                return
        if pool.position < planner.end:  # never expected: a run must not end short in silence
            raise WorkerFailure(f"deals from {pool.position} on were lost between the workers")
    finally:
        pool.kill_all()
        # A run a fault stopped says why in its error: a replacement is no news then.
        if note is not None and pool.replaced and pool.fault_at is None:
            note(_replaced_note(pool.replaced))


class _Disturbed(Exception):
    """What came through a worker's pipe is not what the worker owed: the reason."""


class _Pool:
    """The workers of one run, and what is owed: chunks to play again, results held back."""

    def __init__(self, spec, planner, workers, deal_timeout):
        self.spec, self.planner, self.deal_timeout = spec, planner, deal_timeout
        self.poll = min(POLL_SECONDS, max(SHORTEST_POLL, deal_timeout / POLL_SHARE))
        self._shared = mmap.mmap(-1, 8 * LINE_SLOTS * workers)
        self.lines = np.frombuffer(self._shared, np.int64).reshape(workers, LINE_SLOTS)
        self.status = self.lines[:, : kernel.STATUS_SIZE]
        columns = len(job.resolve_job(spec).game.columns)
        self.columns = max(1, columns)
        self.slabs = [_slab(columns) for _ in range(workers)]
        self.context = multiprocessing.get_context("fork")
        self.workers = [self._start(slot) for slot in range(workers)]
        self.retry = collections.deque()  # chunks of dead workers, played before new ones
        self.attempts = collections.Counter()
        self.waiting = {}  # finished chunks held back until every earlier one has arrived
        self.sources = {}  # the slot of the worker that sent each result in waiting
        self.position = planner.next_start  # the first deal not yet released
        self.fault_at = None  # the first deal a policy fault stopped, once one is known
        self.replaced = []  # how each worker lost and replaced ended

    def _start(self, slot):
        return _Worker(self.context, self.spec, slot, self.lines[slot], self.slabs[slot])

    def busy(self):
        return any(worker.tasks for worker in self.workers)

    def wait(self):
        """What is ready among the workers' pipes and process sentinels (or nothing, after
        the poll interval): never blocked on one worker."""
        watched = [w.conn for w in self.workers] + [w.process.sentinel for w in self.workers]
        return wait(watched, self.poll)

    def feed_all(self):
        # One chunk to each worker before a second to any: a run of a few slow deals
        # is then shared out, not queued on the first worker.
        for held in range(1, IN_FLIGHT + 1):
            for worker in self.workers:
                self._feed(worker, held)

    def release(self):
        """Yield the held results that continue the deals released so far, in order;
        returns False once one with a fault was yielded: play stops there."""
        while self.position in self.waiting:
            result = self.waiting.pop(self.position)
            self.sources.pop(self.position, None)
            yield result
            if result.fault is not None:
                return False
            self.position += result.done
        return True

    def tend(self, slot, ready):
        """Take the worker's result if one is ready, stop the run where it misbehaved,
        replace it if it died or hangs, and keep it supplied with chunks."""
        worker = self.workers[slot]
        failed = self._misbehaved(worker, ready)
        if failed is None and not worker.process.is_alive():  # whether or not its sentinel woke us
            # Death is decided once: a worker that dies after this check is handled,
            # chunks and all, in the next round.
            failed = self._died(worker)
        elif failed is None:
            stuck = _stuck_deal(worker, self.status, self.deal_timeout)
            if stuck is not None:
                failed = self._stop_at(worker, stuck, job.loop_reason(self.deal_timeout))
        if failed:
            self.workers[slot] = worker = self._start(slot)
        self._feed(worker)

    def _misbehaved(self, worker, ready):
        """True if the worker's policy forked it or its pipe was disturbed (the run is
        then stopped); None otherwise, once its result, if any, is taken."""
        copy = worker.forked_copy()
        if copy is None and worker.conn in ready:
            try:
                self._take_result(worker)
                return None
            except _Disturbed as disturbed:
                return self._stop_at(worker, None, f"disturbed its worker's pipe: {disturbed}")
        if copy is None:
            return None
        pid, deal = copy
        reason = f"forked its worker process, and the copy (process {pid}) played on"
        return self._stop_at(worker, deal if deal >= 0 else None, reason)

    def _take_result(self, worker):
        result = _receive(worker, self.columns)
        if result is None:
            return
        self.planner.record(result.done, result.seconds)
        if self.fault_at is not None and result.start >= self.fault_at:
            return  # past where the run stops: never released
        self.waiting[result.start] = result
        self.sources[result.start] = worker.slot
        if result.fault is not None:
            self._note_fault(result.fault_deal)

    def _note_fault(self, deal):
        self.fault_at = min(self.fault_at if self.fault_at is not None else deal, deal)

    def _feed(self, worker, held=IN_FLIGHT):
        """Hand the worker chunks until it holds `held`: those to play again first, then
        new ones until a fault is known (deals past it would be thrown away)."""
        while len(worker.tasks) < held:
            chunk = self.retry.popleft() if self.retry else None
            if chunk is not None and self.fault_at is not None and chunk[0] >= self.fault_at:
                continue
            if chunk is None and self.fault_at is None:
                chunk = self.planner.next()
            if chunk is None:
                return
            worker.send(chunk)

    def _died(self, worker):
        """Send a dead worker's chunks to retry and replace it (True); stop the run once
        a chunk has killed two."""
        code = worker.process.exitcode
        deal = _deal_in_play(worker, self.status)
        if worker.tasks:
            self.attempts[worker.tasks[0]] += 1
            if self.attempts[worker.tasks[0]] >= ATTEMPTS:
                if code < 0:
                    reason = f"lost its worker to signal {-code}, twice (out of memory?)"
                else:
                    reason = f"ended its worker process, twice (exit code {code})"
                at = worker.tasks[0][0] if deal is None else deal
                return self._stop_at(worker, at, reason)
        self.retry.extendleft(reversed(worker.tasks))
        worker.kill()
        self.replaced.append((code, deal))
        return True

    def _stop_at(self, worker, deal, reason):
        """Kill a failed worker and stop the run at `deal` (None: at its first deal not
        yet released). Its deals before that, not yet sent back, are played again
        elsewhere; results of deals from there on are never released. True: the worker
        is to be replaced."""
        worker.kill()
        own = [s for s, slot in self.sources.items() if slot == worker.slot]
        unsent = [start for start, _ in worker.tasks]
        cut = deal if deal is not None else min(own + unsent, default=self.position)
        cut = max(cut, self.position)
        self._cut_held_results(cut)
        unplayed = [(start, min(count, cut - start)) for start, count in worker.tasks]
        self.retry.extendleft(reversed([chunk for chunk in unplayed if chunk[1] > 0]))
        empty = np.zeros((0, 0), np.int32)
        self.waiting[cut] = ChunkResult(cut, empty, empty.astype(np.int16), 0.0, reason)
        self._note_fault(cut)
        return True

    def _cut_held_results(self, cut):
        """Drop the held results of deals from `cut` on, and shorten one that runs past it."""
        for start in [start for start in self.waiting if start >= cut]:
            del self.waiting[start]
            self.sources.pop(start, None)
        for start, result in self.waiting.items():
            if start + result.done > cut:
                kept = cut - start
                self.waiting[start] = dataclasses.replace(
                    result, rows=result.rows[:kept], logs=result.logs[:kept], fault=None
                )

    def kill_all(self):
        for worker in self.workers:
            worker.kill()


def _deal_in_play(worker, status):
    """The deal the worker's status names, if it is one of the chunk it plays (between
    two chunks it still names the last deal of the one before); else None."""
    deal = int(status[worker.slot, kernel.IN_PLAY])
    start, count = worker.tasks[0] if worker.tasks else (0, 0)
    return deal if start <= deal < start + count else None


def _replaced_note(replaced):
    """One line on the workers lost and replaced: how they ended, and that their deals
    were played again."""
    if len(replaced) == 1:
        code, deal = replaced[0]
        how = f"was killed by signal {-code}" if code < 0 else f"ended with exit code {code}"
        during = f" during deal {deal}" if deal is not None else ""
        return (
            f"a worker process {how}{during} and was replaced; its deals were played "
            "again (rows unchanged)"
        )
    ends = sorted({f"signal {-code}" if code < 0 else f"exit code {code}" for code, _ in replaced})
    return (
        f"{len(replaced)} worker processes were lost ({', '.join(ends)}) and replaced; their "
        "deals were played again (rows unchanged)"
    )


def _slab(columns):
    """Shared memory for the rows of a worker's chunks: IN_FLIGHT chunks of up to
    MAX_CHUNK deals, one per chunk it holds (pages are only used once written)."""
    shared = mmap.mmap(-1, IN_FLIGHT * MAX_CHUNK * max(1, columns) * 4)
    return np.frombuffer(shared, np.int32).reshape(IN_FLIGHT, MAX_CHUNK, max(1, columns))


def _receive(worker, columns):
    """The worker's next ChunkResult (None: it died mid-message); raises _Disturbed when
    what came is not the result it owes, and the WorkerFailure it sent."""
    try:
        message = worker.conn.recv()
    except (EOFError, OSError):
        return None  # it died mid-message; the sentinel says so next
    except Exception:
        raise _Disturbed("bytes that are not a message (two processes writing at once?)") from None
    payload = _opened(worker, message)
    if isinstance(payload, WorkerFailure):
        raise payload
    result = _checked_result(worker, payload, columns)
    worker.tasks.popleft()
    worker.received += 1
    return result


def _opened(worker, message):
    """The payload of a message, once it is shown to be the worker's own, in turn."""
    if not (isinstance(message, tuple) and len(message) == 3):
        raise _Disturbed("something that is not a message of its worker")
    sender, number, payload = message
    if sender != worker.process.pid:
        raise _Disturbed(
            f"a message from process {sender}, not its worker {worker.process.pid} "
            "(a forked copy of it?)"
        )
    if number != worker.received:
        raise _Disturbed(f"message {number} came when {worker.received} was due (out of order)")
    return payload


def _checked_result(worker, payload, columns):
    """The ChunkResult a RowsInSlab or ChunkResult stands for, rows copied out, once it
    is shown to be the chunk due, whole or cut by a fault."""
    if not worker.tasks:
        raise _Disturbed("a result it was not asked for")
    start, count = worker.tasks[0]
    slot = worker.received % IN_FLIGHT
    if isinstance(payload, RowsInSlab) and isinstance(payload.result, ChunkResult):
        as_due = payload.slot == slot and _is_count(payload.done, count)
        result = payload.result
        if as_due:
            # Copied out now: the worker plays into this slot again once it is sent
            # another chunk, and this one may wait for an earlier chunk to be written.
            rows = worker.slab[slot, : payload.done].copy()
            result = dataclasses.replace(result, rows=rows)
    elif isinstance(payload, ChunkResult):
        result, as_due = payload, count > worker.slab.shape[1]  # a bigger one comes by pipe
    else:
        raise _Disturbed("something that is not a result")
    if not (as_due and result.start == start and _is_whole(result, count, columns)):
        raise _Disturbed(f"not the result of deals {start} to {start + count - 1}, which was due")
    return result


def _is_count(done, count):
    return isinstance(done, int) and 0 <= done <= count


def _is_whole(result, count, columns):
    """Whether a result has rows and logs of one shape, all deals or a fault's reason."""
    rows, logs = result.rows, result.logs
    arrays = isinstance(rows, np.ndarray) and isinstance(logs, np.ndarray)
    if not (arrays and rows.ndim == 2 and logs.ndim == 2):
        return False
    done = rows.shape[0]
    shaped = rows.dtype == np.int32 and logs.dtype == np.int16 and rows.shape[1] == columns
    ended = done == count and result.fault is None or done < count and isinstance(result.fault, str)
    timed = isinstance(result.seconds, float | int)
    return shaped and logs.shape[0] == done and ended and timed


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


__all__ = ["ChunkPlanner", "ChunkResult", "WorkerFailure", "play"]
