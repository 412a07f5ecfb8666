"""Where a run's deals are played: forked local workers (engine.run.pool) or a Dask
cluster (engine.run.cluster). Either way the results come back in deal order."""

from sim.engine.run import pool
from sim.engine.run.job import most_logged_deals
from sim.engine.run.watch import play_chunk_watched

PROBE_DEALS = 256  # deals the parent plays, at most, to size the chunks of a Dask run
PROBE_SECONDS = 1.0  # or fewer, once they have taken this long


def play_chunks(request, spec, first, stop):
    """ChunkResults in deal order, deals first .. start + n - 1.

    `stop` (StopSignals) is polled by the local pool; a Dask run is interrupted instead."""
    end = request.start + request.n
    if first >= end:
        return
    if request.scheduler:
        yield from _play_on_cluster(request, spec, first, end)
        return
    most = min(pool.MAX_CHUNK, _most_deals(request))
    planner = pool.ChunkPlanner(first, end, request.workers, most=most)
    yield from pool.play(spec, planner, request.workers, stop.requested, request.deal_timeout)


def _play_on_cluster(request, spec, first, end):
    # Imported here: a local run never loads the cluster code.
    from sim.engine.run import cluster

    played, seconds = 0, 0.0
    for result in _probe(request, spec, first, end):
        yield result
        if result.fault is not None:
            return
        played, seconds = played + result.done, seconds + result.seconds
    if first + played >= end:
        return
    per_deal = max(seconds / played, 1e-7)
    most = min(cluster.MAX_CHUNK, _most_deals(request))
    size = int(max(1, min(most, cluster.CHUNK_SECONDS / per_deal)))
    chunks = ((s, min(size, end - s)) for s in range(first + played, end, size))
    yield from cluster.play(spec, chunks, request.scheduler, request.workers, request.deal_timeout)


def _probe(request, spec, first, end):
    """The first deals, played here in chunks of 1, 2, 4, ... deals (so that a slow
    policy shows progress, and Ctrl-C keeps all but the chunk in play) until they have
    taken PROBE_SECONDS or come to PROBE_DEALS: their speed sizes the cluster's chunks."""
    start, size, seconds = first, 1, 0.0
    while start < min(end, first + PROBE_DEALS) and seconds < PROBE_SECONDS:
        count = min(size, end - start, first + PROBE_DEALS - start, _most_deals(request))
        result = play_chunk_watched(spec, (start, count), request.deal_timeout)
        yield result
        if result.fault is not None:
            return
        start, size, seconds = start + count, 2 * size, seconds + result.seconds


def _most_deals(request):
    """The most deals a chunk may hold: their move logs must fit in memory."""
    width = request.game.max_log(request.rules) if request.log_moves is not None else 0
    return most_logged_deals(width) or pool.MAX_CHUNK
