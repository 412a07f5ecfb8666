"""Where a run's deals are played: forked local workers (engine.run.pool) or a Dask
cluster (engine.run.cluster). Either way the results come back in deal order."""

from sim.engine.run import pool
from sim.engine.run.job import most_logged_deals

PROBE_DEALS = 256  # deals one local worker plays, at most, to size the chunks of a Dask run
PROBE_SECONDS = 1.0  # or fewer, once they have taken this long


def play_chunks(request, spec, first, stop, note=None):
    """ChunkResults in deal order, deals first .. start + n - 1.

    `stop` (StopSignals) is polled by the local pool, the probe of a Dask run included;
    the rest of a Dask run is interrupted instead. `note(line)`: told of local workers
    lost and replaced."""
    end = request.start + request.n
    if first >= end:
        return
    if request.scheduler is not None:
        yield from _play_on_cluster(request, spec, first, end, stop)
        return
    most = _most_deals(request, pool.MAX_CHUNK)
    workers = min(request.workers, end - first)  # a worker with no deal is never forked
    planner = pool.ChunkPlanner(first, end, workers, most=most)
    yield from pool.play(spec, planner, workers, stop.requested, request.deal_timeout, note)


def _play_on_cluster(request, spec, first, end, stop):
    # Imported here: a local run never loads the cluster code.
    from sim.engine.run import cluster

    played, seconds = 0, 0.0
    for result in _probe(request, spec, first, end, stop):
        yield result
        if result.fault is not None:
            return
        played, seconds = played + result.done, seconds + result.seconds
    if first + played >= end:
        return
    per_deal = max(seconds / played, 1e-7)
    most = _most_deals(request, cluster.MAX_CHUNK)
    size = int(max(1, min(most, cluster.CHUNK_SECONDS / per_deal)))
    chunks = ((s, min(size, end - s)) for s in range(first + played, end, size))
    yield from cluster.play(spec, chunks, request.scheduler, request.workers, request.deal_timeout)


def _probe(request, spec, first, end, stop):
    """The first deals, played by one local worker as a local run plays them (chunks of
    1, 2, 4, ... deals, so a slow policy shows progress; a policy that loops, even
    compiled, or ends its process is stopped and named; Ctrl-C keeps what is done)
    until they have taken PROBE_SECONDS or come to PROBE_DEALS: their speed sizes the
    cluster's chunks."""
    most = _most_deals(request, pool.MAX_CHUNK)
    planner = _ProbePlanner(first, min(end, first + PROBE_DEALS), 1, most=most)
    yield from pool.play(spec, planner, 1, stop.requested, request.deal_timeout)


class _ProbePlanner(pool.ChunkPlanner):
    """The chunks of the probe: no more once the deals played have taken PROBE_SECONDS."""

    def next(self):
        if self.seconds_timed >= PROBE_SECONDS:
            self.end = self.next_start  # the probe ends here, short of its last deal
            return None
        return super().next()


def _most_deals(request, cap):
    """The most deals a chunk may hold: at most `cap`, and so many that their move logs
    fit in memory."""
    width = request.game.max_log(request.rules) if request.log_moves is not None else 0
    return min(cap, most_logged_deals(width) or cap)
