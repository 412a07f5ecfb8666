"""Chunks of deals on a Dask cluster: same chunks, same rows, any number of machines.

Each chunk is one task that returns its rows to the client; tasks are pure functions
of (job spec, chunk), so Dask re-runs the chunks of a worker that dies, and the client
writes each chunk exactly once, in deal order.
"""

import contextlib
import logging
import uuid

from engine.runner import play_chunk

CHUNK_SECONDS = 2.0  # bigger than local chunks: a task costs milliseconds to schedule


def play(spec, chunks, scheduler, workers):
    """Yield (start, rows, logs) for the chunks, in order, computed on the cluster."""
    from distributed import Client, LocalCluster, as_completed

    with contextlib.ExitStack() as stack:
        if scheduler == "local":
            cluster = stack.enter_context(
                LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    dashboard_address=None,
                    # Its chatter on shutdown (after Ctrl-C) would bury our own message.
                    silence_logs=logging.CRITICAL,
                )
            )
            address = cluster.scheduler_address
        else:
            address = scheduler
        client = stack.enter_context(Client(address, set_as_default=False))
        run = uuid.uuid4().hex[:8]
        futures = [
            client.submit(play_chunk, spec, chunk, key=f"sim-{run}-{chunk[0]}", pure=False)
            for chunk in chunks
        ]
        try:
            completed = as_completed(futures, loop=client.loop)
            yield from _in_order(completed, [c[0] for c in chunks])
        finally:
            client.cancel(futures)


def _in_order(completed, starts):
    """Results of completed futures, held back until every earlier chunk has arrived."""
    waiting = {}
    position = 0
    for future in completed:
        start, rows, logs = future.result()
        future.release()
        waiting[start] = (start, rows, logs)
        while position < len(starts) and starts[position] in waiting:
            yield waiting.pop(starts[position])
            position += 1
