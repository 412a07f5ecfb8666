"""Chunks of deals on a Dask cluster: same chunks, same rows, any number of machines.

Each chunk is one task that returns its rows to the client; tasks are pure functions
of (job spec, chunk), so Dask re-runs the chunks of a worker that dies, and the client
writes each chunk exactly once, in deal order. Chunks are submitted a window at a
time, so a run of any length holds only a few of them in memory.
"""

import asyncio
import contextlib
import itertools
import logging
import re
import socket
import uuid
from urllib.parse import urlsplit

from sim.engine.run import pool
from sim.engine.run.job import release_in_order
from sim.engine.run.watch import play_chunk_watched

CHUNK_SECONDS = 2.0  # bigger than local chunks: a task costs milliseconds to schedule
MAX_CHUNK = 1_000_000
WINDOW_PER_WORKER = 4
CONNECT_SECONDS = 5.0
SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")  # those Dask's comms speak


class ClusterError(Exception):
    """A scheduler that cannot be used: a malformed address, or nothing answering there."""


def check_address(address):
    """Refuse, before connecting, an address other than `local` or SCHEME://HOST:PORT."""
    if address == "local":
        return
    parts = urlsplit(address)
    try:
        port = parts.port
    except ValueError:  # not a number, or past 65535
        port = None
    if parts.scheme not in SCHEMES or not parts.hostname or port is None or parts.path:
        raise ClusterError(
            f"--scheduler {address!r} is not a scheduler address: give tcp://HOST:PORT, or local"
        )


def check_reachable(address):
    """Refuse, before any deal is played, a scheduler address nothing useful answers at.

    The address is tried with a plain connection (a refused or silent port fails at
    once, by name, rather than after Dask's retries), then asked who it is: a client
    made against anything but a scheduler would be left half made."""
    check_address(address)
    if address == "local":
        return
    parts = urlsplit(address)
    if parts.scheme != "ucx":
        _try_connection(address, parts.hostname, parts.port)
    if parts.scheme == "tcp":
        _check_is_scheduler(address)


def connect(address):
    """A Dask client of the scheduler at address, or a ClusterError saying why not."""
    check_reachable(address)
    from distributed import Client

    try:
        return Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
    except Exception as error:
        reason = _one_line(error)
        raise ClusterError(f"cannot connect to the Dask scheduler at {address}: {reason}") from None


def _try_connection(address, host, port):
    where = f"cannot reach the Dask scheduler at {address}"
    try:
        socket.create_connection((host, port), timeout=CONNECT_SECONDS).close()
    except socket.gaierror:
        raise ClusterError(f"{where}: unknown host {host!r}") from None
    except TimeoutError:
        raise ClusterError(f"{where}: no answer within {CONNECT_SECONDS:g} s") from None
    except OSError as error:
        raise ClusterError(f"{where}: {(error.strerror or str(error)).lower()}") from None


def _check_is_scheduler(address):
    from distributed.comm import connect as open_comm

    async def identity():
        comm = await open_comm(address, timeout=CONNECT_SECONDS)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await asyncio.wait_for(comm.read(), CONNECT_SECONDS)
        finally:
            comm.abort()

    try:
        # One deadline for the whole exchange: a listener that is not Dask may accept
        # and then say nothing, which Dask's own handshake would wait on for ever.
        reply = asyncio.run(asyncio.wait_for(identity(), CONNECT_SECONDS))
    except Exception:
        reply = None
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        raise ClusterError(f"{address} answers, but is not a Dask scheduler")


def _one_line(error):
    return re.sub(r"\s+", " ", str(error)).strip() or type(error).__name__


def play(spec, chunks, scheduler, workers, deal_timeout):
    """Yield ChunkResults for the chunks (an iterator), in order, computed on the cluster.

    Each task watches its deals (engine.run.watch); a deal that makes no progress and
    does not stop when asked ends the run with the run's workers restarted."""
    check_address(scheduler)
    from distributed import as_completed

    with contextlib.ExitStack() as stack:
        stack.enter_context(_quiet_dask_logs())
        client = stack.enter_context(connect(_scheduler_address(stack, scheduler, workers)))
        run = uuid.uuid4().hex[:8]
        window = WINDOW_PER_WORKER * max(workers, len(client.scheduler_info()["workers"]))

        counts = {}  # deals of each chunk, by its first deal

        def submit(chunk):
            key = f"sim-{run}-{chunk[0]}"
            counts[chunk[0]] = chunk[1]
            return client.submit(play_chunk_watched, spec, chunk, deal_timeout, key=key, pure=False)

        def played_here(start):
            return _played_here(spec, (start, counts[start]), deal_timeout)

        chunks = iter(chunks)
        first = list(itertools.islice(chunks, window))
        if not first:
            return
        completed = as_completed([submit(c) for c in first], loop=client.loop)
        try:
            yield from _in_order(client, completed, chunks, submit, played_here, first[0][0])
        finally:
            client.cancel(list(completed.futures))


@contextlib.contextmanager
def _quiet_dask_logs():
    """Dask's own log lines (a comm closed as the run stops, say) kept off the terminal
    until the run's cluster and client are gone: the run says in one line what befell."""
    logger = logging.getLogger("distributed")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def _scheduler_address(stack, scheduler, workers):
    """The address to connect to; for `local`, a LocalCluster started on `stack`."""
    if scheduler != "local":
        return scheduler
    from distributed import LocalCluster

    cluster = stack.enter_context(
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            # Any free port: Dask's default, 8787, may be taken (by another run), and
            # that warning would reach the user's terminal.
            dashboard_address=":0",
            # Its chatter on shutdown (after Ctrl-C) would bury our own message.
            silence_logs=logging.CRITICAL,
            preload=["sim.engine.run.quiet_worker"],
        )
    )
    return cluster.scheduler_address


def _in_order(client, completed, chunks, submit, played_here, position):
    """Results of completed futures, held back until every earlier chunk has arrived.

    Each result that arrives lets one more chunk in, so the window stays full. A chunk
    whose task killed every worker Dask gave it to is played here (played_here)."""
    from distributed import KilledWorker

    waiting = {}
    for future in completed:
        if future.cancelled():  # a chunk after a deal that stalled (_restart_players)
            continue
        try:
            results = [future.result()]
        except KilledWorker:
            results = list(played_here(_chunk_start(future)))
        if results[0].stalled:
            _restart_players(client, future, list(completed.futures))
        future.release()
        waiting |= {result.start: result for result in results}
        chunk = next(chunks, None) if results[-1].fault is None else None
        if chunk is not None:
            completed.add(submit(chunk))
        position = yield from release_in_order(waiting, position)
        if position is None:
            return


def _played_here(spec, chunk, deal_timeout):
    """The ChunkResults of a chunk played by one local worker, as a local run plays it.

    Dask says only that the chunk's task ended its workers; played here, the deal that
    does it is found, tried again and named, as locally, with every deal before it kept.
    A chunk that plays through (a worker lost for another reason) is the same chunk."""
    start, count = chunk
    planner = pool.ChunkPlanner(start, start + count, 1)
    return pool.play(spec, planner, 1, lambda: False, deal_timeout)


def _restart_players(client, stalled, futures):
    """Restart the worker that gave up on a deal still in play in a thread there
    (engine.run.watch), and those of the chunks after it, which are cancelled: the run
    stops there, and they could be stuck the same way. Chunks before it are kept: a
    worker of theirs that is restarted plays them again."""
    after = [f for f in futures if _chunk_start(f) > _chunk_start(stalled)]
    keys = {f.key for f in after} | {stalled.key}
    players = set()
    with contextlib.suppress(Exception):
        for holders in client.who_has([stalled, *after]).values():
            players.update(holders)
        for worker, processing in client.processing().items():
            if keys.intersection(map(str, processing)):
                players.add(worker)
    # Cancelled first (the stalled one's result is read), so that none of them is played
    # again when its worker is restarted.
    client.cancel([stalled, *after])
    with contextlib.suppress(Exception):  # a worker gone already needs no restart
        client.restart_workers(sorted(players), raise_for_error=False)


def _chunk_start(future):
    return int(future.key.rsplit("-", 1)[1])
