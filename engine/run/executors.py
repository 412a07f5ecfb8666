"""Where a run's deals are played: forked local workers (engine.run.pool) or a Dask
cluster (engine.run.cluster). Either way the results come back in deal order."""

from sim.engine.run import pool
from sim.engine.run.watch import play_chunk_watched

PROBE_DEALS = 256  # deals the parent plays to size the chunks of a Dask run


def play_chunks(request, spec, first, stop):
    """ChunkResults in deal order, deals first .. start + n - 1.

    `stop` (StopSignals) is polled by the local pool; a Dask run is interrupted instead."""
    end = request.start + request.n
    if first >= end:
        return
    if request.scheduler:
        yield from _play_on_cluster(request, spec, first, end)
        return
    planner = pool.ChunkPlanner(first, end, request.workers)
    yield from pool.play(spec, planner, request.workers, stop.requested, request.deal_timeout)


def _play_on_cluster(request, spec, first, end):
    # Imported here: a local run never loads the cluster code.
    from sim.engine.run import cluster

    probe = min(PROBE_DEALS, end - first)
    result = play_chunk_watched(spec, (first, probe), request.deal_timeout)
    yield result
    if result.fault is not None or first + probe >= end:
        return
    per_deal = max(result.seconds / probe, 1e-7)
    size = int(max(1, min(cluster.MAX_CHUNK, cluster.CHUNK_SECONDS / per_deal)))
    chunks = ((s, min(size, end - s)) for s in range(first + probe, end, size))
    yield from cluster.play(spec, chunks, request.scheduler, request.workers, request.deal_timeout)
